// See checkpoint_series.h.
#include "hf/checkpoint_series.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "hf/hf_config.h"

namespace depthlab::hf {

namespace fs = std::filesystem;

namespace {

std::optional<nlohmann::json> readJson(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

/// "4B" -> 4e9, "4194304" -> 4194304, "1.5T" -> 1.5e12.
int64_t tokenCount(const std::string& digits, const std::string& suffix) {
  double v = std::stod(digits);
  const std::string units = "KMBT";
  if (!suffix.empty()) v *= std::pow(1000.0, static_cast<double>(units.find(suffix[0]) + 1));
  return static_cast<int64_t>(std::llround(v));
}

}  // namespace

std::optional<SeriesCheckpoint> stepFromName(const std::string& name) {
  static const std::regex step(
      R"((?:^|[-_.])(?:step|checkpoint|iter|global_step)[-_]?(\d+)(?=$|[-_.]))", std::regex::icase);
  static const std::regex tokens(R"((?:^|[-_.])tokens[-_]?(\d+(?:\.\d+)?)([KMBT])?(?=$|[-_.]))",
                                 std::regex::icase);
  std::smatch m;
  if (!std::regex_search(name, m, step)) return std::nullopt;
  SeriesCheckpoint c;
  try {
    c.step = std::stoll(m[1].str());
  } catch (const std::out_of_range&) {
    return std::nullopt;
  }
  c.stepFrom = "the folder's name";
  if (std::regex_search(name, m, tokens)) {
    std::string suffix = m[2].str();
    std::transform(suffix.begin(), suffix.end(), suffix.begin(), ::toupper);
    c.tokens = tokenCount(m[1].str(), suffix);
  }
  return c;
}

SeriesCheckpoint describeCheckpoint(const std::string& dirArg) {
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(dirArg), ec);
  if (!fs::is_regular_file(dir / "config.json", ec)) {
    throw HfModelError("'" + dirArg + "' holds no config.json: not a checkpoint folder");
  }
  const auto state = readJson(dir / "trainer_state.json");
  SeriesCheckpoint c;
  if (auto named = stepFromName(dir.filename().string())) {
    c = *named;
  } else if (state && state->contains("global_step") &&
             (*state)["global_step"].is_number_integer()) {
    c.step = (*state)["global_step"].get<int64_t>();
    c.stepFrom = "trainer_state.json";
  } else if (const auto cfg = readJson(dir / "config.json");
             cfg && cfg->contains("depthlab") && (*cfg)["depthlab"].is_object() &&
             (*cfg)["depthlab"].value("step", int64_t{-1}) >= 0) {
    c.step = (*cfg)["depthlab"]["step"].get<int64_t>();
    c.stepFrom = "config.json (depthlab export-hf)";
  } else {
    throw HfModelError("cannot tell the training step of '" + dir.string() +
                       "': name the folder stepN or checkpoint-N, or keep Trainer's "
                       "trainer_state.json in it");
  }
  if (c.step < 0) throw HfModelError("'" + dir.string() + "' gives a negative step");
  if (!c.tokens && state && state->contains("num_input_tokens_seen") &&
      (*state)["num_input_tokens_seen"].is_number() &&
      (*state)["num_input_tokens_seen"].get<double>() > 0) {
    c.tokens = (*state)["num_input_tokens_seen"].get<int64_t>();
  }
  c.dir = dir.string();
  return c;
}

std::vector<SeriesCheckpoint> findSeries(const std::vector<std::string>& paths) {
  std::vector<SeriesCheckpoint> out;
  std::error_code ec;
  for (const auto& p : paths) {
    if (!fs::is_directory(p, ec)) throw HfModelError("'" + p + "' is not a folder");
    if (fs::is_regular_file(fs::path(p) / "config.json", ec)) {
      out.push_back(describeCheckpoint(p));
      continue;
    }
    std::vector<fs::path> subs;
    for (const auto& e : fs::directory_iterator(p, ec)) {
      if (e.is_directory(ec) && fs::is_regular_file(e.path() / "config.json", ec)) {
        subs.push_back(e.path());
      }
    }
    if (subs.empty()) {
      throw HfModelError("'" + p +
                         "' holds no checkpoint: neither a config.json nor subfolders "
                         "with one");
    }
    for (const auto& s : subs) out.push_back(describeCheckpoint(s.string()));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.step != b.step ? a.step < b.step : a.dir < b.dir;
  });
  for (size_t i = 1; i < out.size(); ++i) {
    if (out[i].step == out[i - 1].step && out[i].dir != out[i - 1].dir) {
      throw HfModelError("two checkpoints of step " + std::to_string(out[i].step) + ": '" +
                         out[i - 1].dir + "' and '" + out[i].dir + "'; keep one of them");
    }
  }
  out.erase(std::unique(out.begin(), out.end(),
                        [](const auto& a, const auto& b) { return a.dir == b.dir; }),
            out.end());
  return out;
}

}  // namespace depthlab::hf
