// See sweep.h.
#include "experiment/sweep.h"

#include <cmath>
#include <sstream>

namespace depthlab::experiment {

namespace {
template <typename T, typename Parse>
std::vector<T> parseList(const std::string& text, const std::string& field, Parse parse) {
  std::vector<T> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto b = item.find_first_not_of(" \t");
    if (b == std::string::npos) continue;
    item = item.substr(b, item.find_last_not_of(" \t") - b + 1);
    try {
      size_t used = 0;
      T v = parse(item, &used);
      if (used != item.size()) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      throw ConfigError(field + ": '" + item + "' is not a number");
    }
  }
  return out;
}
std::string shortNumber(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
}  // namespace

std::vector<int> parseIntList(const std::string& text, const std::string& field) {
  return parseList<int>(text, field, [](const std::string& s, size_t* n) { return std::stoi(s, n); });
}

std::vector<double> parseDoubleList(const std::string& text, const std::string& field) {
  return parseList<double>(text, field, [](const std::string& s, size_t* n) { return std::stod(s, n); });
}

std::vector<ExperimentConfig> expandSweep(const ExperimentConfig& base, const SweepSpec& sweep) {
  const std::vector<int> depths = sweep.depths.empty() ? std::vector<int>{base.model.nLayers} : sweep.depths;
  const std::vector<int> widths = sweep.widths.empty() ? std::vector<int>{base.model.dModel} : sweep.widths;
  const std::vector<double> lrs = sweep.lrs.empty() ? std::vector<double>{base.optim.lr} : sweep.lrs;
  const int seeds = std::max(1, sweep.seeds);
  const std::string stem = base.name.empty() ? (base.preset.empty() ? "sweep" : base.preset) : base.name;
  std::vector<ExperimentConfig> out;
  for (int depth : depths) {
    for (int width : widths) {
      for (double lr : lrs) {
        for (int s = 0; s < seeds; ++s) {
          ExperimentConfig c = base;
          c.model.nLayers = depth;
          if (width != base.model.dModel) {
            c.model.dModel = width;
            c.model.dFF = static_cast<int>(std::lround(width * 8.0 / 3.0 / 4.0)) * 4;
          }
          c.optim.lr = lr;
          c.run.seed = base.run.seed + s;
          std::string name = stem;
          if (depths.size() > 1) name += "-L" + std::to_string(depth);
          if (widths.size() > 1) name += "-d" + std::to_string(width);
          if (lrs.size() > 1) name += "-lr" + shortNumber(lr);
          if (seeds > 1) name += "-s" + std::to_string(c.run.seed);
          c.name = name;
          auto issues = validate(c);
          if (!issues.empty()) throw ConfigError("sweep group " + name + ": " + issues.front().message);
          out.push_back(std::move(c));
        }
      }
    }
  }
  return out;
}

}  // namespace depthlab::experiment
