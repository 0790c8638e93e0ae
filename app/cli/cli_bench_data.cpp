// `depthlab-cli bench data`: tokenization throughput, the loader's batch rate at the
// LLaMA-130M shape and the memory / first-step time of training on a billion-token store,
// each against its target. Prints measurements only; the work is bench::runDataBench.
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "bench/data_bench.h"
#include "cli_common.h"

namespace depthlab::cli {

namespace {

// The trainer's tokens/s the loader must outrun 10x: LLaMA-130M on the H200 (README of
// shared/gpu: ~300,000 tokens/s at 20% MFU); the 45% MFU goal of #10 would be ~675,000.
constexpr double kGpuTrainerTokensPerSecond = 300000;
constexpr double kGpuTrainerGoalTokensPerSecond = 675000;

const char* verdict(bool ok) { return ok ? "ok" : "MISSED"; }

nlohmann::json throughputJson(const bench::Throughput& t) {
  return {{"mb", t.mb},
          {"s", t.seconds},
          {"mb_per_s", t.mbPerSecond},
          {"tokens", t.tokens},
          {"tokens_per_s", t.tokensPerSecond}};
}

nlohmann::json probeJson(const bench::TrainProbe& p) {
  return {{"peak_rss_mb", p.peakRssMB},
          {"peak_anon_mb", p.peakAnonMB},
          {"peak_file_mb", p.peakFileMB},
          {"first_step_s", p.firstStepSeconds},
          {"seconds", p.seconds},
          {"exit_code", p.exitCode},
          {"error", p.error}};
}

}  // namespace

void addBenchData(CLI::App* bench, GlobalOptions& g) {
  auto o = std::make_shared<bench::DataBenchOptions>();
  auto noTrain = std::make_shared<bool>(false);
  o->dir = "/tmp/depthlab-bench-data-" + std::to_string(getpid());
  auto* data = bench->add_subcommand(
      "data", "Tokenization throughput, loader rate, memory of a billion-token store");
  data->add_option("--dir", o->dir, "Work folder (needs ~4x --text-gb free)")
      ->capture_default_str();
  data->add_option("--text-gb", o->textGB, "Generated text corpus (GB)")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1000.0));
  data->add_option("--jsonl-gb", o->jsonlGB, "Generated .jsonl corpus (GB)")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 1000.0));
  data->add_option("--spm-mb", o->spmMB, "Text SentencePiece encodes (MB)")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 100000.0));
  data->add_option("--spm-vocab", o->spmVocab, "SentencePiece vocabulary")->capture_default_str();
  data->add_option("--threads", o->threads, "Tokenizing workers (0 = every core)")
      ->capture_default_str();
  data->add_option("--train-preset", o->trainPreset, "Preset of the memory / first-step runs")
      ->capture_default_str();
  data->add_option("--train-steps", o->trainSteps, "Steps of those runs")->capture_default_str();
  data->add_flag("--no-train", *noTrain, "Skip the training runs");
  data->add_flag("--keep", o->keep, "Keep the generated corpora and stores");
  data->callback([&g, o, noTrain] {
    o->trainExe = *noTrain ? "" : siblingExecutable("depthlab-cli");
    o->verbose = !g.json;
    const auto r = bench::runDataBench(*o);
    const double rssDelta = r.bigStore.peakRssMB - r.smallStore.peakRssMB;
    if (g.json) {
      std::cout << nlohmann::json{{"threads", r.threads},
                                  {"page_cached", r.pageCached},
                                  {"byte", throughputJson(r.byte)},
                                  {"jsonl", throughputJson(r.jsonl)},
                                  {"spm", throughputJson(r.spm)},
                                  {"spm_train_s", r.spmTrainSeconds},
                                  {"spm_skipped", r.spmSkipped},
                                  {"reuse_s", r.reuseSeconds},
                                  {"open_store_s", r.openStoreSeconds},
                                  {"loader_tokens_per_s", r.loaderTokensPerSecond},
                                  {"big_store_tokens", r.bigStoreTokens},
                                  {"small_store_tokens", r.smallStoreTokens},
                                  {"train_big", probeJson(r.bigStore)},
                                  {"train_small", probeJson(r.smallStore)},
                                  {"rss_delta_mb", rssDelta}}
                       .dump(2)
                << "\n";
      return;
    }
    std::printf("bench data: %d tokenizing thread(s); generated corpora read from the page cache\n",
                r.threads);
    std::printf(
        "  byte      %.0f MB text in %.2f s: %.0f MB/s, %.1f M tokens/s (target >= 200 MB/s) %s\n",
        r.byte.mb, r.byte.seconds, r.byte.mbPerSecond, r.byte.tokensPerSecond / 1e6,
        verdict(r.byte.mbPerSecond >= 200));
    std::printf("  jsonl     %.0f MB .jsonl in %.2f s: %.0f MB/s, %.1f M tokens (byte-level)\n",
                r.jsonl.mb, r.jsonl.seconds, r.jsonl.mbPerSecond,
                static_cast<double>(r.jsonl.tokens) / 1e6);
    if (r.spmSkipped.empty()) {
      std::printf(
          "  spm:%d  trained on 20 MB in %.1f s; encoded %.0f MB in %.1f s: %.1f MB/s, %.2f M "
          "tokens/s\n",
          o->spmVocab, r.spmTrainSeconds, r.spm.mb, r.spm.seconds, r.spm.mbPerSecond,
          r.spm.tokensPerSecond / 1e6);
    } else {
      std::printf("  spm       not measured: %s\n", r.spmSkipped.c_str());
    }
    std::printf("  reuse     %.3f s to find the %.0f MB corpus's store up to date\n",
                r.reuseSeconds, r.byte.mb);
    std::printf("  store     %.2f B tokens mapped in %.3f s\n",
                static_cast<double>(r.bigStoreTokens) / 1e9, r.openStoreSeconds);
    std::printf(
        "  loader    %.1f M tokens/s in 512 x 256 batches on one core: %.0fx the H200 trainer's "
        "%.0fk tokens/s (target >= 10x) %s; %.0fx its 45%% MFU goal\n",
        static_cast<double>(r.loaderTokensPerSecond) / 1e6,
        static_cast<double>(r.loaderTokensPerSecond) / kGpuTrainerTokensPerSecond,
        kGpuTrainerTokensPerSecond / 1e3,
        verdict(static_cast<double>(r.loaderTokensPerSecond) >= 10 * kGpuTrainerTokensPerSecond),
        static_cast<double>(r.loaderTokensPerSecond) / kGpuTrainerGoalTokensPerSecond);
    if (!o->trainExe.empty()) {
      auto line = [](const char* tag, const bench::TrainProbe& p, uint64_t tokens) {
        if (p.exitCode != 0) {
          std::printf("  train %-5s failed (exit %d): %s\n", tag, p.exitCode, p.error.c_str());
          return;
        }
        std::printf(
            "  train %-5s %.3f B-token store: peak RSS %.0f MB (private %.0f, mapped files %.0f), "
            "first step done at %.1f s, %.1f s in all\n",
            tag, static_cast<double>(tokens) / 1e9, p.peakRssMB, p.peakAnonMB, p.peakFileMB,
            p.firstStepSeconds, p.seconds);
      };
      line("small", r.smallStore, r.smallStoreTokens);
      line("big", r.bigStore, r.bigStoreTokens);
      std::printf(
          "  memory    the billion-token store costs %+.0f MB of resident memory (target <= 300 "
          "MB) %s\n",
          rssDelta, verdict(r.bigStore.exitCode == 0 && rssDelta <= 300));
    }
  });
}

}  // namespace depthlab::cli
