// Named scheme sets; see scheme_sets.h.
#include "model/scheme_sets.h"

#include <algorithm>

#include "model/scheme_catalogue.h"

namespace depthlab::model {

namespace {

std::vector<SchemeSet> makeSets() {
  std::vector<std::string> all;
  for (const auto& e : schemeCatalogue()) {
    if (!e.experimental) all.push_back(e.id);
  }
  std::vector<SchemeSet> sets;
  sets.push_back({"all-depth-fixes", "All depth fixes",
                  "every scheme of the catalogue (not the experimental ones) at one shape and seed",
                  all});
  sets.push_back({"paper", "The paper's schemes",
                  "the normalisations arXiv:2502.05795 compares: Pre-LN, LNS, Post-LN, Mix-LN, "
                  "DeepNorm, Sandwich-LN",
                  {"pre_ln", "lns", "post_ln", "mix_ln", "deepnorm", "sandwich"}});
  return sets;
}

}  // namespace

const std::vector<SchemeSet>& schemeSets() {
  static const std::vector<SchemeSet> s = makeSets();
  return s;
}

const SchemeSet* findSchemeSet(const std::string& id) {
  for (const auto& s : schemeSets()) {
    if (s.id == id) return &s;
  }
  return nullptr;
}

std::vector<std::string> expandSchemeSets(const std::vector<std::string>& ids) {
  std::vector<std::string> out;
  auto add = [&out](const std::string& id) {
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  };
  for (const auto& id : ids) {
    if (const SchemeSet* set = findSchemeSet(id)) {
      for (const auto& s : set->schemes) add(s);
    } else {
      add(id);
    }
  }
  return out;
}

}  // namespace depthlab::model
