// `depthlab-cli import-hf DIR` (`--series DIR...`: hf/series_import.h), `eval --run ID (--tokens F
// | --corpus F)` and `export-hf --run ID --out DIR`: Hugging Face models in and out (core/hf). Each
// command is its arguments (an Args struct the options fill) and one run function; commands.cpp
// lists them.
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli_common.h"
#include "experiment/analyze.h"
#include "hf/hf_export.h"
#include "hf/hf_import.h"
#include "hf/hub_fetch.h"
#include "hf/model_analysis.h"
#include "hf/series_import.h"
#include "hf/task_eval.h"

namespace depthlab::cli {

namespace {

struct ImportArgs {
  std::vector<std::string> dirs;
  std::string name, probes = "all";
  bool series = false, deleteAfter = false;
  std::string hub, revisions, downloadDir;  // --hub: revisions fetched one at a time
  hf::ModelAnalysisOptions analysis;        // --series: the probe text and options
  std::set<std::string> given;              // the options given (givenOptions)
};

// `import-hf --series`: every checkpoint analysed into one run at its step.
// `collect` (--hub): the JSON result is appended there, not printed.
void runImportSeries(GlobalOptions& g, ImportArgs a, nlohmann::json* collect = nullptr) {
  if (a.analysis.text.corpus.empty() && a.analysis.text.tokensFile.empty()) {
    throw std::runtime_error(
        "--series analyses each checkpoint on a probe text: give --corpus "
        "TEXT (tokenized by the checkpoints' tokenizer) or --tokens IDS");
  }
  if (a.given.count("--probes")) a.analysis.probes = experiment::parseProbeList(a.probes);
  if (a.analysis.probes.count(experiment::kTunedLensFamily)) {
    throw std::runtime_error(
        "--series does not train tuned lenses (one per checkpoint): import, then `depthlab-cli "
        "analyze --run ID --probes tuned_lens` on a model");
  }
  hf::SeriesOptions o;
  o.checkpoints = hf::findSeries(a.dirs);
  o.name = a.name.empty() ? hf::defaultSeriesName(o.checkpoints) : a.name;
  o.analysis = a.analysis;
  if (!g.json)
    o.analysis.progress = [](const std::string& line) {
      std::fprintf(stderr, "%s\n", line.c_str());
    };
  auto s = openStore(g);
  const auto r = hf::importHfSeries(s, o);
  if (g.json) {
    const nlohmann::json j = {{"run_id", r.runId},
                              {"name", o.name},
                              {"checkpoints", o.checkpoints.size()},
                              {"analyzed_steps", r.analyzedSteps},
                              {"already_done", r.alreadyDone},
                              {"continued", r.continued},
                              {"tokenizer", r.tokensHow},
                              {"seconds", r.seconds}};
    if (collect)
      collect->push_back(j);
    else
      std::cout << j.dump(2) << "\n";
    return;
  }
  std::printf("series '%s' (run %lld): %zu checkpoint(s) analysed, %zu already done%s, in %.1f s\n",
              o.name.c_str(), static_cast<long long>(r.runId), r.analyzedSteps.size(),
              r.alreadyDone.size(), r.continued ? " (an earlier analysis continued)" : "",
              r.seconds);
  std::printf("steps:");
  for (const auto& c : o.checkpoints) std::printf(" %lld", static_cast<long long>(c.step));
  std::printf("\nnext: depthlab-cli report --runs %lld, or open the lab\n",
              static_cast<long long>(r.runId));
}

// `import-hf --series --hub REPO --revisions A,B`: each revision fetched, analysed into the
// series run, deleted after when asked; revisions already analysed are not fetched again.
void runHubSeries(GlobalOptions& g, ImportArgs a) {
  if (!a.dirs.empty()) throw std::runtime_error("--hub fetches the checkpoints: give no folders");
  std::vector<std::string> revisions;
  std::stringstream in(a.revisions);
  for (std::string r; std::getline(in, r, ',');) {
    if (!r.empty()) revisions.push_back(r);
  }
  if (revisions.empty()) {
    throw std::runtime_error("--hub needs --revisions, e.g. --revisions step0,step1000,step143000");
  }
  if (a.name.empty()) a.name = a.hub.substr(a.hub.find('/') + 1);
  nlohmann::json results = nlohmann::json::array();  // --json: one object a revision analysed
  for (const auto& rev : revisions) {
    const auto step = hf::stepFromName(rev);
    {
      auto s = openStore(g);
      if (step && hf::seriesStepsDone(s, a.name).count(step->step)) {
        std::fprintf(stderr, "%s: step %lld already analysed in series '%s'\n", rev.c_str(),
                     static_cast<long long>(step->step), a.name.c_str());
        continue;
      }
    }
    const std::string dest =
        a.downloadDir.empty() ? hf::defaultHubFolder(a.hub, rev) : a.downloadDir + "/" + rev;
    std::fprintf(stderr, "fetching %s revision %s into %s\n", a.hub.c_str(), rev.c_str(),
                 dest.c_str());
    hf::fetchHubRevision(a.hub, rev, dest);
    a.dirs = {dest};
    runImportSeries(g, a, &results);
    if (a.deleteAfter) hf::forgetHubRevision(dest);
  }
  if (g.json) std::cout << results.dump(2) << "\n";
}

void runImport(GlobalOptions& g, const ImportArgs& a) {
  if (!a.hub.empty() && !a.series) throw std::runtime_error("--hub is for --series");
  if (a.series && (a.analysis.text.corpus.empty() && a.analysis.text.tokensFile.empty())) {
    throw std::runtime_error(
        "--series analyses each checkpoint on a probe text: give --corpus "
        "TEXT (tokenized by the checkpoints' tokenizer) or --tokens IDS");
  }
  if (!a.hub.empty()) return runHubSeries(g, a);
  if (a.series) return runImportSeries(g, a);
  if (a.dirs.size() != 1) {  // none: CLI11 leaves it to us, the option being optional
    throw std::runtime_error("import-hf takes one model folder (" + std::to_string(a.dirs.size()) +
                             " given); several checkpoints of one model: --series");
  }
  for (const char* opt :
       {"--corpus", "--tokens", "--sequences", "--seq-len", "--probes", "--device", "--threads"}) {
    if (a.given.count(opt)) {
      throw std::runtime_error(std::string(opt) +
                               " is for --series; a single import is analysed "
                               "by `depthlab-cli analyze --run ID`");
    }
  }
  auto s = openStore(g);
  auto r = hf::importHfModel(s, a.dirs.front(), a.name);
  const auto& m = r.config.model;
  if (g.json) {
    std::cout << nlohmann::json{{"run_id", r.runId},
                                {"architecture", r.record.architecture},
                                {"layers", m.nLayers},
                                {"width", m.dModel},
                                {"heads", m.nHeads},
                                {"kv_heads", m.kvHeads()},
                                {"parameters", r.record.parameters},
                                {"dtype", r.record.dtype},
                                {"source", r.record.source},
                                {"seconds", r.seconds},
                                {"import", hf::toJson(r.record)}}
                     .dump(2)
              << "\n";
    return;
  }
  std::printf(
      "imported %s as run %lld: %d layers, width %d, %d heads (%d key/value), %.1f M "
      "parameters in %s, %zu files checksummed in %.1f s\n",
      r.record.architecture.c_str(), static_cast<long long>(r.runId), m.nLayers, m.dModel, m.nHeads,
      m.kvHeads(), r.record.parameters / 1e6, r.record.dtype.c_str(), r.record.files.size(),
      r.seconds);
  std::printf("next: depthlab-cli analyze --run %lld --corpus TEXT   (depth probes)\n",
              static_cast<long long>(r.runId));
}

struct EvalArgs {
  int64_t run = 0;
  hf::EvalOptions options;   // text.validationSplit: set when neither --tokens nor --corpus
  hf::TaskEvalOptions task;  // --task: a multiple-choice task instead of a text's loss
};

// `eval --task FILE`: accuracy by log-likelihood, as lm-eval scores multiple choice.
// The sweep's points as JSON: n, first block, acc, acc_norm, loss.
nlohmann::json pointsJson(const std::vector<hf::PrunedTaskPoint>& points) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& p : points) {
    out.push_back({{"removed", p.removed},
                   {"first_block", p.firstBlock},
                   {"acc", p.acc},
                   {"acc_norm", p.accNorm},
                   {"loss", p.loss}});
  }
  return out;
}

