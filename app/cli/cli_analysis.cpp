// `depthlab-cli analyze --run ID [--step S] [--probes ...]` (imported models: [--corpus F |
// --tokens F]) and `depthlab-cli report --runs A,B | --group G` (--families: cli_families.cpp;
// --study: cli_study.cpp). Each command is its arguments (an Args struct the options fill) and
// one run function; commands.cpp lists them.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>

#include "cli_common.h"
#include "cli_families.h"
#include "cli_study.h"
#include "experiment/analyze.h"
#include "experiment/run_config.h"
#include "experiment/run_report.h"
#include "experiment/run_selection.h"
#include "hf/hf_import.h"
#include "hf/model_analysis.h"
#include "store/metric_catalogue.h"

namespace depthlab::cli {

namespace {

nlohmann::json opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

std::string fmt(const std::optional<double>& v, const char* f = "%.4g") {
  if (!v || !std::isfinite(*v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), f, *v);
  return buf;
}

// A report's number as text ("-" when the run lacks it).
std::string valueText(const experiment::ReportValue& v, int nLayers) {
  using Format = experiment::ReportValue::Format;
  if (v.format == Format::LayerCount && v.value && std::isfinite(*v.value)) {
    const auto n = std::to_string(static_cast<long long>(*v.value));
    return nLayers > 0 ? n + "/" + std::to_string(nLayers) : n;
  }
  return fmt(v.value, v.format == Format::Slope ? "%.4f" : "%.4g");
}

// The run's fields, then each metric the catalogue shows in the report under its key.
nlohmann::json reportJson(const experiment::RunReport& r) {
  nlohmann::json j = {{"run_id", r.runId},
                      {"name", r.name},
                      {"scheme", r.scheme},
                      {"status", r.status},
                      {"steps", r.steps},
                      {"layers", r.nLayers},
                      {"probe_step", r.probeStep ? nlohmann::json(*r.probeStep) : nlohmann::json()},
                      {"missing", r.missing},
                      {"warnings", r.warnings}};
  for (const auto& v : r.values) {
    const bool count = v.format == experiment::ReportValue::Format::LayerCount && v.value;
    j[v.key] = count ? nlohmann::json(static_cast<int64_t>(*v.value)) : opt(v.value);
  }
  return j;
}

struct AnalyzeArgs {
  int64_t runId = 0, step = -1;
  std::string probes = "all";
  int lensSteps = 250;            // --probes tuned_lens: its training steps
  hf::ModelAnalysisOptions text;  // imported models
  std::set<std::string> given;    // the options given (givenOptions)
};

// `analyze`: an imported model on a text, or a trained run's checkpoint.
void runAnalyze(GlobalOptions& g, AnalyzeArgs a) {
  const int64_t runId = a.runId, step = a.step;
  const std::string& probes = a.probes;
  hf::ModelAnalysisOptions& text = a.text;
  if (a.given.count("--step") && step < 0) {
    throw std::runtime_error("--step must be 0 or more (got " + std::to_string(step) + ")");
  }
  if (a.lensSteps < 0 || a.lensSteps > 100000) {
    throw std::runtime_error("--lens-steps must be in [0, 100000] (got " +
                             std::to_string(a.lensSteps) + ")");
  }
  text.tunedLensSteps = a.lensSteps;
  auto s = openStore(g);
  auto run = s.run(runId);
  if (run && hf::importRecordOf(*run)) {
    if (a.given.count("--probes")) text.probes = experiment::parseProbeList(probes);
    if (!g.json)
      text.progress = [](const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); };
    auto r = hf::analyzeImportedRun(s, runId, text);
    if (g.json) {
      std::cout << nlohmann::json{{"run_id", runId},
                                  {"tokens", r.tokens},
                                  {"sequences", r.sequences},
                                  {"tokenizer", r.tokensHow},
                                  {"replaced_earlier", r.replacedEarlier},
                                  {"seconds", r.seconds},
                                  {"values", r.valuesWritten}}
                       .dump(2)
                << "\n";
    } else {
      std::printf(
          "analyzed imported run %lld on %d sequences, %lld tokens (%s): %zu values in %.1f s\n",
          static_cast<long long>(runId), r.sequences, static_cast<long long>(r.tokens),
          r.tokensHow.c_str(), r.valuesWritten, r.seconds);
      if (r.replacedEarlier)
        std::printf("note: the rows of an earlier analysis of this run were replaced\n");
    }
    return;
  }
  for (const char* opt :
       {"--corpus", "--tokens", "--sequences", "--seq-len", "--device", "--threads"}) {
    if (a.given.count(opt)) {
      throw std::runtime_error(std::string(opt) + " is for imported models; run " +
                               std::to_string(runId) + " is probed on its own probe batch");
    }
  }
  if (run && step >= 0) {  // a step past the newest checkpoint is not quietly the newest
    const auto saved = s.checkpoints(runId);
    if (!saved.empty() && step > saved.back().step) {
      throw std::runtime_error("--step " + std::to_string(step) + ": run " + std::to_string(runId) +
                               "'s newest checkpoint is at step " +
                               std::to_string(saved.back().step) +
                               " (leave --step out to analyze it)");
    }
  }
  auto which = experiment::parseProbeList(probes);
  auto r = experiment::analyzeCheckpoint(
      s, runId, step >= 0 ? std::optional<int64_t>(step) : std::nullopt, which, a.lensSteps);
  if (g.json) {
    std::cout << nlohmann::json{{"run_id", runId},
                                {"step", r.step},
                                {"checkpoint", r.checkpointPath},
                                {"skipped", r.skipped},
                                {"seconds", r.seconds},
                                {"values", r.valuesWritten},
                                {"gap", r.gapNote}}
                     .dump(2)
              << "\n";
  } else {
    for (const auto& why : r.skipped) std::printf("skipped the checkpoint at %s\n", why.c_str());
    if (!r.gapNote.empty()) std::printf("note: %s\n", r.gapNote.c_str());
    std::printf("analyzed run %lld at step %lld (%s): %zu values in %.1f s\n",
                static_cast<long long>(runId), static_cast<long long>(r.step),
                r.checkpointPath.c_str(), r.valuesWritten, r.seconds);
  }
}

// The report's table: a row per quantity (the run's, then each metric the catalogue shows in
// the report, by its catalogue label and unit), a column per run.
void printReportTable(const std::vector<experiment::RunReport>& reports) {
  if (reports.empty()) return;
  const auto& values = reports.front().values;  // the same rows for every run
  size_t labelWidth = 8, unitWidth = 0;
  for (const auto& v : values) {
    labelWidth = std::max(labelWidth, v.label.size() + 2);
    unitWidth = std::max(unitWidth, v.unit.size() + 2);
  }
  const auto head = [&](const std::string& label, const std::string& unit) {
    std::printf("%-*s%-*s", static_cast<int>(labelWidth), label.c_str(),
                static_cast<int>(unitWidth), unit.c_str());
  };
  head("run", "");
  for (const auto& r : reports) std::printf("%16lld", static_cast<long long>(r.runId));
  std::printf("\n");
  const auto row = [&](const std::string& label, const std::string& unit, const auto& cell) {
    head(label, unit);
    for (const auto& r : reports) std::printf("%16s", cell(r).c_str());
    std::printf("\n");
  };
  row("scheme", "", [](const experiment::RunReport& r) { return r.scheme; });
  row("status", "", [](const experiment::RunReport& r) { return r.status; });
  row("steps", "", [](const experiment::RunReport& r) { return std::to_string(r.steps); });
  for (size_t i = 0; i < values.size(); ++i) {
    const bool anyValue = std::any_of(reports.begin(), reports.end(), [i](const auto& r) {
      return i < r.values.size() && r.values[i].value.has_value();
    });
    if (!anyValue) continue;  // a row of "-" for every run says nothing
    row(values[i].label, values[i].unit, [i](const experiment::RunReport& r) {
      return i < r.values.size() ? valueText(r.values[i], r.nLayers) : std::string("-");
    });
  }
}

// What a report contradicts (a declared scheme's scale), what it lacks and what measures it.
void printWarningsAndGaps(const std::vector<experiment::RunReport>& reports) {
  for (const auto& r : reports) {
    // Probes come from `analyze`; a validation loss from training, or from `eval` on the
    // run's own validation split.
    std::string probes;
    bool noValLoss = false;
    for (const auto& m : r.missing) {
      if (m == metrics::kLossVal)
        noValLoss = true;
      else
        probes += " " + m;
    }
    const auto id = static_cast<long long>(r.runId);
    for (const auto& w : r.warnings) std::printf("warning: %s\n", w.c_str());
    if (!probes.empty() && r.fromTensorBoard) {
      std::printf(
          "run %lld lacks:%s (its event files hold no such series; log them as "
          "<metric>/layer_N, or watch the loop with depthlab.watch)\n",
          id, probes.c_str());
    } else if (!probes.empty() && r.watched) {
      std::printf(
          "run %lld lacks:%s (a watched loop stores what depthlab.watch measures: "
          "set its cadences, docs/watch.md)\n",
          id, probes.c_str());
    } else if (!probes.empty()) {
      std::printf("run %lld lacks:%s (run `depthlab-cli analyze --run %lld` to compute them)\n", id,
                  probes.c_str(), id);
    }
    if (noValLoss && r.fromTensorBoard) {
      std::printf("run %lld has no validation loss (no eval/loss, val_loss or loss/val tag)\n", id);
    } else if (noValLoss && r.watched) {
      std::printf(
          "run %lld has no validation loss (give it to the watch: probe.log(val_loss=...))\n", id);
    } else if (noValLoss) {
      std::printf(
          "run %lld has no validation loss (runs measure it while they train; "
          "`depthlab-cli eval --run %lld` measures it on the run's validation split)\n",
          id, id);
    }
  }
}

// The runs --runs and every --group name, each once in the order given; one of them is needed.
std::vector<int64_t> selectedRuns(store::RunStore& s, const std::string& runs,
                                  const std::vector<std::string>& groups) {
  if (runs.empty() && groups.empty()) {
    throw std::runtime_error(
        "report needs --runs IDS or --group NAME (`depthlab-cli runs list` shows both)");
  }
  std::vector<int64_t> ids =
      runs.empty() ? std::vector<int64_t>{} : experiment::resolveRunSelection(runs, s);
  for (const auto& group : groups) {
    for (int64_t id : experiment::resolveRunSelection("group:" + group, s)) {
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
  }
  return ids;
}

struct ReportArgs {
  std::string runs;
  std::vector<std::string> groups;
  bool study = false, families = false;
  int64_t step = -1;
  FamilyOutput familyOut;
  std::set<std::string> given;  // the options given (givenOptions)
};

// `report`: runs side by side, the depth study, or imported models as the family table.
void runReport(GlobalOptions& g, const ReportArgs& a) {
  auto s = openStore(g, store::RunStore::Mode::ReadOnly);
  const auto ids = selectedRuns(s, a.given.count("--runs") ? a.runs : "", a.groups);
  if (a.families && a.study)
    throw std::runtime_error("--families and --study are two tables: choose one");
  if (a.families) return reportFamilies(s, g, ids, a.familyOut);
  for (const char* only : {"--csv", "--latex", "--profiles", "--prune-share"}) {
    if (a.given.count(only)) throw std::runtime_error(std::string(only) + " goes with --families");
  }
  // Runs planned for different lengths (one trained further) are compared at one step.
  const bool stepGiven = a.given.count("--step") > 0;
  const std::optional<int64_t> at =
      stepGiven ? std::optional<int64_t>(a.step) : experiment::fewestPlannedSteps(s, ids);
  if (a.study) return reportStudy(s, g, ids, at ? *at : INT64_MAX);
  std::vector<experiment::RunReport> reports;
  for (int64_t id : ids) {
    const auto run = s.run(id);
    const bool imported = run && experiment::isImportedRun(*run);  // its probes: its own step
    reports.push_back(experiment::makeRunReport(s, id, at && !imported ? *at : INT64_MAX));
  }
  if (at && !stepGiven && !g.json) {
    std::printf(
        "runs planned for different lengths: each shown after %lld steps, the fewest any "
        "was planned for (--step S to choose)\n",
        static_cast<long long>(*at));
  }
  if (g.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& r : reports) j.push_back(reportJson(r));
    std::cout << j.dump(2) << "\n";
    return;
  }
  printReportTable(reports);
  printWarningsAndGaps(reports);
  std::printf(
      "Angular distance and pruning at small scale may run opposite to the paper, whose\n"
      "pattern was reported after ~2B tokens; variance and loss are the robust signals.\n");
}

}  // namespace

