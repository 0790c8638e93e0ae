// See series_import.h. The series record in the run's config JSON:
//   "series": {"shape": "...", "probe": {"text", "sequences", "seq_len", "probes", "ids_hash",
//              "tokenizer"}, "checkpoints": [{"step", "tokens", "step_from", "import"}]}
// A checkpoint is in "checkpoints" once its rows are stored; the run's "import" record is its
// newest checkpoint's, so `eval --run` evaluates the series' last model.
#include "hf/series_import.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>

#include "experiment/experiment_config.h"
#include "experiment/group_names.h"
#include "experiment/run_config.h"
#include "hf/hf_import.h"
#include "store/metric_catalogue.h"
#include "train/trainer.h"
#include "util/content_hash.h"
#include "util/stream_hash.h"

namespace depthlab::hf {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;

/// What must agree between the checkpoints of one series.
std::string shapeOf(const HfModelConfig& c) {
  const auto& m = c.model;
  return c.architecture + ": " + std::to_string(m.nLayers) + " layers, width " +
         std::to_string(m.dModel) + ", " + std::to_string(m.nHeads) + " heads (" +
         std::to_string(m.kvHeads()) + " key/value), feed-forward " + std::to_string(m.dFF) +
         ", vocabulary " + std::to_string(m.vocabSize);
}

/// The probe setup a continued series must share (ids_hash is compared once tokenized).
nlohmann::json probeSetup(const ModelAnalysisOptions& o, int seqLen) {
  const std::string& file = o.text.corpus.empty() ? o.text.tokensFile : o.text.corpus;
  std::error_code ec;
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : o.probes) probes.push_back(p);
  return {{"text", fs::weakly_canonical(fs::absolute(file), ec).string()},
          {"sequences", o.sequences},
          {"seq_len", seqLen},
          {"probes", probes}};
}

std::string idsHash(const ImportedProbeBatch& b) {
  util::StreamHash h;
  const auto in = b.inputs.cpu().contiguous(), out = b.targets.cpu().contiguous();
  h.update(in.data_ptr(), static_cast<size_t>(in.nbytes()));
  h.update(out.data_ptr(), static_cast<size_t>(out.nbytes()));
  return util::hex64(h.digest());
}

std::optional<store::RunInfo> findSeriesRun(store::RunStore& store, const std::string& name) {
  std::optional<store::RunInfo> found;
  for (auto& r : store.listRuns()) {
    if (r.name == name && experiment::isSeriesRun(r) && (!found || r.id > found->id))
      found = std::move(r);
  }
  return found;
}

/// The checks before anything is written: one shape for every checkpoint (and the continued
/// run's), the continued run's probe setup, and no step of it analysed from another folder.
void checkSeries(const SeriesOptions& o, const nlohmann::json& setup,
                 const std::optional<store::RunInfo>& earlier, std::string& shape) {
  std::string first;
  for (const auto& c : o.checkpoints) {
    const std::string s = shapeOf(readHfConfig(c.dir));
    if (shape.empty()) shape = s, first = c.dir;
    if (s != shape) {
      throw HfModelError("the checkpoints differ in shape: '" + first + "' is " + shape + "; '" +
                         c.dir + "' is " + s + " (a series is one model over training)");
    }
  }
  if (!earlier) return;
  const auto j = nlohmann::json::parse(earlier->configJson);
  const auto& series = j.at("series");
  const std::string was = series.value("shape", "");
  const std::string id = "run " + std::to_string(earlier->id) + " ('" + earlier->name + "')";
  if (was != shape) {
    throw HfModelError(id + " is a series of " + was + "; these checkpoints are " + shape +
                       ": give another --name for a new series");
  }
  auto before = series.at("probe");
  before.erase("ids_hash");
  before.erase("tokenizer");
  if (before != setup) {
    throw HfModelError(id + " was probed with " + before.dump() + "; this asks for " +
                       setup.dump() +
                       ": give the same probe text and options to continue it, "
                       "or another --name for a new series");
  }
  for (const auto& done : series.at("checkpoints")) {
    for (const auto& c : o.checkpoints) {
      const std::string from = done.at("import").at("source").get<std::string>();
      if (done.at("step").get<int64_t>() == c.step && from != c.dir) {
        throw HfModelError(id + " holds step " + std::to_string(c.step) + " analysed from '" +
                           from + "'; '" + c.dir + "' is another checkpoint of that step");
      }
    }
  }
}

