// String forms of the run store's enums; see store_types.h.
#include "store/store_types.h"

#include <algorithm>

namespace depthlab::store {

const char* toString(RunStatus s) {
  switch (s) {
    case RunStatus::Queued: return "queued";
    case RunStatus::Running: return "running";
    case RunStatus::Finished: return "finished";
    case RunStatus::Stopped: return "stopped";
    case RunStatus::Diverged: return "diverged";
    case RunStatus::Crashed: return "crashed";
  }
  return "crashed";
}

std::optional<RunStatus> runStatusFromString(const std::string& s) {
  for (auto st : {RunStatus::Queued, RunStatus::Running, RunStatus::Finished, RunStatus::Stopped,
                  RunStatus::Diverged, RunStatus::Crashed}) {
    if (s == toString(st)) return st;
  }
  return std::nullopt;
}

const char* toString(EventLevel l) {
  switch (l) {
    case EventLevel::Info: return "info";
    case EventLevel::Warning: return "warning";
    case EventLevel::Error: return "error";
  }
  return "info";
}

std::optional<double> trainingSeconds(const RunInfo& r) {
  if (!r.startedAt) return std::nullopt;
  const double end = r.finishedAt ? *r.finishedAt : r.heartbeatAt.value_or(*r.startedAt);
  return std::max(0.0, end - *r.startedAt - r.pausedSeconds);
}

}  // namespace depthlab::store