void printSweep(const hf::TaskEvalResult& r) {
  std::printf("under pruning (loss on %s; stored at step %lld for export --figure pruned-task):\n",
              r.lossText.c_str(), static_cast<long long>(r.step));
  std::printf(
      "  n  removed  | angular: blocks  acc     acc_norm loss    | deepest: blocks  acc     "
      "acc_norm loss\n");
  for (size_t i = 0; i < r.angular.size(); ++i) {
    const auto& a = r.angular[i];
    const auto& d = r.deepest[i];
    auto span = [](const hf::PrunedTaskPoint& p) {
      return p.removed == 0 ? std::string("-")
                            : std::to_string(p.firstBlock + 1) + "-" +
                                  std::to_string(p.firstBlock + p.removed);
    };
    std::printf("  %-2d %6.1f%%  | %14s  %.4f  %.4f   %.4f  | %14s  %.4f  %.4f   %.4f\n", a.removed,
                100.0 * a.removed / r.nLayers, span(a).c_str(), a.acc, a.accNorm, a.loss,
                span(d).c_str(), d.acc, d.accNorm, d.loss);
  }
}

void runTaskEval(GlobalOptions& g, const EvalArgs& a) {
  auto s = openStore(
      g, a.task.prune ? store::RunStore::Mode::ReadWrite : store::RunStore::Mode::ReadOnly);
  auto r = hf::evaluateTask(s, a.run, a.task);
  if (g.json) {
    nlohmann::json docs = nlohmann::json::array();
    for (size_t d = 0; d < r.answers.size(); ++d) {
      docs.push_back({{"answer", r.answers[d]}, {"loglikelihoods", r.logLikelihoods[d]}});
    }
    nlohmann::json pruning;
    if (a.task.prune) {
      pruning = {{"layers", r.nLayers},
                 {"step", r.step},
                 {"loss_text", r.lossText},
                 {"angular", pointsJson(r.angular)},
                 {"deepest", pointsJson(r.deepest)}};
    }
    std::cout << nlohmann::json{{"run_id", a.run},
                                {"task", a.task.taskFile},
                                {"template", a.task.templ},
                                {"documents", r.documents},
                                {"requests", r.requests},
                                {"acc", r.acc},
                                {"acc_stderr", r.accStderr},
                                {"acc_norm", r.accNorm},
                                {"acc_norm_stderr", r.accNormStderr},
                                {"chance", r.chance},
                                {"context", r.context},
                                {"tokenizer", r.tokensHow},
                                {"model", r.modelFrom},
                                {"skipped", r.skippedCheckpoints},
                                {"pruning", pruning},
                                {"docs", docs}}
                     .dump(2)
              << "\n";
    return;
  }
  for (const auto& why : r.skippedCheckpoints)
    std::printf("skipped the checkpoint at %s\n", why.c_str());
  std::printf(
      "run %lld (%s) on %s (%s template): acc %.4f +- %.4f, acc_norm %.4f +- %.4f over %d "
      "documents (%d choices scored; chance %.4f); tokens: %s\n",
      static_cast<long long>(a.run), r.modelFrom.c_str(), a.task.taskFile.c_str(),
      a.task.templ.c_str(), r.acc, r.accStderr, r.accNorm, r.accNormStderr, r.documents, r.requests,
      r.chance, r.tokensHow.c_str());
  if (a.task.prune) printSweep(r);
}

