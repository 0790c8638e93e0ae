// See checkpoint_bench.h.
#include "bench/checkpoint_bench.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "experiment/presets.h"
#include "model/decoder.h"
#include "train/checkpoint.h"
#include "train/checkpoint_tensors.h"
#include "train/fused_adam.h"
#include "train/trainer.h"
#include "util/process_memory.h"

namespace depthlab::bench {

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double tensorsMiB(const std::vector<train::NamedTensor>& ts) {
  double bytes = 0;
  for (const auto& nt : ts) bytes += static_cast<double>(nt.tensor.nbytes());
  return bytes / (1 << 20);
}

// The disk's own speed for `mib` MiB: written in 64 MiB blocks and fsynced, then read back after
// dropping the file from the page cache.
void probeDisk(const std::string& path, double mib, CheckpointBenchResult& r) {
  std::vector<char> block(64u << 20, '\x5a');
  const int blocks = std::max(1, static_cast<int>(mib / 64));
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  auto t0 = Clock::now();
  bool ok = true;
  for (int i = 0; i < blocks && ok; ++i)
    ok = ::write(fd, block.data(), block.size()) == static_cast<ssize_t>(block.size());
  ok = ok && ::fsync(fd) == 0;
  const double wrote = since(t0);
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  if (ok) r.diskWriteMiBps = blocks * 64.0 / wrote;
  fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    t0 = Clock::now();
    int64_t total = 0;
    for (ssize_t n; (n = ::read(fd, block.data(), block.size())) > 0;) total += n;
    r.diskReadMiBps = static_cast<double>(total) / (1 << 20) / since(t0);
    ::close(fd);
  }
  ::unlink(path.c_str());
}

void dropFromCache(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

}  // namespace

CheckpointBenchResult runCheckpointBench(const CheckpointBenchOptions& o) {
  auto say = [&](const char* what) {
    if (o.verbose) std::fprintf(stderr, "bench checkpoint: %s\n", what);
  };
  CheckpointBenchResult r;
  r.preset = o.preset;
  const experiment::ExperimentConfig c = experiment::requirePreset(o.preset);
  const torch::Device device = train::resolveDevice(o.device);
  r.device = train::describeDevice(device);
  r.runtimeMiB = util::residentMiB();
  say("building the model and its AdamW state");
  model::Decoder model(c.model, c.options, c.schemes.empty() ? "lns" : c.schemes.front());
  model->to(device);
  train::FusedAdamW optimizer(model->parameters(), torch::optim::AdamWOptions(c.optim.lr));
  train::createMissingOptimizerState(optimizer);
  {
    torch::NoGradGuard noGrad;  // moments that differ from the weights, so a mix-up would show
    for (auto& nt : train::optimizerSnapshot(optimizer).tensors) nt.tensor.normal_();
  }
  for (const auto& p : model->parameters()) r.parameters += p.numel();
  r.stateMiB = tensorsMiB(train::modelTensors(model)) +
               tensorsMiB(train::optimizerSnapshot(optimizer).tensors);
  r.residentMiB = util::residentMiB();

  const std::string path =
      (std::filesystem::path(o.dir) / ("depthlab-bench-" + std::to_string(::getpid()) + ".ckpt"))
          .string();
  train::CheckpointMeta meta;
  meta.step = 1;
  meta.scheme = "lns";
  meta.config = nlohmann::json::object();
  // The disk first, the same amount written and read as the checkpoint will be, so both meet it
  // alike (a thin-provisioned disk writes fresh blocks slower than reused ones).
  say("measuring the disk");
  probeDisk(path + ".disk", std::min(r.stateMiB, 4096.0), r);
  r.peakMeasured = util::resetPeakResident();
  say("saving");
  auto t0 = Clock::now();
  train::saveCheckpoint(path, model, &optimizer, meta);
  r.saveSeconds = since(t0);
  r.fileMiB = static_cast<double>(std::filesystem::file_size(path)) / (1 << 20);
  auto sums = [&] {  // one number per tensor: enough to see a lost or misplaced one
    std::vector<double> out;
    for (const auto& nt : train::modelTensors(model)) out.push_back(nt.tensor.sum().item<double>());
    for (const auto& nt : train::optimizerSnapshot(optimizer).tensors) {
      out.push_back(nt.tensor.sum().item<double>());
    }
    return out;
  };
  const std::vector<double> before = sums();
  dropFromCache(path);
  say("verifying");
  t0 = Clock::now();
  train::verifyCheckpoint(path, {});
  r.verifySeconds = since(t0);
  {
    torch::NoGradGuard noGrad;  // spoil what is loaded, so the load must restore it
    for (auto& p : model->parameters()) p.zero_();
    for (auto& nt : train::optimizerSnapshot(optimizer).tensors) nt.tensor.zero_();
  }
  dropFromCache(path);
  say("loading");
  t0 = Clock::now();
  train::loadCheckpoint(path, model, &optimizer, device);
  r.loadSeconds = since(t0);
  r.peakMiB = util::peakResidentMiB();
  r.roundTripExact = sums() == before;
  std::filesystem::remove(path);
  r.saveMiBps = r.fileMiB / r.saveSeconds;
  r.verifyMiBps = r.fileMiB / r.verifySeconds;
  r.loadMiBps = r.fileMiB / r.loadSeconds;
  return r;
}

}  // namespace depthlab::bench
