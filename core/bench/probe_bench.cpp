// See probe_bench.h.
#include "bench/probe_bench.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>

#include "experiment/background_probes.h"
#include "experiment/probe_schedule.h"
#include "train/thread_share.h"
#include "train/trainer.h"

namespace depthlab::bench {

namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
// Runs at steps 0, every, 2*every, ... below `steps` (the final run is counted separately).
int cadenceRuns(int every, int steps) { return every > 0 ? (steps + every - 1) / every : 0; }
// Trains a fresh model for the preset's steps with the probes as the training loop runs them
// (experiment/train_loop): due ones beside training, the final ones inline on every core.
BesideRun trainWithProbesBeside(const experiment::ExperimentConfig& c, const std::string& scheme,
                                torch::Device device, const data::TokenDataset& data,
                                const experiment::ProbeSchedule& probes) {
  train::Trainer t(experiment::trainerConfig(c), scheme, device);
  experiment::BackgroundProbes beside(probes, 1, /*background=*/true);
  BesideRun b;
  store::WriteBatch sink;
  b.heldSeconds += beside.runDue(0, t.model(), 0, sink);
  std::vector<double> quiet, overlapped;  // update wall times without / with a probe running
  for (int s = 0; s < c.optim.steps; ++s) {
    const bool busy = beside.busy();
    const double s0 = now();
    t.trainStep(data, s);
    const double dt = now() - s0;
    b.trainSeconds += dt;
    (busy ? overlapped : quiet).push_back(dt);
    if (s + 1 < c.optim.steps) b.heldSeconds += beside.runDue(0, t.model(), s + 1, sink);
  }
  b.heldSeconds += beside.settle(0, sink);
  {
    train::IntraOpThreads every(train::cpuCores());
    b.finalSeconds = probes.runDue(t.model(), c.optim.steps, /*final=*/true, sink);
  }
  b.besideSeconds = beside.besideSeconds();
  std::sort(quiet.begin(), quiet.end());
  const double median = quiet.empty() ? 0 : quiet[quiet.size() / 2];
  for (double dt : overlapped) b.contentionSeconds += dt - median;
  b.overlappedSteps = static_cast<int>(overlapped.size());
  // Overlapping updates can come out faster than the median when the machine speeds up
  // meanwhile: that is noise, not a gain from the probes, so it never lowers the overhead.
  b.overheadPercent = 100.0 *
                      (b.heldSeconds + std::max(0.0, b.contentionSeconds) + b.finalSeconds) /
                      (c.optim.steps * median);
  return b;
}

}  // namespace

ProbeBenchResult runProbeBench(const experiment::ExperimentConfig& input, const std::string& scheme,
                               int threads, const std::string& deviceSpec) {
  torch::set_num_threads(threads);
  const torch::Device device = train::resolveDevice(deviceSpec);
  auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
  };
  experiment::ExperimentConfig c = input;
  c.model.vocabSize = 256;
  // Synthetic tokens: timing does not depend on the text.
  std::vector<int32_t> tokens(200000);
  for (size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = static_cast<int32_t>(((i * 2654435761u) >> 8) % 256);
  data::TokenDataset data(tokens, 256, c.data.valFraction, c.model.seqLen, c.optim.batchSize);
  train::Trainer t(experiment::trainerConfig(c), scheme, device);
  ProbeBenchResult r;
  r.device = train::describeDevice(device);
  r.steps = c.optim.steps;
  for (int s = 0; s < 3; ++s) t.trainStep(data, s);
  const int timed = 10;
  sync();
  double t0 = now();
  for (int s = 0; s < timed; ++s) t.trainStep(data, s + 3);
  sync();
  r.stepSeconds = (now() - t0) / timed;

  experiment::ProbeSchedule probes(c.probes, data, device);
  const auto& p = c.probes;
  struct Family {
    const char* name;
    int runs;
  };
  const Family families[] = {
      {"variance", cadenceRuns(p.forwardEvery, r.steps) + 1},  // + final
      {"angular", cadenceRuns(p.angularMatrixEvery, r.steps) + 1},
      {"lens", p.lensEvery > 0 ? cadenceRuns(p.lensEvery, r.steps) + 1 : 0},  // incl. its pass
      {"pruning", cadenceRuns(p.pruningEvery, r.steps) + 1},
      {"block_pruning", p.blockPruningAtEnd ? 1 : 0},
      {"skip_effect", p.pruningEvery > 0 ? 1 : 0},
      {"jacobian", p.jacobianEvery > 0 ? cadenceRuns(p.jacobianEvery, r.steps) + 1 : 0},
      {"spectra", p.spectraAtEnd ? 1 : 0}};
  double total = 0;
  for (const auto& f : families) {
    std::vector<double> times;
    const int reps = std::string(f.name) == "block_pruning" || f.runs == 0 ? 1 : 7;
    for (int i = 0; i < reps; ++i) {
      store::WriteBatch sink;
      sync();
      double s0 = now();
      probes.run(t.model(), 0, {f.name}, sink);
      sync();
      times.push_back(now() - s0);
    }
    std::sort(times.begin(), times.end());
    ProbeTiming pt{f.name, times[times.size() / 2], f.runs};
    total += pt.seconds * pt.runs;
    r.probes.push_back(pt);
  }
  if (device.is_cuda()) {  // a replay of every step would cost minutes of GPU time
    r.replayed = false;
    r.scheduledSeconds = total;
    r.overheadPercent = r.inlinePercent = 100.0 * total / (r.steps * r.stepSeconds);
    return r;
  }
  // The overhead: replay the default cadence exactly as the run loop calls it (families that
  // fall due at the same step share one forward pass).
  double scheduled = 0;
  for (int s = 0; s < r.steps; ++s) {
    store::WriteBatch sink;
    scheduled += probes.runDue(t.model(), s, /*final=*/false, sink);
  }
  store::WriteBatch sink;
  r.finalInlineSeconds = probes.runDue(t.model(), r.steps, /*final=*/true, sink);
  scheduled += r.finalInlineSeconds;
  r.scheduledSeconds = scheduled;
  r.overheadPercent = r.inlinePercent = 100.0 * scheduled / (r.steps * r.stepSeconds);
  r.besideTraining = experiment::probesFitBeside(device, threads, train::cpuCores(), 1);
  if (r.besideTraining) {
    r.beside = trainWithProbesBeside(c, scheme, device, data, probes);
    r.overheadPercent = r.beside.overheadPercent;
  }
  return r;
}

}  // namespace depthlab::bench