int64_t createSeriesRun(store::RunStore& store, const std::string& name, const ImportRecord& rec,
                        const HfModelConfig& config, nlohmann::json series) {
  experiment::ExperimentConfig c;
  c.name = name;
  c.schemes = {"pre_ln"};
  c.model = config.model;
  c.model.seqLen = static_cast<int>(std::min<int64_t>(config.maxPositions, 4096));
  auto j = experiment::toJson(c);
  j["import"] = toJson(rec);
  j["series"] = std::move(series);
  store::NewRun run;
  run.name = name;
  run.scheme = "pre_ln";
  run.configJson = j.dump();
  run.device = "imported " + rec.dtype;
  const int64_t id = store
                         .createGroup(
                             {run},
                             [&](const std::set<std::string>& taken) {
                               return experiment::uniqueGroupName("hf-" + name, taken);
                             },
                             [](const std::string&, store::NewRun&) {})
                         .second.front();
  store.addTag(id, "imported");
  store.addTag(id, "series");
  return id;
}

/// Analyses one checkpoint into the run and records it in the series; returns the run (created
/// at the first checkpoint).
void analyzeOne(store::RunStore& store, int64_t& runId, const SeriesOptions& o,
                const SeriesCheckpoint& c, const ImportedProbeBatch& batch, nlohmann::json& series,
                torch::Device device) {
  HfModelConfig config;
  const ImportRecord rec = describeHfFolder(c.dir, config);  // every file's checksum
  if (runId == 0) runId = createSeriesRun(store, o.name, rec, config, series);
  store.markRunning(runId);
  auto decoder = loadImportedDecoder(rec, config.model, batch.seqLen, device);
  store::WriteBatch rows;
  probeImportedDecoder(decoder, config.model, batch, c.step, o.analysis.probes, o.analysis.progress,
                       rows);
  if (c.tokens) rows.scalar(c.step, metrics::kTokensSeen, static_cast<double>(*c.tokens));
  rows.event(c.step, store::EventLevel::Info,
             "analyzed the checkpoint of step " + std::to_string(c.step) + " (step from " +
                 c.stepFrom + ") in " + c.dir);
  store.write(runId, rows);
  auto entry = nlohmann::json{{"step", c.step}, {"step_from", c.stepFrom}, {"import", toJson(rec)}};
  entry["tokens"] = c.tokens ? nlohmann::json(*c.tokens) : nlohmann::json();
  auto& done = series["checkpoints"];
  done.push_back(std::move(entry));
  std::sort(done.begin(), done.end(),
            [](const auto& a, const auto& b) { return a.at("step") < b.at("step"); });
  auto j = nlohmann::json::parse(store.run(runId)->configJson);
  j["series"] = series;
  j["import"] = done.back().at("import");  // the newest checkpoint: what eval and Train read
  store.setRunConfig(runId, j.dump());
}

/// The folder whose tokenizer reads the probe text: the first checkpoint that has one (they
/// share it), else the first checkpoint (encodeWithModelTokenizer says what is missing).
std::string tokenizerFolder(const std::vector<SeriesCheckpoint>& checkpoints) {
  for (const auto& c : checkpoints) {
    if (fs::exists(fs::path(c.dir) / "tokenizer.json") ||
        fs::exists(fs::path(c.dir) / "tokenizer.model")) {
      return c.dir;
    }
  }
  return checkpoints.front().dir;
}

/// A checkpoint failed: the run (when it exists) is stopped with the reason, its earlier
/// checkpoints kept; throws HfModelError naming the checkpoint.
[[noreturn]] void stopSeries(store::RunStore& store, int64_t runId, const SeriesCheckpoint& c,
                             const std::string& what) {
  const std::string why = "the checkpoint of step " + std::to_string(c.step) + " ('" + c.dir +
                          "') could not be analysed: " + what;
  if (runId != 0) {
    store::WriteBatch b;
    b.event(c.step, store::EventLevel::Error,
            why +
                "; the series stops here, its earlier checkpoints kept (run the same command "
                "again to continue)");
    store.write(runId, b);
    store.finishRun(runId, store::RunStatus::Stopped);
  }
  throw HfModelError(why);
}

}  // namespace

