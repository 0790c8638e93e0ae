// See tensorboard_runs.h.
#include "experiment/tensorboard_runs.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "experiment/experiment_config.h"
#include "experiment/group_names.h"
#include "model/scheme_catalogue.h"
#include "store/metric_catalogue.h"
#include "util/helper_program.h"
#include "util/process_identity.h"
#include "util/remove_tree.h"
#include "util/run_command.h"

namespace depthlab::experiment {

namespace fs = std::filesystem;

namespace {

/// The depthlab-tensorboard helper (util::helperProgram); throws saying how to get it.
std::string helper() {
#ifdef DEPTHLAB_TENSORBOARD_BUILT
  const std::string built = DEPTHLAB_TENSORBOARD_BUILT;
#else
  const std::string built;
#endif
  const auto program = util::helperProgram("depthlab-tensorboard", "DEPTHLAB_TENSORBOARD", built);
  if (!program.empty()) return program;
  throw std::runtime_error(
      "TensorBoard files need the depthlab-tensorboard helper, built where "
      "libprotobuf-dev and protobuf-compiler are installed (make build "
      "installs them)");
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string safeName(const std::string& s) {
  std::string out;
  for (char c : s)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  return out;
}

nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(); }

/// The lines of one run for the helper: every scalar, every per-layer value.
size_t writeRunLines(store::RunStore& store, const store::RunInfo& run, std::ostream& out) {
  size_t n = 0;
  const double wall = run.createdAt;
  for (const auto& key : store.scalarKeys(run.id)) {
    for (const auto& p : store.scalarSeries(run.id, key)) {
      out << nlohmann::json{{"step", p.step},
                            {"wall", wall},
                            {"tag", key},
                            {"value", number(p.value)}}
                 .dump()
          << "\n";
      ++n;
    }
  }
  for (const auto& metric : store.layerMetrics(run.id)) {
    const auto s = store.layerSeries(run.id, metric);
    const auto L = static_cast<size_t>(s.nLayers);
    for (size_t i = 0; i < s.steps.size(); ++i) {
      for (size_t l = 0; l < L; ++l) {
        char tag[160];
        std::snprintf(tag, sizeof(tag), "%s/layer_%02zu", metric.c_str(), l + 1);
        out << nlohmann::json{{"step", s.steps[i]},
                              {"wall", wall},
                              {"tag", tag},
                              {"value", number(s.values[i * L + l])}}
                   .dump()
            << "\n";
        ++n;
      }
    }
  }
  return n;
}

}  // namespace

TensorBoardExport exportToTensorBoard(store::RunStore& store, const std::vector<int64_t>& runIds,
                                      const std::string& dir,
                                      const std::vector<TensorBoardImage>& images) {
  const std::string program = helper();
  std::vector<store::RunInfo> runs;
  for (int64_t id : runIds) {
    auto r = store.run(id);
    if (!r) throw std::runtime_error("no run with id " + std::to_string(id));
    runs.push_back(*r);
  }
  TensorBoardExport out;
  const auto me = util::currentProcess();
  for (const auto& run : runs) {
    const fs::path folder = fs::path(dir) / (std::to_string(run.id) + "-" + safeName(run.name));
    fs::create_directories(folder);
    const std::string lines = (folder / ".depthlab-lines.jsonl").string();
    {
      std::ofstream f(lines);
      out.values += writeRunLines(store, run, f);
      for (const auto& image : images) {
        if (image.runId != run.id) continue;
        f << nlohmann::json{{"step", image.step},
                            {"wall", run.createdAt},
                            {"tag", image.tag},
                            {"png", fs::absolute(image.png).string()}}
                 .dump()
          << "\n";
        ++out.images;
      }
      if (!f) throw std::runtime_error("cannot write '" + lines + "'");
    }
    const std::string file =
        (folder / ("events.out.tfevents." + std::to_string(static_cast<int64_t>(run.createdAt)) +
                   "." + safeName(me.host) + ".depthlab"))
            .string();
    util::CommandOptions o;
    o.stdinFile = lines;
    o.stderrMode = util::Stderr::Capture;
    const auto r = util::runProgram({program, "write", file}, o);
    util::removeTree(lines);
    if (r.status != 0) throw std::runtime_error("writing '" + file + "' failed: " + r.errors);
    out.files.push_back(file);
  }
  return out;
}

std::string scalarKeyOfTag(const std::string& tagArg) {
  static const std::map<std::string, std::string> aliases = {
      {"loss", metrics::kLossTrain},
      {"train/loss", metrics::kLossTrain},
      {"train_loss", metrics::kLossTrain},
      {"loss/train", metrics::kLossTrain},
      {"training_loss", metrics::kLossTrain},
      {"train/loss_step", metrics::kLossTrain},
      {"eval/loss", metrics::kLossVal},
      {"eval_loss", metrics::kLossVal},
      {"val/loss", metrics::kLossVal},
      {"val_loss", metrics::kLossVal},
      {"loss/val", metrics::kLossVal},
      {"validation_loss", metrics::kLossVal},
      {"loss/validation", metrics::kLossVal},
      {"valid/loss", metrics::kLossVal},
      {"lr", metrics::kLr},
      {"learning_rate", metrics::kLr},
      {"train/learning_rate", metrics::kLr},
      {"train/lr", metrics::kLr},
      {"grad_norm", metrics::kGradNorm},
      {"train/grad_norm", metrics::kGradNorm}};
  const std::string tag = lower(tagArg);
  if (const auto it = aliases.find(tag); it != aliases.end()) return it->second;
  if (metrics::find(tagArg, metrics::Kind::Scalar)) return tagArg;  // the lab's own export
  return "";
}

namespace {

struct ReadRun {
  std::map<std::string, std::map<int64_t, double>> scalars;  // key -> step -> value
  std::map<std::string, std::map<int64_t, std::map<int64_t, double>>>
      layers;  // metric -> step -> index -> value
  TensorBoardImport result;
};

void readEventFile(const std::string& program, const std::string& file, ReadRun& run) {
  util::CommandOptions o;
  o.stderrMode = util::Stderr::Capture;
  const auto r = util::runProgram({program, "read", file}, o);
  static const std::regex layerTag(R"(^(.+?)[/_.-]layer[_-]?(\d+)$)", std::regex::icase);
  std::istringstream in(r.output);
  for (std::string text; std::getline(in, text);) {
    const auto line = nlohmann::json::parse(text, nullptr, false);
    if (!line.is_object()) continue;
    if (line.contains("error")) throw std::runtime_error(line["error"].get<std::string>());
    if (line.contains("warning")) {
      run.result.warnings.push_back(line["warning"].get<std::string>());
      continue;
    }
    const std::string tag = line.at("tag").get<std::string>();
    const int64_t step = line.at("step").get<int64_t>();
    const double value = line["value"].is_null() ? NAN : line["value"].get<double>();
    std::smatch m;
    if (std::regex_match(tag, m, layerTag) &&
        metrics::find(lower(m[1].str()), metrics::Kind::PerLayer)) {
      run.layers[lower(m[1].str())][step][std::stoll(m[2].str())] = value;
      run.result.tags[m[1].str() + "/layer_*"] = lower(m[1].str());
    } else if (const auto key = scalarKeyOfTag(tag); !key.empty()) {
      run.scalars[key][step] = value;
      run.result.tags[tag] = key;
    } else if (std::find(run.result.skippedTags.begin(), run.result.skippedTags.end(), tag) ==
               run.result.skippedTags.end()) {
      run.result.skippedTags.push_back(tag);
    }
  }
  if (r.status != 0 && r.status != 3) {
    throw std::runtime_error("reading '" + file + "' failed: " + r.errors.substr(0, 400));
  }
}

/// The rows of what was read: scalars as they are, per-layer tags as one series a metric
/// (layer indices from 0 or from 1, as the tags count them; a missing layer is NaN).
store::WriteBatch rowsOf(const ReadRun& run, int& nLayers, size_t& values) {
  store::WriteBatch b;
  for (const auto& [key, points] : run.scalars) {
    for (const auto& [step, v] : points) b.scalar(step, key, v), ++values;
  }
  for (const auto& [metric, steps] : run.layers) {
    int64_t lo = INT64_MAX, hi = 0;
    for (const auto& [step, byIndex] : steps) {
      lo = std::min(lo, byIndex.begin()->first);
      hi = std::max(hi, byIndex.rbegin()->first);
    }
    const int64_t first = lo == 0 ? 0 : 1;  // layer_00 ... or layer_01 ...
    const auto L = static_cast<size_t>(hi - first + 1);
    nLayers = std::max(nLayers, static_cast<int>(L));
    for (const auto& [step, byIndex] : steps) {
      std::vector<float> v(L, NAN);
      for (const auto& [index, value] : byIndex)
        v[static_cast<size_t>(index - first)] = static_cast<float>(value);
      values += byIndex.size();
      b.layer(step, metric, std::move(v));
    }
  }
  return b;
}

std::vector<std::string> eventFiles(const fs::path& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file(ec) && e.path().filename().string().find("tfevents") != std::string::npos)
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());  // their names begin with the time they were started
  return files;
}

}  // namespace

