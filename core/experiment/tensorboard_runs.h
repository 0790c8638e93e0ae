// TensorBoard out and in. Export: each run's scalars under their store keys (loss_train, lr,
// loss_val, ...) and each per-layer metric as one tag a layer (`variance/layer_07`, l 1-based as
// the paper counts), in event files TensorBoard reads (W&B through `wandb sync
// --sync-tensorboard`). Import: a folder of event files (PyTorch's SummaryWriter, TensorFlow,
// Lightning) as one run, its loss, validation loss, learning rate and gradient norm by their
// usual tag names, and `<metric>/layer_N` series of the lab's per-layer metrics. The event
// format itself is the depthlab-tensorboard helper's (app/tensorboard), run out of process.
// Not here: drawing figures (the CLI has depthlab-export render them; they come in as PNGs).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "store/run_store.h"

namespace depthlab::experiment {

struct TensorBoardExport {
  std::vector<std::string> files;  // one event file a run, in DIR/<id>-<name>/
  size_t values = 0, images = 0;
};

/// A figure of a run as an image of its event file (TensorBoard's Images tab).
struct TensorBoardImage {
  int64_t runId = 0;
  std::string tag;  // "figures/angular"
  int64_t step = 0;
  std::string png;  // a PNG file, read when the events are written
};

/// Writes the runs (and `images` of them) into `dir` (created). Throws std::runtime_error (no
/// helper, unknown run, a PNG that cannot be read).
TensorBoardExport exportToTensorBoard(store::RunStore& store, const std::vector<int64_t>& runIds,
                                      const std::string& dir,
                                      const std::vector<TensorBoardImage>& images = {});

/// The store key a TensorBoard scalar tag stands for ("train/loss" -> loss_train, "eval/loss"
/// -> loss_val, "learning_rate" -> lr, a lab key as itself); "" when none.
std::string scalarKeyOfTag(const std::string& tag);

struct TensorBoardImport {
  int64_t runId = 0;
  std::string source;                       // the folder read
  std::map<std::string, std::string> tags;  // tag -> the store key or per-layer metric
  std::vector<std::string> skippedTags;     // none of the lab's metrics
  std::vector<std::string> warnings;        // files cut short
  size_t values = 0;
};

/// Reads `dir`'s event files as one run (or, when it has none itself, each subfolder that has
/// some as a run, as TensorBoard shows them) into its own group "tb-<name>", tagged
/// "tensorboard". `scheme`: what the run trained (a lab scheme id) for Compare. Throws
/// std::runtime_error on a corrupt event file or nothing to import, writing nothing.
std::vector<TensorBoardImport> importTensorBoard(store::RunStore& store, const std::string& dir,
                                                 const std::string& name,
                                                 const std::string& scheme);

}  // namespace depthlab::experiment