std::set<int64_t> seriesStepsDone(store::RunStore& store, const std::string& name) {
  std::set<int64_t> done;
  const auto run = findSeriesRun(store, name);
  if (!run) return done;
  const auto j = nlohmann::json::parse(run->configJson, nullptr, false);
  if (!j.is_object() || !j["series"].contains("checkpoints")) return done;
  for (const auto& c : j["series"]["checkpoints"]) done.insert(c.value("step", int64_t{-1}));
  return done;
}

std::string defaultSeriesName(const std::vector<SeriesCheckpoint>& checkpoints) {
  if (checkpoints.empty()) return "series";
  return fs::path(checkpoints.front().dir).parent_path().filename().string();
}

SeriesResult importHfSeries(store::RunStore& store, const SeriesOptions& o) {
  const auto t0 = Clock::now();
  if (o.checkpoints.empty()) throw HfModelError("the series has no checkpoint");
  if (o.name.empty()) throw HfModelError("a series needs a run name");
  const auto& a = o.analysis;
  if (a.sequences < 1 || a.sequences > 4096) throw HfModelError("--sequences must be in [1, 4096]");
  auto say = [&](const std::string& line) {
    if (a.progress) a.progress(line);
  };
  SeriesResult r;
  HfModelConfig first = readHfConfig(o.checkpoints.front().dir);
  ImportRecord limits;  // the positions and window the default probe length respects
  limits.maxPositions = first.maxPositions;
  limits.slidingWindow = first.slidingWindow;
  const int seqLen = a.seqLen == 0 ? defaultProbeLength(limits) : a.seqLen;
  if (seqLen < 2) throw HfModelError("--seq-len must be at least 2");
  const auto setup = probeSetup(a, seqLen);
  const auto earlier = findSeriesRun(store, o.name);
  std::string shape;
  checkSeries(o, setup, earlier, shape);
  nlohmann::json series = {
      {"shape", shape}, {"probe", setup}, {"checkpoints", nlohmann::json::array()}};
  std::set<int64_t> done;
  if (earlier) {
    series = nlohmann::json::parse(earlier->configJson).at("series");
    for (const auto& c : series.at("checkpoints")) done.insert(c.at("step").get<int64_t>());
    r.runId = earlier->id;
    r.continued = true;
  }
  std::vector<SeriesCheckpoint> todo;
  for (const auto& c : o.checkpoints) {
    if (done.count(c.step))
      r.alreadyDone.push_back(c.step);
    else
      todo.push_back(c);
  }
  if (todo.empty()) {
    r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return r;
  }
  const torch::Device device = train::resolveDevice(a.device);
  useThreads(a.threads);
  ImportRecord textFrom = limits;
  textFrom.source = tokenizerFolder(o.checkpoints);
  say("tokenizing the probe text");
  const auto batch = importedProbeBatch(textFrom, first.model, a, seqLen, device);
  r.tokensHow = batch.how;
  const std::string hash = idsHash(batch);
  if (earlier && series["probe"].value("ids_hash", "") != hash) {
    throw HfModelError("the probe text of run " + std::to_string(earlier->id) +
                       " has changed since its earlier checkpoints were analysed (other token "
                       "ids): restore it, or give another --name for a new series");
  }
  series["probe"]["ids_hash"] = hash;
  series["probe"]["tokenizer"] = batch.how;
  for (size_t i = 0; i < todo.size(); ++i) {
    const auto& c = todo[i];
    say("checkpoint " + std::to_string(i + 1) + "/" + std::to_string(todo.size()) + ": step " +
        std::to_string(c.step) + " from " + c.dir);
    try {
      analyzeOne(store, r.runId, o, c, batch, series, device);
    } catch (const std::exception& e) {
      stopSeries(store, r.runId, c, e.what());
    }
    r.analyzedSteps.push_back(c.step);
    if (o.analyzed) o.analyzed(c);
  }
  store.finishRun(r.runId, store::RunStatus::Finished);
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

}  // namespace depthlab::hf
