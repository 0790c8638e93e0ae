// `depthlab-cli train ...`, `depthlab-cli resume ID` and `depthlab-cli presets`.
// Before the first update what the run will cost here ("cost   ..." lines), a one-line live
// progress display, a summary table at the end, --json for machines (the text: train_output).
// Ctrl-C checkpoints every run of the group and marks it stopped.
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "cli_common.h"
#include "cli_distributed.h"
#include "data/tokenizer.h"
#include "experiment/config_set.h"
#include "experiment/presets.h"
#include "experiment/run_config.h"
#include "experiment/run_group.h"
#include "model/scheme_sets.h"
#include "run_console.h"
#include "train_output.h"

namespace depthlab::cli {

namespace {

std::string joinList(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// model.vocabSize is never used: the tokenizer decides the vocabulary. Said (where the value
// differs from the tokenizer's) rather than refused, since configs saved by the lab itself (and
// before the end-of-document id, with 256) carry one. `where`: the file, or "--set".
void noteTokenizerVocabulary(const std::string& where, int given,
                             const experiment::ExperimentConfig& c) {
  const std::string& tok = c.data.tokenizer;
  int used = 0;  // 0: known only once the tokenizer is read (spm:/path.model)
  if (tok == "byte") {
    used = data::kByteVocab;
  } else if (tok.rfind("spm:", 0) == 0 && tok.size() > 4 &&
             tok.find_first_not_of("0123456789", 4) == std::string::npos) {
    try {
      used = data::spmVocabSize(tok);
    } catch (const std::exception&) {
      return;  // validate() names the tokenizer
    }
  }
  if (given == used) return;
  std::fprintf(stderr,
               "depthlab-cli: %s: model.vocabSize %d is not used: the vocabulary comes from the "
               "tokenizer %s (%s); leave model.vocabSize out to silence this\n",
               where.c_str(), given, tok.c_str(),
               used > 0 ? (std::to_string(used) + " ids, the end-of-document id included").c_str()
                        : "its model's size");
}

// The model.vocabSize a config file sets, if any.
std::optional<int> fileVocabulary(const std::string& file) {
  const auto j = experiment::readConfigJson(file);
  const auto model = j.find("model");
  if (model == j.end() || !model->is_object()) return std::nullopt;
  const auto v = model->find("vocabSize");
  if (v == model->end() || !v->is_number_integer()) return std::nullopt;
  return v->get<int>();
}

// Flags that set one config field each: checked by the config table's ranges (config_fields).
const std::vector<std::pair<const char*, const char*>> kFieldFlags = {
    {"--corpus", "data.corpus"},
    {"--tokenizer", "data.tokenizer"},
    {"--packing", "data.packing"},
    {"--tokenizer-sample-mb", "data.tokenizerSampleMB"},
    {"--steps", "optim.steps"},
    {"--device", "run.device"},
    {"--seed", "run.seed"},
    {"--threads", "run.threads"},
    {"--checkpoint-minutes", "run.checkpointMinutes"},
    {"--keep-checkpoints", "run.checkpointKeep"}};

struct TrainArgs {
  std::string preset = "tiny", schemes, configFile, name, checkpointDir;
  std::map<std::string, std::string> fieldFlags;  // kFieldFlags' values as given
  std::vector<std::string> sets;                  // --set section.key=value
  int microBatch = 0;
  bool quiet = false;
  DistArgs dist;
  std::set<std::string> given;  // the options given (givenOptions)
};

// The group's config: the preset (or a config file over it), then every flag given, then
// every --set (in order).
experiment::ExperimentConfig configFromArgs(const TrainArgs& a) {
  experiment::ExperimentConfig c =
      a.configFile.empty() ? experiment::requirePreset(a.preset)
                           : experiment::loadConfigOverPreset(
                                 a.configFile, a.given.count("--preset") ? a.preset : "");
  if (a.given.count("--scheme")) {
    // A set name ("all-depth-fixes", "paper") stands for its schemes, at the preset's shape and
    // seed, trained as one group; an unknown name is refused by validate (schemes and sets).
    const auto given = splitList(a.schemes);
    const bool hasSet = std::any_of(given.begin(), given.end(), [](const std::string& s) {
      return model::findSchemeSet(s) != nullptr;
    });
    c.schemes = hasSet ? model::expandSchemeSets(given) : given;
    if (c.schemes.empty()) {
      std::vector<std::string> sets;
      for (const auto& set : model::schemeSets()) sets.push_back(set.id);
      throw std::runtime_error(
          "--scheme names no scheme (schemes: " + joinList(experiment::kSchemes) +
          "; sets: " + joinList(sets) + "); leave it out for the preset's");
    }
  }
  const std::optional<int> fromFile =
      a.configFile.empty() ? std::nullopt : fileVocabulary(a.configFile);
  const int plannedSteps = c.optim.steps;
  for (const auto& [flag, path] : kFieldFlags) {
    if (a.given.count(flag)) experiment::setConfigField(c, path, a.fieldFlags.at(flag), flag);
  }
  if (a.given.count("--micro-batch")) {
    if (a.microBatch <= 0) {
      throw std::runtime_error("--micro-batch must be at least 1 (got " +
                               std::to_string(a.microBatch) + ")");
    }
    try {
      experiment::applyMicroBatch(c, a.microBatch);  // the validation windows stay
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(std::string("--micro-batch: ") + e.what());
    }
    c.optim.autoMicroBatch = false;
  }
  if (!a.name.empty()) c.name = a.name;
  bool warmupSet = false, vocabSet = false;
  for (const auto& s : a.sets) {
    experiment::applyConfigAssignment(c, s);
    warmupSet = warmupSet || s.rfind("optim.warmupSteps=", 0) == 0;
    vocabSet = vocabSet || s.rfind("model.vocabSize=", 0) == 0;
  }
  // After every flag: the tokenizer the run will use decides what is said.
  if (vocabSet)
    noteTokenizerVocabulary("--set", c.model.vocabSize, c);
  else if (fromFile)
    noteTokenizerVocabulary(a.configFile, *fromFile, c);
  // Fewer steps than the warm-up (--steps or --set optim.steps): a tenth of them warms up.
  if (c.optim.steps != plannedSteps && !warmupSet && c.optim.warmupSteps >= c.optim.steps) {
    c.optim.warmupSteps = c.optim.steps / 10;
  }
  return c;
}

using TrainHere =
    std::function<experiment::GroupResult(store::RunStore&, experiment::RunGroupOptions&)>;

// Trains (or resumes) in this process: rank 0, or a single process, writes the store and
// prints through a RunConsole; the other ranks keep a scratch store in memory and print
// notices only.
void trainInThisProcess(const std::optional<experiment::DataParallelGroup>& group, GlobalOptions& g,
                        const std::string& checkpointDir, double bucketMB, bool quiet,
                        const TrainHere& train) {
  const bool writer = !group || group->rank == 0;
  auto store = writer ? openStore(g) : store::RunStore::open(":memory:");
  RunConsole console(store.path(), g.json, quiet);
  experiment::RunGroupOptions o = console.groupOptions();
  if (!writer) {
    o.onProgress = nullptr;
    o.onPhase = nullptr;
    o.onCost = nullptr;
  }
  o.checkpointDir = checkpointDir;
  o.dist = group ? group->context.get() : nullptr;
  o.bucketMB = bucketMB;
  auto result = train(store, o);
  if (!writer) return;
  printSummary(result, g.json);
  for (const auto& m : result.members) {  // a run without its last checkpoint is not done
    if (m.unfinishedBecause.empty()) continue;
    std::fprintf(stderr, "depthlab-cli: run %lld is not finished: %s\n",
                 static_cast<long long>(m.runId), m.unfinishedBecause.c_str());
    g.exitCode = 1;
  }
}

// The first run's config (device, ranks) after --threads, which is recorded in every run's.
experiment::ExperimentConfig resumedConfig(GlobalOptions& g, const std::vector<int64_t>& ids,
                                           const std::string* threads) {
  experiment::ExperimentConfig first;
  for (size_t i = 0; i < ids.size(); ++i) {
    experiment::ExperimentConfig c;
    {
      auto reader = openStoreToRead(g);
      auto run = reader.run(ids[i]);
      if (!run) throw std::runtime_error("no run with id " + std::to_string(ids[i]));
      c = experiment::configOf(*run);
    }
    if (threads) {  // the run continues with the config it is read from
      const int before = c.run.threads;
      experiment::setConfigField(c, "run.threads", *threads, "--threads");
      if (c.run.threads != before) openStore(g).setRunConfig(ids[i], experiment::toJson(c).dump());
    }
    if (i == 0) first = c;
  }
  return first;
}

struct ResumeArgs {
  std::vector<int64_t> ids;
  std::string checkpointDir, threads;
  int64_t steps = 0;
  bool quiet = false;
  DistArgs dist;
  std::set<std::string> given;  // the options given (givenOptions)
};

// `resume ID[,ID...]`: continues runs where their newest checkpoints left them, several of one
// group side by side.
void runResume(GlobalOptions& g, const ResumeArgs& a) {
  // The run's device and its number of ranks (any number may continue it: the global batch
  // is the same). Every rank reads them, so the store must be reachable from every node.
  const experiment::ExperimentConfig runConfig =
      resumedConfig(g, a.ids, a.given.count("--threads") ? &a.threads : nullptr);
  const bool nprocGiven = a.given.count("--nproc") > 0;
  requireValid(a.dist, nprocGiven);
  const int ranks = nprocGiven ? a.dist.nproc : runConfig.run.processes;
  if (a.ids.size() > 1 && ranks > 1) {
    throw std::runtime_error("resume: data-parallel ranks resume one run at a time");
  }
  if (auto rc = launchLocalRanksIfAsked(a.dist, ranks, g, runConfig.run.device)) {
    g.exitCode = *rc;
    return;
  }
  const auto group = joinLaunchedGroup(a.dist, nprocGiven, runConfig.run.device);
  trainInThisProcess(group, g, a.checkpointDir, a.dist.bucketMB, a.quiet,
                     [&a](store::RunStore& store, experiment::RunGroupOptions& o) {
                       o.resumeToStep = a.steps;
                       return experiment::resumeRuns(a.ids, store, o);
                     });
}

// `presets`: every preset with its shape and parameter count.
void runPresets(const GlobalOptions& g) {
  {
    nlohmann::json j = nlohmann::json::array();
    if (!g.json) {
      std::printf("%-12s %10s %6s %6s %6s %6s %6s %8s %8s  %s\n", "PRESET", "PARAMS", "WIDTH",
                  "DEPTH", "HEADS", "FFN", "SEQ", "STEPS", "LR", "DESCRIPTION");
    }
    for (const auto& p : experiment::presets()) {
      const auto& m = p.config.model;
      const auto params = experiment::parameterCount(m);
      if (g.json) {
        j.push_back({{"name", p.name},
                     {"params", params},
                     {"description", p.description},
                     {"config", experiment::toJson(p.config)}});
        continue;
      }
      std::printf("%-12s %9.2fM %6d %6d %6d %6d %6d %8d %8.0e  %s\n", p.name.c_str(),
                  static_cast<double>(params) / 1e6, m.dModel, m.nLayers, m.nHeads, m.dFF, m.seqLen,
                  p.config.optim.steps, p.config.optim.lr, p.description.c_str());
    }
    if (g.json) std::cout << j.dump(2) << "\n";
  }
}

// `train`: a paired group, in this process or on the ranks it starts.
void runTrain(GlobalOptions& g, const TrainArgs& a) {
  experiment::ExperimentConfig c = configFromArgs(a);
  const bool nprocGiven = a.given.count("--nproc") > 0;
  requireValid(a.dist, nprocGiven);
  {  // a config the ranks would refuse is refused once, before any rank starts
    auto check = c;
    check.run.processes = nprocGiven ? a.dist.nproc : c.run.processes;
    experiment::requireValid(check);
  }
  if (auto rc = launchLocalRanksIfAsked(a.dist, nprocGiven ? a.dist.nproc : c.run.processes, g,
                                        c.run.device)) {
    g.exitCode = *rc;  // this process only started the ranks and waited for them
    return;
  }
  const auto group = joinLaunchedGroup(a.dist, nprocGiven, c.run.device);
  c.run.processes = group ? group->worldSize : 1;
  trainInThisProcess(group, g, a.checkpointDir, a.dist.bucketMB, a.quiet,
                     [&c](store::RunStore& store, experiment::RunGroupOptions& o) {
                       return experiment::runGroup(c, store, o);
                     });
}

}  // namespace

void addTrainCommand(CLI::App& app, GlobalOptions& g) {
  auto args = std::make_shared<TrainArgs>();
  TrainArgs& a = *args;
  auto* train = app.add_subcommand("train", "Train a paired group of schemes");
  addDistOptions(train, a.dist);
  train->add_option("--preset", a.preset, "Preset (see `presets`)")->capture_default_str();
  train->add_option("--scheme", a.schemes,
                    "Comma-separated schemes or sets of them, e.g. pre_ln,lns or all-depth-fixes "
                    "(every scheme at one shape and seed) or paper,dyt (see `schemes`)");
  train->add_option(
      "--corpus", a.fieldFlags["--corpus"],
      "Text file, folder, .jsonl[.gz|.zst], token store or .bin tokens (default: KJV)");
  train->add_option("--tokenizer", a.fieldFlags["--tokenizer"],
                    "byte | spm:N | spm:/path/to.model");
  train->add_option("--packing", a.fieldFlags["--packing"],
                    "packed (windows run across documents, an end-of-document token between "
                    "them; the default) | document (one document a row, cut and padded; the "
                    "paper's code)");
  train->add_option("--tokenizer-sample-mb", a.fieldFlags["--tokenizer-sample-mb"],
                    "Text spm:N trains on, from evenly spaced places of the corpus (default 100)");
  train->add_option("--steps", a.fieldFlags["--steps"], "Optimizer updates");
  train->add_option("--device", a.fieldFlags["--device"], "cpu | cuda | cuda:N");
  train->add_option("--seed", a.fieldFlags["--seed"],
                    "Seed (same seed = same batches and initial weights)");
  train->add_option("--threads", a.fieldFlags["--threads"], "Intra-op threads (0 = default)");
  train->add_option("--micro-batch", a.microBatch,
                    "Sequences per micro-batch (the global batch stays; default on a GPU for "
                    "the paper presets: as many as free memory allows)");
  train->add_option("--config", a.configFile,
                    "Experiment config JSON; its keys override the preset's (--preset, else the "
                    "one the file names): a partial file changes only what it names");
  train->add_option("--name", a.name, "Group name");
  train->add_option("--checkpoint-dir", a.checkpointDir, "Where checkpoints go");
  train->add_option("--checkpoint-minutes", a.fieldFlags["--checkpoint-minutes"],
                    "Wall time between checkpoints (default 10; 0 = only at the end)");
  train->add_option("--keep-checkpoints", a.fieldFlags["--keep-checkpoints"],
                    "Checkpoints kept besides the best and the final (default 3)");
  train->add_option("--set", a.sets,
                    "section.key=value: any config field (repeatable; after the other flags), "
                    "checked by the config table, e.g. --set optim.lr=0.003 --set "
                    "probes.forwardEvery=50");
  train->add_flag("--quiet", a.quiet, "No live progress line");
  train->callback([&g, args, train] {
    args->given = givenOptions(train);
    runTrain(g, *args);
  });
}

void addResumeCommand(CLI::App& app, GlobalOptions& g) {
  auto a = std::make_shared<ResumeArgs>();
  auto* resume = app.add_subcommand("resume", "Continue runs from their latest checkpoints");
  resume
      ->add_option("ids", a->ids,
                   "Run id(s): 7, or 7,8 (7 8): runs of one group stopped together train side by "
                   "side as they did, others one after the other")
      ->required()
      ->delimiter(',');
  resume->add_option("--checkpoint-dir", a->checkpointDir, "Where checkpoints go");
  resume
      ->add_option("--steps", a->steps,
                   "Train to this many steps instead of the configured count (a finished run "
                   "further); the learning-rate schedule keeps its planned length, past it the "
                   "rate stays at its floor")
      ->check(CLI::PositiveNumber);
  resume->add_option("--threads", a->threads,
                     "Intra-op threads from now on, recorded in the run's config (0 = default)");
  resume->add_flag("--quiet", a->quiet, "No live progress line");
  addDistOptions(resume, a->dist);
  resume->callback([&g, a, resume] {
    a->given = givenOptions(resume);
    runResume(g, *a);
  });
}

void addPresetsCommand(CLI::App& app, GlobalOptions& g) {
  auto* presets = app.add_subcommand("presets", "List presets with parameter counts");
  presets->callback([&g] { runPresets(g); });
}

}  // namespace depthlab::cli
