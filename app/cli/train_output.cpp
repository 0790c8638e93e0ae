// See train_output.h.
#include "train_output.h"

#include <cmath>
#include <cstdio>

namespace depthlab::cli {

namespace {

std::string formatEta(double s) {
  char buf[32];
  int t = static_cast<int>(s + 0.5);
  std::snprintf(buf, sizeof(buf), "%d:%02d:%02d", t / 3600, t / 60 % 60, t % 60);
  return buf;
}

}  // namespace

std::string trainLossText(const experiment::MemberProgress& m) {
  if (m.step <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4f", m.lossTrain);
  return buf;
}

std::string progressLine(const experiment::GroupProgress& p) {
  std::string line = "step " + std::to_string(p.step) + "/" + std::to_string(p.totalSteps);
  for (const auto& m : p.members) {
    char buf[128];
    std::snprintf(buf, sizeof(buf), " | %s %s %.0f tok/s%s", m.scheme.c_str(),
                  trainLossText(m).c_str(), m.tokensPerSecond,
                  m.status == store::RunStatus::Diverged ? " DIVERGED" : "");
    line += buf;
  }
  return line + " | ETA " + formatEta(p.etaSeconds);
}

std::string costLine(const std::string& line, bool warning) {
  return std::string("cost   ") + (warning ? "WARNING: " : "") + line;
}

std::string summaryText(const experiment::GroupResult& r) {
  char buf[512];
  if (r.probeBesideSeconds > 0) {
    std::snprintf(buf, sizeof(buf),
                  "group %s (%.1f s, of which depth probes %.1f s; %.1f s more of them ran beside "
                  "training on a spare core)\n",
                  r.groupName.c_str(), r.seconds, r.probeSeconds, r.probeBesideSeconds);
  } else {
    std::snprintf(buf, sizeof(buf), "group %s (%.1f s, of which depth probes %.1f s)\n",
                  r.groupName.c_str(), r.seconds, r.probeSeconds);
  }
  std::string out = buf;
  std::snprintf(buf, sizeof(buf), "%-6s %-18s %-10s %8s %11s %10s %10s\n", "RUN", "SCHEME",
                "STATUS", "STEPS", "LOSS_TRAIN", "LOSS_VAL", "PPL_VAL");
  out += buf;
  for (const auto& m : r.members) {
    std::snprintf(buf, sizeof(buf), "%-6lld %-18s %-10s %8lld %11s %10s %10s\n",
                  static_cast<long long>(m.runId), m.scheme.c_str(), store::toString(m.status),
                  static_cast<long long>(m.step), trainLossText(m).c_str(),
                  m.lossVal ? std::to_string(*m.lossVal).substr(0, 8).c_str() : "-",
                  m.lossVal ? std::to_string(std::exp(*m.lossVal)).substr(0, 8).c_str() : "-");
    out += buf;
  }
  return out;
}

nlohmann::json summaryJson(const experiment::GroupResult& r) {
  nlohmann::json j;
  j["group"] = r.groupName;
  j["seconds"] = r.seconds;
  j["probe_seconds"] = r.probeSeconds;
  j["probe_beside_seconds"] = r.probeBesideSeconds;
  for (const auto& m : r.members) {
    j["runs"].push_back(
        {{"run_id", m.runId},
         {"scheme", m.scheme},
         {"status", store::toString(m.status)},
         {"steps", m.step},
         {"loss_train", m.step > 0 ? nlohmann::json(m.lossTrain) : nlohmann::json()},
         {"loss_val", m.lossVal ? nlohmann::json(*m.lossVal) : nlohmann::json()},
         {"diverged_at", m.divergedAt ? nlohmann::json(*m.divergedAt) : nlohmann::json()},
         {"unfinished_because",
          m.unfinishedBecause.empty() ? nlohmann::json() : nlohmann::json(m.unfinishedBecause)}});
  }
  return j;
}

}  // namespace depthlab::cli