void runEval(GlobalOptions& g, const EvalArgs& a) {
  auto s = openStore(g, store::RunStore::Mode::ReadOnly);
  auto r = hf::evaluateRun(s, a.run, a.options);
  if (g.json) {
    std::cout << nlohmann::json{{"run_id", a.run},
                                {"loss", r.loss},
                                {"perplexity", r.perplexity},
                                {"tokens", r.predictedTokens},
                                {"sequences", r.sequences},
                                {"context", r.context},
                                {"windows", r.windows},
                                {"context_why", r.contextWhy},
                                {"tokenizer", r.tokensHow},
                                {"model", r.modelFrom},
                                {"skipped", r.skippedCheckpoints}}
                     .dump(2)
              << "\n";
    return;
  }
  for (const auto& why : r.skippedCheckpoints)
    std::printf("skipped the checkpoint at %s\n", why.c_str());
  std::printf(
      "run %lld (%s): loss %.4f nats/token, perplexity %.3f over %lld predicted tokens "
      "in %lld sequence(s), cut into %lld window(s) of at most %d tokens (%s); tokens: %s\n",
      static_cast<long long>(a.run), r.modelFrom.c_str(), r.loss, r.perplexity,
      static_cast<long long>(r.predictedTokens), static_cast<long long>(r.sequences),
      static_cast<long long>(r.windows), r.context, r.contextWhy.c_str(), r.tokensHow.c_str());
}

