// `depthlab-cli import-hf DIR`, `eval --run ID (--tokens F | --corpus F)` and
// `export-hf --run ID --out DIR`: Hugging Face models in and out (core/hf). Each command is its
// arguments (an Args struct the options fill) and one run function; commands.cpp lists them.
#include <cstdio>
#include <iostream>
#include <memory>

#include "cli_common.h"
#include "hf/hf_export.h"
#include "hf/hf_import.h"
#include "hf/model_analysis.h"

namespace depthlab::cli {

namespace {

struct ImportArgs {
  std::string dir, name;
};

void runImport(GlobalOptions& g, const ImportArgs& a) {
  auto s = openStore(g);
  auto r = hf::importHfModel(s, a.dir, a.name);
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
  hf::EvalOptions options;  // text.validationSplit: set when neither --tokens nor --corpus
};

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
  cmd->add_option("dir", a->dir, "Model folder: config.json and *.safetensors")->required();
  cmd->add_option("--name", a->name, "Run name (default: the folder's name)");
  cmd->callback([&g, a] { runImport(g, *a); });
}

void addEvalCommand(CLI::App& app, GlobalOptions& g) {
  auto a = std::make_shared<EvalArgs>();
  auto* cmd = app.add_subcommand("eval",
                                 "Mean next-token loss and perplexity of a run's model on text "
                                 "(default: a trained run's whole validation split)");
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
  cmd->callback([&g, a, cmd] {
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
