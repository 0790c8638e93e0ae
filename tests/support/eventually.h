// Waiting in tests for what another thread does: polls a condition rather than sleeping a fixed
// time, which a loaded machine (CI) can outrun.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace depthlab::test {

/// Polls `done` every 10 ms until it holds or `seconds` pass; returns its last value.
inline bool eventually(const std::function<bool()>& done, double seconds = 5) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!done() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

}  // namespace depthlab::test
