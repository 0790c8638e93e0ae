// `depthlab-cli bench store` (more benchmarks join as the lab grows). Prints measurements only.
#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "bench/dp_train_bench.h"
#include "bench/gpu_train_bench.h"
#include "bench/probe_bench.h"
#include "bench/store_bench.h"
#include "bench/train_bench.h"
#include "bench_baselines.h"
#include "bench_train_cpu.h"
#include "cli_common.h"
#include "cli_distributed.h"
#include "distributed/launch_env.h"
#include "experiment/data_parallel.h"
#include "experiment/presets.h"
#include "train/thread_share.h"

namespace depthlab::cli {

namespace {
// A script of bench/: in the source tree for a build, under share/ for an installed package.
std::string benchScript(const std::string& file) {
  std::string built = DEPTHLAB_REFERENCE_SCRIPT;
  built = built.substr(0, built.rfind('/') + 1) + file;
  if (access(built.c_str(), R_OK) == 0) return built;
  const std::string exe = siblingExecutable("depthlab-cli");
  return exe.substr(0, exe.rfind("/bin/")) + "/share/depthlab/bench/" + file;
}
std::string referenceScript() { return benchScript("reference_model.py"); }

void printGpuTrainBench(const bench::GpuTrainBenchResult& r, const experiment::ExperimentConfig& c,
                        const std::string& preset, const std::string& scheme, bool json) {
  const auto& m = c.model;
  if (json) {
    nlohmann::json j = {{"preset", preset},
                        {"device", r.device},
                        {"layers", m.nLayers},
                        {"width", m.dModel},
                        {"micro_batch", c.optim.batchSize},
                        {"accum", c.optim.gradAccum},
                        {"seq", m.seqLen},
                        {"bf16", c.run.bf16},
                        {"cuda_kernels", r.cudaKernels},
                        {"fused_residual", r.fusedResidual},
                        {"cuda_graphs", r.cudaGraphs},
                        {"cuda_graphs_error", r.cudaGraphsError},
                        {"steps", r.steps},
                        {"tokens_per_s", r.tokensPerSecond},
                        {"flops_per_token", r.flopsPerToken},
                        {"tflops", r.tflops},
                        {"used_memory_gb", r.usedMemoryGb},
                        {"hf_message", r.hfMessage}};
    if (!r.profileMessage.empty()) j["profile"] = r.profileMessage;
    if (r.mfu) j["mfu"] = *r.mfu, j["peak_tflops"] = *r.peakTflops;
    if (r.hfEager)
      j["hf_eager_tokens_per_s"] = *r.hfEager, j["ratio_eager"] = r.tokensPerSecond / *r.hfEager;
    if (r.hfCompile) {
      j["hf_compile_tokens_per_s"] = *r.hfCompile;
      j["ratio_compile"] = r.tokensPerSecond / *r.hfCompile;
    }
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::printf(
      "bench train: %s on %s, %d layers x d=%d, micro-batch %d x %d, seq %d, %s%s%s, %s, "
      "%d updates\n",
      preset.c_str(), r.device.c_str(), m.nLayers, m.dModel, c.optim.batchSize, c.optim.gradAccum,
      m.seqLen, c.run.bf16 ? "bf16 autocast" : "fp32",
      r.cudaKernels ? (r.fusedResidual ? ", DepthLab CUDA kernels + fused residual adds"
                                       : ", DepthLab CUDA kernels")
                    : ", ATen ops",
      r.cudaGraphs ? ", CUDA graphs" : "", scheme.c_str(), r.steps);
  if (!r.cudaGraphsError.empty()) {
    std::printf("  CUDA graphs turned off during the run: %s\n", r.cudaGraphsError.c_str());
  }
  std::printf("  DepthLab      %10.0f tokens/s  %6.1f TFLOP/s (%.0f MFLOP/token)",
              r.tokensPerSecond, r.tflops, r.flopsPerToken / 1e6);
  if (r.mfu)
    std::printf("  MFU %.1f%% of %.0f", 100 * *r.mfu, *r.peakTflops);
  else
    std::printf("  MFU n/a (unknown device: --peak-tflops)");
  std::printf("  %.1f GB in use\n", r.usedMemoryGb);
  auto line = [&](const char* what, const std::optional<double>& tps, double target) {
    if (!tps) return;
    const double ratio = r.tokensPerSecond / *tps;
    std::printf("  %-13s %10.0f tokens/s  ratio DepthLab/HF %.2fx", what, *tps, ratio);
    if (target > 0) std::printf(" (target >= %.1f) %s", target, ratio >= target ? "ok" : "MISSED");
    std::printf("\n");
  };
  line("HF eager", r.hfEager, 0);
  line("HF compile", r.hfCompile, 1.0);
  if (!r.hfEager && !r.hfCompile)
    std::printf("  HF baseline   unavailable: %s\n", r.hfMessage.c_str());
  if (!r.profileMessage.empty()) std::printf("  profile       %s\n", r.profileMessage.c_str());
}

// The options of `bench train`.
struct TrainArgs {
  std::string preset = "cpu-demo", scheme = "pre_ln", device = "cpu", python, profile;
  int steps = 20, threads = 1, layers = 0, width = 0, heads = 0, ffn = 0, microBatch = 0, accum = 0;
  double peakTflops = 0;
  bool unfused = false, noHf = false, cudaKernels = false, cppOnly = false, perOp = false;
  int cudaGraphs = -1;  // GPU: 1 --cuda-graphs, 0 --no-cuda-graphs, -1 the default
  int nproc = 0;        // > 0: data-parallel scaling over this many ranks
  int seq = 0;          // > 0: override the sequence length
  int rounds = 1;       // CPU: C++ then the references, this many times
  std::string backend = "auto", dpResult;  // dpResult: where rank 0 of the group writes its figure
};

// `bench train --nproc N`: N ranks (launched here, on this machine) against one, weak scaling.
void runBenchTrainDataParallel(const TrainArgs& t, const experiment::ExperimentConfig& c,
                               const GlobalOptions& g) {
  if (auto env = distributed::readLaunchEnv(); env && env->worldSize > 1) {  // one of the ranks
    auto group = experiment::joinDataParallel(*env, t.device, t.backend, 600);
    auto r = bench::runDataParallelBench(c, t.scheme, t.steps, t.threads, group.device,
                                         group.context.get());
    if (group.rank == 0 && !t.dpResult.empty()) {
      std::ofstream(t.dpResult) << nlohmann::json{
          {"tokens_per_s", r.tokensPerSecond},
          {"backend", r.backend},
          {"device", r.device}}.dump();
    }
    return;
  }
  // The N ranks first (the CUDA context of this process stays unopened while they run).
  const std::string result = "/tmp/depthlab-bench-dp-" + std::to_string(getpid()) + ".json";
  const int rc = distributed::runLocalRanks(selfLaunch(g, t.nproc, 60, {"--dp-result", result}));
  std::error_code ec;
  nlohmann::json group;
  try {
    std::ifstream in(result);
    in >> group;
  } catch (const std::exception&) {}
  std::filesystem::remove(result, ec);
  if (rc != 0 || !group.contains("tokens_per_s")) {
    throw std::runtime_error("the " + std::to_string(t.nproc) +
                             " data-parallel ranks failed (exit code " + std::to_string(rc) + ")");
  }
  auto one = bench::runDataParallelBench(c, t.scheme, t.steps, t.threads, t.device, nullptr);
  const double many = group["tokens_per_s"].get<double>();
  const double efficiency = many / (t.nproc * one.tokensPerSecond);
  const auto& m = c.model;
  if (g.json) {
    std::cout << nlohmann::json{{"preset", t.preset},
                                {"layers", m.nLayers},
                                {"width", m.dModel},
                                {"micro_batch", c.optim.batchSize},
                                {"seq", m.seqLen},
                                {"threads_per_rank", t.threads},
                                {"ranks", t.nproc},
                                {"backend", group["backend"]},
                                {"device", group["device"]},
                                {"one_rank_tokens_per_s", one.tokensPerSecond},
                                {"ranks_tokens_per_s", many},
                                {"scaling_efficiency", efficiency}}
                     .dump(2)
              << "\n";
    return;
  }
  std::printf(
      "bench train --nproc %d: %s, %d layers x d=%d, micro-batch %d x seq %d per rank, %s, "
      "%d thread(s) per rank, %d steps, %s\n",
      t.nproc, t.preset.c_str(), m.nLayers, m.dModel, c.optim.batchSize, m.seqLen, t.scheme.c_str(),
      t.threads, t.steps, group["backend"].get<std::string>().c_str());
  std::printf("  1 rank      %10.0f tokens/s\n", one.tokensPerSecond);
  std::printf("  %d ranks     %10.0f tokens/s\n", t.nproc, many);
  std::printf("  scaling efficiency %.2f (tokens/s at %d ranks over %d x one rank)\n", efficiency,
              t.nproc, t.nproc);
}

// `bench train`: the C++ trainer on CPU against the PyTorch reference, or on CUDA against
// Hugging Face; prints or emits JSON.
void runBenchTrain(const TrainArgs& t, const GlobalOptions& g) {
  auto c = experiment::presetConfig(t.preset);
  if (!c) throw std::runtime_error("unknown preset '" + t.preset + "'");
  if (t.layers > 0) c->model.nLayers = t.layers;
  if (t.width > 0) {
    c->model.dModel = t.width;
    c->model.dFF = t.ffn > 0 ? t.ffn : t.width * 8 / 3;
  }
  if (t.ffn > 0) c->model.dFF = t.ffn;
  if (t.heads > 0) c->model.nHeads = t.heads;
  if (t.microBatch > 0) c->optim.batchSize = t.microBatch;
  if (t.accum > 0) c->optim.gradAccum = t.accum;
  if (t.seq > 0) c->model.seqLen = t.seq;
  experiment::requireValid(*c);
  if (t.nproc > 0) {
    runBenchTrainDataParallel(t, *c, g);
    return;
  }
  if (t.device != "cpu") {
    bench::GpuTrainBenchOptions o;
    o.device = t.device;
    o.steps = t.steps;
    o.peakTflops = t.peakTflops;
    o.cudaKernels = t.cudaKernels;
    o.cudaGraphs = t.cudaGraphs;
    o.profilePath = t.profile;
    o.fusedKernels = !t.unfused;
    auto r = bench::runGpuTrainBench(*c, t.scheme, o);
    runHfBaseline(r, bench::gpuTrainBenchConfig(*c), t.noHf ? "" : benchScript("hf_llama_bench.py"),
                  t.python);
    printGpuTrainBench(r, *c, t.preset, t.scheme, g.json);
    return;
  }
  CpuTrainBenchArgs a;
  a.preset = t.preset;
  a.scheme = t.scheme;
  a.steps = t.steps;
  a.threads = t.threads;
  a.rounds = t.rounds;
  a.fusedKernels = !t.unfused;
  a.rowSplit = !t.perOp;
  a.cppOnly = t.cppOnly;
  runCpuTrainBench(a, *c, referenceScript(), g.json);
}

/// `bench store`: the layers per vector and the steps of the run written.
struct StoreBenchArgs {
  int layers = 24, steps = 20000;
};

void runBenchStore(GlobalOptions& g, const StoreBenchArgs& a) {
  std::string path = "/tmp/depthlab-bench-store-" + std::to_string(getpid()) + ".db";
  auto r = bench::runStoreBench(path, a.layers, a.steps);
  if (g.json) {
    std::cout << nlohmann::json{{"layers", r.layers},
                                {"steps", r.steps},
                                {"ingest_values_per_s", r.ingestValuesPerSecond},
                                {"ingest_s", r.ingestSeconds},
                                {"load_ms_median", r.loadMilliseconds},
                                {"load_ms_worst", r.loadWorstMilliseconds},
                                {"file_mb", r.fileMegabytes}}
                     .dump(2)
              << "\n";
    return;
  }
  std::printf("bench store: %d layers x %d steps x 5 per-layer metrics, batches of 100 steps\n",
              r.layers, r.steps);
  std::printf("  ingest   %.2f million values/s  (%.2f s, target >= 2 million/s) %s\n",
              r.ingestValuesPerSecond / 1e6, r.ingestSeconds,
              r.ingestValuesPerSecond >= 2e6 ? "ok" : "MISSED");
  std::printf(
      "  load     %.1f ms median, %.1f ms worst for one metric, all steps "
      "(target <= 50 ms) %s\n",
      r.loadMilliseconds, r.loadWorstMilliseconds, r.loadMilliseconds <= 50 ? "ok" : "MISSED");
  std::printf("  file     %.1f MB\n", r.fileMegabytes);
}

void addBenchStore(CLI::App* bench, GlobalOptions& g) {
  auto a = std::make_shared<StoreBenchArgs>();
  auto* store = bench->add_subcommand("store", "Run-store ingest rate and series load time");
  store->add_option("--layers", a->layers, "Layers per vector")->capture_default_str();
  store->add_option("--steps", a->steps, "Steps in the run")->capture_default_str();
  store->callback([&g, a] { runBenchStore(g, *a); });
}

void addBenchTrain(CLI::App* bench, GlobalOptions& g) {
  auto t = std::make_shared<TrainArgs>();
  auto* train = bench->add_subcommand(
      "train", "C++ trainer vs the PyTorch reference (CPU) or Hugging Face (CUDA), tokens/s");
  train->add_option("--preset", t->preset, "Preset")->capture_default_str();
  train->add_option("--scheme", t->scheme, "Scheme")->capture_default_str();
  train->add_option("--steps", t->steps, "Timed updates")->capture_default_str();
  train->add_option("--threads", t->threads, "Intra-op threads (both sides)")
      ->capture_default_str();
  train->add_option("--layers", t->layers, "Override depth");
  train->add_option("--width", t->width, "Override width (FFN = 8/3 width unless --ffn)");
  train->add_option("--heads", t->heads, "Override heads");
  train->add_option("--ffn", t->ffn, "Override FFN width");
  train->add_flag("--unfused", t->unfused,
                  "C++ side without the fused kernels (composite ATen ops, torch::optim step)");
  train->add_option("--device", t->device, "cpu, cuda or cuda:N (GPU: tokens/s, MFU, HF baseline)")
      ->capture_default_str();
  train->add_option("--micro-batch", t->microBatch, "Override the micro-batch");
  train->add_option("--seq", t->seq, "Override the sequence length");
  train->add_option("--accum", t->accum, "Override the micro-batches per update");
  train->add_option("--peak-tflops", t->peakTflops,
                    "The device's bf16 peak for MFU (default: known devices)");
  train->add_option("--python", t->python,
                    "Python for the HF baseline (default $DEPTHLAB_PYTHON or python3)");
  train->add_flag("--no-hf", t->noHf, "GPU: skip the Hugging Face baseline");
  train->add_flag(
      "--per-op", t->perOp,
      "CPU: C++ side with every op split over the threads, as PyTorch does (no row split)");
  train->add_flag("--cpp-only", t->cppOnly, "CPU: time the C++ trainer only, no PyTorch reference");
  train
      ->add_option("--rounds", t->rounds,
                   "CPU: time the C++ trainer and the references this many times in turn; "
                   "ratios are the medians of the rounds' ratios")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  train->add_option(
      "--profile", t->profile,
      "GPU: after the timing, profile 2 updates into this Chrome trace (LibTorch 2.x)");
  train->add_flag(
      "--cuda-kernels", t->cudaKernels,
      "GPU: DepthLab's own CUDA kernels on even under DEPTHLAB_CUDA_KERNELS=0 (on by default)");
  train->add_flag_callback(
      "--cuda-graphs", [t] { t->cudaGraphs = 1; },
      "GPU: replay each micro-batch's forward and backward from CUDA graphs "
      "(the default; also under DEPTHLAB_CUDA_GRAPHS=0)");
  train->add_flag_callback(
      "--no-cuda-graphs", [t] { t->cudaGraphs = 0; },
      "GPU: the eager step, kernel by kernel (DEPTHLAB_CUDA_GRAPHS=0 does the "
      "same everywhere)");
  train
      ->add_option("--nproc", t->nproc,
                   "Data-parallel scaling: N ranks launched here against one rank (weak scaling, "
                   "the micro-batch per rank)")
      ->check(CLI::Range(1, 1024));
  train->add_option("--backend", t->backend, "With --nproc: auto, gloo or nccl")
      ->check(CLI::IsMember({"auto", "gloo", "nccl"}));
  train->add_option("--dp-result", t->dpResult, "(internal) where rank 0 writes its figure")
      ->group("");
  train->callback([&g, t] { runBenchTrain(*t, g); });
}

void addBenchGui(CLI::App* bench) {
  auto* gui = bench->add_subcommand(
      "gui", "Dashboard replot time and metric-to-screen latency (offscreen)");
  gui->callback([] {
    // The GUI benchmark lives in its own executable next to this one (the CLI has no Qt).
    const std::string exe = siblingExecutable("depthlab-bench-gui");
    execl(exe.c_str(), exe.c_str(), static_cast<char*>(nullptr));
    throw std::runtime_error("cannot run " + exe + " (built with the GUI, DEPTHLAB_BUILD_GUI=ON)");
  });
}

/// `bench probes`: the model, scheme, threads and device timed, the pruning rows evaluated.
struct ProbeBenchArgs {
  std::string preset = "cpu-demo", scheme = "lns", device = "cpu";
  int threads = 1, pruneSequences = -1;
};

void runBenchProbes(GlobalOptions& g, const ProbeBenchArgs& a) {
  auto c = experiment::presetConfig(a.preset);
  if (!c) throw std::runtime_error("unknown preset '" + a.preset + "'");
  if (a.pruneSequences >= 0) c->probes.pruneSequences = a.pruneSequences;
  auto r = bench::runProbeBench(*c, a.scheme, a.threads, a.device);
  if (g.json) {
    nlohmann::json j = {
        {"preset", a.preset},
        {"device", r.device},
        {"replayed", r.replayed},
        {"step_seconds", r.stepSeconds},
        {"steps", r.steps},
        {"scheduled_seconds", r.scheduledSeconds},
        {"inline_percent", r.inlinePercent},
        {"final_inline_seconds", r.finalInlineSeconds},
        {"overhead_percent", r.overheadPercent},
        {"probe_sequences", c->probes.probeBatch},
        {"prune_sequences",
         depthlab::probes::pruningRows(c->probes.probeBatch, c->probes.pruneSequences).size()}};
    if (r.besideTraining) {
      const auto& b = r.beside;
      j["beside"] = {
          {"train_seconds", b.trainSeconds},           {"held_seconds", b.heldSeconds},
          {"contention_seconds", b.contentionSeconds}, {"overlapped_steps", b.overlappedSteps},
          {"final_seconds", b.finalSeconds},           {"beside_seconds", b.besideSeconds},
          {"overhead_percent", b.overheadPercent}};
    }
    for (const auto& p : r.probes) j["probes"][p.name] = {{"seconds", p.seconds}, {"runs", p.runs}};
    std::cout << j.dump(2) << "\n";
    return;
  }
  std::printf("bench probes: %s (%s) on %s, %d steps, one update %.1f ms\n", a.preset.c_str(),
              a.scheme.c_str(), r.device.c_str(), r.steps, r.stepSeconds * 1000);
  std::printf(
      "  probe batch %d sequences; the pruning sweeps evaluate %zu of them "
      "(--prune-sequences)\n",
      c->probes.probeBatch,
      depthlab::probes::pruningRows(c->probes.probeBatch, c->probes.pruneSequences).size());
  for (const auto& p : r.probes) {
    std::printf("  %-14s %9.1f ms per run, %4d runs at the default cadence = %6.2f s\n",
                p.name.c_str(), p.seconds * 1000, p.runs, p.seconds * p.runs);
  }
  std::printf(
      "  inline, all on the training thread: default cadence %s over %d steps: %.2f s "
      "of probes vs %.1f s of training = %.2f%%\n",
      r.replayed ? "replayed" : "estimated (time x runs per family)", r.steps, r.scheduledSeconds,
      r.steps * r.stepSeconds, r.inlinePercent);
  if (r.replayed) {
    // The final probes (the end-of-run block sweep among them) cost the same whatever the
    // run's length; the rest scales with it. Shown apart so a longer run's share can be read.
    const double train = r.steps * r.stepSeconds;
    std::printf(
        "    of which during training %.2f s = %.2f%%, the final probes after the last "
        "update %.2f s = %.2f%% (once per run, whatever its length)\n",
        r.scheduledSeconds - r.finalInlineSeconds,
        100.0 * (r.scheduledSeconds - r.finalInlineSeconds) / train, r.finalInlineSeconds,
        100.0 * r.finalInlineSeconds / train);
  }
  if (r.besideTraining) {
    const auto& b = r.beside;
    std::printf(
        "  as the training loop runs them, %d steps trained for real (%.1f s):\n"
        "    beside training on the spare core: %.2f s of probes; the training thread held "
        "%.3f s (weight copies, waits), %d updates overlapping a probe %.3f s slower "
        "than the median update%s\n"
        "    final probes, inline on %d cores: %.2f s\n",
        r.steps, b.trainSeconds, b.besideSeconds, b.heldSeconds, b.overlappedSteps,
        b.contentionSeconds,
        b.contentionSeconds < 0 ? " (faster: machine noise, counted as 0)" : "", train::cpuCores(),
        b.finalSeconds);
  } else {
    std::printf("  no core to spare (%d threads of %d cores, or a GPU): the probes run inline\n",
                a.threads, train::cpuCores());
  }
  const double target = 2;
  std::printf("  overhead of the default cadence: %.2f%% of training time (target <= %.0f%%) %s\n",
              r.overheadPercent, target, r.overheadPercent <= target ? "ok" : "MISSED");
}

void addBenchProbes(CLI::App* bench, GlobalOptions& g) {
  auto a = std::make_shared<ProbeBenchArgs>();
  auto* probes = bench->add_subcommand(
      "probes", "Time of each depth probe and the default cadence's overhead");
  probes->add_option("--preset", a->preset, "Preset")->capture_default_str();
  probes->add_option("--scheme", a->scheme, "Scheme")->capture_default_str();
  probes->add_option("--threads", a->threads, "Intra-op threads")->capture_default_str();
  probes->add_option("--device", a->device, "cpu, cuda or cuda:N")->capture_default_str();
  probes
      ->add_option("--prune-sequences", a->pruneSequences,
                   "Probe sequences the pruning sweeps evaluate (0 = all; default: the preset's)")
      ->check(CLI::Range(0, 1 << 20));
  probes->callback([&g, a] { runBenchProbes(g, *a); });
}

}  // namespace

void addBenchCommand(CLI::App& app, GlobalOptions& g) {
  auto* bench = app.add_subcommand("bench", "Benchmarks (speed and memory targets)");
  bench->require_subcommand(1);
  addBenchStore(bench, g);
  addBenchTrain(bench, g);
  addBenchGui(bench);
  addBenchProbes(bench, g);
  addBenchData(bench, g);
  addBenchCheckpoint(bench, g);
}

}  // namespace depthlab::cli
