// `depthlab-cli import-hf DIR`, `eval --run ID (--tokens F | --corpus F)` and
// `export-hf --run ID --out DIR`: Hugging Face models in and out (core/hf).
#include <cstdio>
#include <iostream>

#include "cli_common.h"
#include "hf/hf_export.h"
#include "hf/hf_import.h"
#include "hf/model_analysis.h"

namespace depthlab::cli {

void addHfCommands(CLI::App& app, GlobalOptions& g) {
  static std::string importDir, importName;
  auto* imp = app.add_subcommand(
      "import-hf",
      "Import a Hugging Face model folder as a run (Llama, Mistral, Qwen2/3, OLMo 2, Phi-3, "
      "Gemma 2/3, GPT-2, GPT-NeoX / Pythia; weights stay where they are)");
  imp->add_option("dir", importDir, "Model folder: config.json and *.safetensors")->required();
  imp->add_option("--name", importName, "Run name (default: the folder's name)");
  imp->callback([&g] {
    auto s = openStore(g);
    auto r = hf::importHfModel(s, importDir, importName);
    const auto& m = r.config.model;
    if (g.json) {
      std::cout << nlohmann::json{{"run_id", r.runId}, {"architecture", r.record.architecture},
                                  {"layers", m.nLayers}, {"width", m.dModel},
                                  {"heads", m.nHeads}, {"kv_heads", m.kvHeads()},
                                  {"parameters", r.record.parameters}, {"dtype", r.record.dtype},
                                  {"source", r.record.source}, {"seconds", r.seconds},
                                  {"import", hf::toJson(r.record)}}.dump(2) << "\n";
      return;
    }
    std::printf("imported %s as run %lld: %d layers, width %d, %d heads (%d key/value), %.1f M "
                "parameters in %s, %zu files checksummed in %.1f s\n",
                r.record.architecture.c_str(), static_cast<long long>(r.runId), m.nLayers,
                m.dModel, m.nHeads, m.kvHeads(), r.record.parameters / 1e6, r.record.dtype.c_str(),
                r.record.files.size(), r.seconds);
    std::printf("next: depthlab-cli analyze --run %lld --corpus TEXT   (depth probes)\n",
                static_cast<long long>(r.runId));
  });

  static int64_t evalRun = 0;
  static hf::EvalOptions evalOptions;
  auto* ev = app.add_subcommand("eval",
                                "Mean next-token loss and perplexity of a run's model on text "
                                "(default: a trained run's whole validation split)");
  ev->add_option("--run", evalRun, "Run id (trained or imported)")->required();
  auto* tokensOpt = ev->add_option("--tokens", evalOptions.text.tokensFile,
                                   "Token ids: whitespace-separated, one sequence per line");
  auto* corpusOpt = ev->add_option("--corpus", evalOptions.text.corpus,
                                   "A text file, tokenized by the run's own tokenizer");
  tokensOpt->excludes(corpusOpt);
  ev->add_option("--seq-len", evalOptions.seqLen,
                 "Context per window (default: the run's training length; imported: 1024, or the "
                 "model's positions or attention window when fewer); the result says which");
  ev->add_option("--batch", evalOptions.batch, "Windows per forward pass")->capture_default_str();
  ev->add_option("--max-tokens", evalOptions.text.maxTokens,
                 "With no text: the validation split's first N tokens (default: all of it)");
  ev->add_option("--device", evalOptions.device, "cpu, cuda or cuda:N")->capture_default_str();
  ev->add_option("--threads", evalOptions.threads, "CPU threads (0 = every core)")->capture_default_str();
  ev->callback([&g, ev] {
    // Neither: a trained run's own validation split, whole.
    evalOptions.text.validationSplit = !ev->count("--tokens") && !ev->count("--corpus");
    auto s = openStore(g, store::RunStore::Mode::ReadOnly);
    auto r = hf::evaluateRun(s, evalRun, evalOptions);
    if (g.json) {
      std::cout << nlohmann::json{{"run_id", evalRun}, {"loss", r.loss}, {"perplexity", r.perplexity},
                                  {"tokens", r.predictedTokens}, {"sequences", r.sequences},
                                  {"context", r.context}, {"windows", r.windows},
                                  {"context_why", r.contextWhy},
                                  {"tokenizer", r.tokensHow}, {"model", r.modelFrom},
                                  {"skipped", r.skippedCheckpoints}}.dump(2) << "\n";
      return;
    }
    for (const auto& why : r.skippedCheckpoints) std::printf("skipped the checkpoint at %s\n", why.c_str());
    std::printf("run %lld (%s): loss %.4f nats/token, perplexity %.3f over %lld predicted tokens "
                "in %lld sequence(s), cut into %lld window(s) of at most %d tokens (%s); tokens: %s\n",
                static_cast<long long>(evalRun), r.modelFrom.c_str(), r.loss, r.perplexity,
                static_cast<long long>(r.predictedTokens), static_cast<long long>(r.sequences),
                static_cast<long long>(r.windows), r.context, r.contextWhy.c_str(),
                r.tokensHow.c_str());
  });

  static int64_t exportRun = 0;
  static std::string exportDir;
  auto* ex = app.add_subcommand("export-hf", "Write a trained run as a Hugging Face LlamaForCausalLM folder");
  ex->add_option("--run", exportRun, "Run id")->required();
  ex->add_option("--out", exportDir, "New folder to write")->required();
  ex->callback([&g] {
    auto s = openStore(g, store::RunStore::Mode::ReadOnly);
    auto r = hf::exportRunToHf(s, exportRun, exportDir);
    if (g.json) {
      std::cout << nlohmann::json{{"run_id", exportRun}, {"dir", r.dir}, {"files", r.files},
                                  {"step", r.step}, {"scheme", r.scheme},
                                  {"tokenizer", r.tokenizer}, {"gap", r.gapNote}}.dump(2) << "\n";
      return;
    }
    std::string files;
    for (const auto& f : r.files) files += (files.empty() ? "" : ", ") + f;
    std::printf("exported run %lld (%s, checkpoint at step %lld) to %s: %s%s\n",
                static_cast<long long>(exportRun), r.scheme.c_str(),
                static_cast<long long>(r.step), r.dir.c_str(), files.c_str(),
                r.tokenizer.empty() ? " (no tokenizer: the run's could not be found)" : "");
    if (!r.gapNote.empty()) std::printf("note: %s\n", r.gapNote.c_str());
  });
}

}  // namespace depthlab::cli
