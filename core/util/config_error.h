// ConfigError: a config (a section of it, or the whole experiment) that cannot be used, with a
// message that names the offending field. Thrown by every module that owns a config section.
#pragma once

#include <stdexcept>

namespace depthlab::util {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace depthlab::util