struct ExportHfArgs {
  int64_t run = 0;
  std::string dir;
};

void runExportHf(GlobalOptions& g, const ExportHfArgs& a) {
  auto s = openStore(g, store::RunStore::Mode::ReadOnly);
  auto r = hf::exportRunToHf(s, a.run, a.dir);
  if (g.json) {
    std::cout << nlohmann::json{{"run_id", a.run}, {"dir", r.dir},       {"files", r.files},
                                {"step", r.step},  {"scheme", r.scheme}, {"tokenizer", r.tokenizer},
                                {"gap", r.gapNote}}
                     .dump(2)
              << "\n";
    return;
  }
  std::string files;
  for (const auto& f : r.files) files += (files.empty() ? "" : ", ") + f;
  std::printf("exported run %lld (%s, checkpoint at step %lld) to %s: %s%s\n",
              static_cast<long long>(a.run), r.scheme.c_str(), static_cast<long long>(r.step),
              r.dir.c_str(), files.c_str(),
              r.tokenizer.empty() ? " (no tokenizer: the run's could not be found)" : "");
  if (!r.gapNote.empty()) std::printf("note: %s\n", r.gapNote.c_str());
}

}  // namespace

void addImportHfCommand(CLI::App& app, GlobalOptions& g) {
  auto a = std::make_shared<ImportArgs>();
  auto* cmd = app.add_subcommand(
      "import-hf",
      "Import a Hugging Face model folder as a run (Llama, Mistral, Qwen2/3, OLMo 2, Phi-3, "
      "Gemma 2/3, GPT-2, GPT-NeoX / Pythia; weights stay where they are)");
  cmd->add_option("dir", a->dirs,
                  "Model folder: config.json and *.safetensors (--series: checkpoint folders, or "
                  "folders of them)");
  cmd->add_option("--name", a->name,
                  "Run name (default: the folder's name; --series: the folder holding the "
                  "checkpoints; the same name continues an earlier series)");
  cmd->add_flag("--series", a->series,
                "The folders are checkpoints of one model over training (stepN, checkpoint-N, "
                "stage1-stepN-tokensM, trainer_state.json): one run, each checkpoint probed at its "
                "step");
  auto* corpus = cmd->add_option("--corpus", a->analysis.text.corpus,
                                 "--series: probe text, tokenized by the checkpoints' tokenizer");
  auto* tokens = cmd->add_option("--tokens", a->analysis.text.tokensFile,
                                 "--series: probe token ids, one sequence per line");
  tokens->excludes(corpus);
  cmd->add_option("--sequences", a->analysis.sequences, "--series: probe sequences")
      ->capture_default_str();
  cmd->add_option("--seq-len", a->analysis.seqLen,
                  "--series: tokens per probe sequence (0 = 128, or the model's limit)");
  cmd->add_option(
         "--probes", a->probes,
         "--series: all | variance,angular,lens,pruning,block_pruning,skip_effect,jacobian,spectra")
      ->capture_default_str();
  cmd->add_option("--device", a->analysis.device, "--series: cpu, cuda or cuda:N")
      ->capture_default_str();
  cmd->add_option("--threads", a->analysis.threads, "--series: CPU threads (0 = every core)");
  cmd->add_option("--hub", a->hub,
                  "--series: a Hugging Face hub repository (e.g. EleutherAI/pythia-160m), its "
                  "--revisions fetched one at a time (needs Python's huggingface_hub)");
  cmd->add_option("--revisions", a->revisions,
                  "--hub: revisions, comma-separated (step0,step1000)");
  cmd->add_option("--download-dir", a->downloadDir,
                  "--hub: where revisions go (default ~/.cache/depthlab/hub/OWNER--NAME/)");
  cmd->add_flag("--delete-after", a->deleteAfter,
                "--hub: delete each revision (its folder and its files in Hugging Face's cache) "
                "once it is analysed: one checkpoint on disk at a time");
  cmd->callback([&g, a, cmd] {
    a->given = givenOptions(cmd);
    runImport(g, *a);
  });
}