std::vector<TensorBoardImport> importTensorBoard(store::RunStore& store, const std::string& dirArg,
                                                 const std::string& name,
                                                 const std::string& scheme) {
  if (!model::findScheme(scheme)) throw std::runtime_error("unknown scheme '" + scheme + "'");
  std::error_code ec;
  const fs::path dir = fs::weakly_canonical(fs::absolute(dirArg), ec);
  if (!fs::is_directory(dir, ec)) throw std::runtime_error("'" + dirArg + "' is not a folder");
  std::vector<std::pair<fs::path, std::vector<std::string>>> folders;  // a run each
  if (auto own = eventFiles(dir); !own.empty()) {
    folders.emplace_back(dir, std::move(own));
  } else {
    std::vector<fs::path> subs;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_directory(ec)) subs.push_back(e.path());
    std::sort(subs.begin(), subs.end());
    for (const auto& s : subs) {
      if (auto files = eventFiles(s); !files.empty()) folders.emplace_back(s, std::move(files));
    }
  }
  if (folders.empty()) {
    throw std::runtime_error("'" + dirArg +
                             "' holds no TensorBoard event file "
                             "(events.out.tfevents.*), nor do its subfolders");
  }
  const std::string program = helper();
  std::vector<ReadRun> read(folders.size());
  for (size_t i = 0; i < folders.size();
       ++i) {  // everything read first: a corrupt file writes nothing
    for (const auto& f : folders[i].second) readEventFile(program, f, read[i]);
    if (read[i].scalars.empty() && read[i].layers.empty()) {
      throw std::runtime_error("'" + folders[i].first.string() +
                               "' holds no scalar the lab "
                               "reads (tags seen: " +
                               std::to_string(read[i].result.skippedTags.size()) +
                               "); a loss is read from tags such as loss, train/loss, eval/loss");
    }
  }
  std::vector<TensorBoardImport> out;
  for (size_t i = 0; i < folders.size(); ++i) {
    auto& r = read[i].result;
    r.source = folders[i].first.string();
    int nLayers = 0;
    const auto rows = rowsOf(read[i], nLayers, r.values);
    ExperimentConfig c;
    const std::string base = name.empty() ? dir.filename().string() : name;
    c.name = folders.size() == 1 ? base : base + "/" + folders[i].first.filename().string();
    c.schemes = {scheme};
    if (nLayers > 0) c.model.nLayers = nLayers;
    auto j = toJson(c);
    j["tensorboard"] = {{"source", r.source}, {"files", folders[i].second}, {"tags", r.tags}};
    store::NewRun run;
    run.name = c.name;
    run.scheme = scheme;
    run.configJson = j.dump();
    run.device = "TensorBoard import";
    r.runId = store
                  .createGroup(
                      {run},
                      [&](const std::set<std::string>& taken) {
                        return uniqueGroupName("tb-" + c.name, taken);
                      },
                      [](const std::string&, store::NewRun&) {})
                  .second.front();
    store.write(r.runId, rows);
    store::WriteBatch note;
    note.event(std::nullopt, store::EventLevel::Info,
               "imported " + std::to_string(r.values) + " values of " +
                   std::to_string(r.tags.size()) + " tag(s) from " + r.source);
    store.write(r.runId, note);
    store.finishRun(r.runId, store::RunStatus::Finished);
    store.addTag(r.runId, "tensorboard");
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace depthlab::experiment