void addReportCommand(CLI::App& app, GlobalOptions& g) {
  auto a = std::make_shared<ReportArgs>();
  auto* report = app.add_subcommand("report", "Curse-of-Depth summary of runs side by side");
  report->add_option("--runs", a->runs,
                     "Runs: ids 3,4,7, a range 5-8, all, or group:NAME (mixed, comma-separated)");
  report->add_option("--group", a->groups,
                     "Every run of a group (as --runs group:NAME); repeatable: the same study at "
                     "other seeds");
  report->add_flag("--study", a->study,
                   "The depth study: every scheme of the runs in one table ranked by validation "
                   "loss (mean [min, max] over seeds) and by deep-layer usefulness (last-layer "
                   "variance, pruning loss of the deepest quarter, effective layers by E_l)");
  report
      ->add_option("--step", a->step,
                   "Each run after this many steps (its last rows at or before it; default: "
                   "its last, or the fewest steps any run was planned for when they differ)")
      ->check(CLI::NonNegativeNumber);
  report->add_flag("--families", a->families,
                   "The family table: per model its family, layers, lazy / low / effective layers "
                   "by E_l and lazy layers by pruning loss");
  report->add_option("--prune-share", a->familyOut.pruneShare,
                     "With --families: a layer is lazy by pruning when removing it raises the "
                     "probe loss by less than this share of it (default 0.01)");
  report->add_option("--csv", a->familyOut.csv, "With --families: write the table as CSV");
  report->add_option("--latex", a->familyOut.latex, "With --families: write the table as LaTeX");
  report->add_option("--profiles", a->familyOut.profiles,
                     "With --families: write the per-layer profiles (pruning loss, angular "
                     "distance to the next layer, E_l against relative depth) as CSV");
  report->callback([&g, a, report] {
    a->given = givenOptions(report);
    runReport(g, *a);
  });
}

