// GradientSync: data-parallel gradient averaging overlapped with the backward pass, as
// PyTorch's DistributedDataParallel does it. Parameters are packed, in reverse registration
// order (roughly the order backward produces their gradients), into buckets of about
// `bucketMB`; a hook after each parameter's gradient accumulation copies the gradient into its
// bucket, and a full bucket's all-reduce starts at once, while backward goes on. Buckets start
// in index order on every rank (collectives must match). finish() starts what is left, waits,
// and writes the averaged gradients back. Armed for the last micro-batch of an update only
// (earlier ones accumulate locally, like DDP's no_sync). Not thread-safe; one per model.
#pragma once

#include <torch/torch.h>

#include <memory>
#include <vector>

#include "distributed/process_group.h"

namespace depthlab::distributed {

class GradientSync {
 public:
  /// `params`: the model's parameters in registration order (duplicates, as tied weights
  /// give, are synchronised once).
  GradientSync(DistContext& dist, const std::vector<torch::Tensor>& params, double bucketMB = 25);
  ~GradientSync();
  GradientSync(const GradientSync&) = delete;
  GradientSync& operator=(const GradientSync&) = delete;

  /// The next backward is the update's last: its gradients are reduced as they appear.
  void arm();
  /// After that backward: reduces what has not started yet, waits for every bucket and leaves
  /// each parameter's gradient the mean over the ranks. Parameters without a gradient keep none.
  void finish();
  /// Drops a half-done reduction (after an exception); the next arm() starts afresh.
  void reset();
  size_t bucketCount() const;
  /// Buckets whose all-reduce the last finish() found already started during backward (the
  /// overlap; the rest started in finish()).
  size_t startedDuringBackward() const;

  struct State;

 private:
  std::shared_ptr<State> m_state;
};

}  // namespace depthlab::distributed
