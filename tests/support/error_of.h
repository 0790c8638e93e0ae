// errorOf: the message of the exception a call throws ("" when it throws none), for tests that
// check what an error says.
#pragma once

#include <exception>
#include <functional>
#include <string>

namespace depthlab::test {

inline std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace depthlab::test