void addAnalyzeCommand(CLI::App& app, GlobalOptions& g) {
  auto a = std::make_shared<AnalyzeArgs>();
  auto* analyze = app.add_subcommand(
      "analyze", "Run depth probes on a stored checkpoint, or on an imported model over a text");
  analyze->add_option("--run", a->runId, "Run id")->required();
  analyze->add_option("--step", a->step, "Checkpoint step (latest at or before it; default: last)");
  analyze
      ->add_option(
          "--probes", a->probes,
          "all | variance,angular,lens,pruning,block_pruning,skip_effect,jacobian,spectra; and, on "
          "demand only, tuned_lens (trains a tuned lens, kept with the run)")
      ->capture_default_str();
  analyze
      ->add_option("--lens-steps", a->lensSteps,
                   "--probes tuned_lens: training steps of the lens (8 held-out sequences a step)")
      ->capture_default_str();
  analyze->add_option("--corpus", a->text.text.corpus,
                      "Imported models: the text to probe on (tokenized by the model's tokenizer)");
  analyze->add_option("--tokens", a->text.text.tokensFile,
                      "Imported models: token ids instead of a text (one sequence per line)");
  analyze->add_option("--sequences", a->text.sequences, "Imported models: probe sequences")
      ->capture_default_str();
  analyze
      ->add_option("--seq-len", a->text.seqLen,
                   "Imported models: tokens per sequence (0: 128, fewer when the model has fewer "
                   "positions or a smaller attention window)")
      ->capture_default_str();
  analyze->add_option("--device", a->text.device, "Imported models: cpu, cuda or cuda:N")
      ->capture_default_str();
  analyze->add_option("--threads", a->text.threads, "Imported models: CPU threads (0 = every core)")
      ->capture_default_str();
  analyze->callback([&g, a, analyze] {
    a->given = givenOptions(analyze);
    runAnalyze(g, *a);
  });
}

}  // namespace depthlab::cli