void addEvalCommand(CLI::App& app, GlobalOptions& g) {
  auto a = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval",
                                 "Mean next-token loss and perplexity of a run's model on text "
                                 "(default: a trained run's whole validation split), or with "
                                 "--task a multiple-choice task's accuracy");
  cmd->add_option("--run", a->run, "Run id (trained or imported)")->required();
  auto* tokens = cmd->add_option("--tokens", a->options.text.tokensFile,
                                 "Token ids: whitespace-separated, one sequence per line");
  auto* corpus = cmd->add_option("--corpus", a->options.text.corpus,
                                 "A text file, tokenized by the run's own tokenizer");
  tokens->excludes(corpus);
  cmd->add_option("--seq-len", a->options.seqLen,
                  "Context per window (default: the run's training length; imported: 1024, or the "
                  "model's positions or attention window when fewer); the result says which");
  cmd->add_option("--batch", a->options.batch, "Windows per forward pass")->capture_default_str();
  cmd->add_option("--max-tokens", a->options.text.maxTokens,
                  "With no text: the validation split's first N tokens (default: all of it)");
  cmd->add_option("--device", a->options.device, "cpu, cuda or cuda:N")->capture_default_str();
  cmd->add_option("--threads", a->options.threads, "CPU threads (0 = every core)")
      ->capture_default_str();
  auto* task =
      cmd->add_option("--task", a->task.taskFile,
                      "A multiple-choice task (JSONL: question, choices, answer; "
                      "docs/tasks.md): its accuracy by log-likelihood, as lm-eval scores it");
  cmd->add_flag("--prune", a->task.prune,
                "--task: also with n = 1..L/2 blocks removed (Gromov et al.'s angular choice and "
                "the deepest), the loss beside; stored with the run (export --figure pruned-task)");
  cmd->add_option("--max-removed", a->task.maxRemoved, "--prune: up to N blocks (0: L/2)")
      ->capture_default_str();
  cmd->add_option("--template", a->task.templ,
                  "--task: the prompt template, plain | qa (ARC, PIQA) | mmlu | boolq | hellaswag")
      ->capture_default_str();
  cmd->add_option("--limit", a->task.limit, "--task: the first N documents (0 = all)")
      ->capture_default_str();
  cmd->callback([&g, a, cmd] {
    if (cmd->count("--task")) {
      for (const char* opt : {"--seq-len", "--max-tokens"}) {
        if (cmd->count(opt)) throw std::runtime_error(std::string(opt) + " is not for --task");
      }
      if (!a->task.prune && (cmd->count("--corpus") || cmd->count("--tokens"))) {
        throw std::runtime_error("--corpus / --tokens with --task are the text of --prune's loss");
      }
      if (!a->task.prune && cmd->count("--max-removed")) {
        throw std::runtime_error("--max-removed is for --prune");
      }
      a->task.text = a->options.text;
      a->task.batch = a->options.batch;
      a->task.device = a->options.device;
      a->task.threads = a->options.threads;
      runTaskEval(g, *a);
      return;
    }
    for (const char* opt : {"--template", "--limit", "--prune", "--max-removed"}) {
      if (cmd->count(opt)) throw std::runtime_error(std::string(opt) + " is for --task");
    }
    a->options.text.validationSplit = !cmd->count("--tokens") && !cmd->count("--corpus");
    runEval(g, *a);
  });
}

void addExportHfCommand(CLI::App& app, GlobalOptions& g) {
  auto a = std::make_shared<ExportHfArgs>();
  auto* cmd = app.add_subcommand("export-hf",
                                 "Write a trained run as a Hugging Face LlamaForCausalLM folder");
  cmd->add_option("--run", a->run, "Run id")->required();
  cmd->add_option("--out", a->dir, "New folder to write")->required();
  cmd->callback([&g, a] { runExportHf(g, *a); });
}

}  // namespace depthlab::cli
