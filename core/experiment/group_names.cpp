// See group_names.h.
#include "experiment/group_names.h"

namespace depthlab::experiment {

std::string uniqueGroupName(const std::string& base, const std::set<std::string>& taken) {
  const std::string stem = base.empty() ? std::string("group") : base;
  if (!taken.count(stem)) return stem;
  for (int n = 2;; ++n) {
    std::string candidate = stem + " " + std::to_string(n);
    if (!taken.count(candidate)) return candidate;
  }
}

std::string defaultRunName(const std::string& group, const std::string& scheme, int64_t seed) {
  return group + " " + scheme + " s" + std::to_string(seed);
}

bool isRenamed(const std::string& name, const std::string& group, const std::string& scheme,
               int64_t seed) {
  return !name.empty() && name != defaultRunName(group, scheme, seed);
}

}  // namespace depthlab::experiment
