// See cuda_graph_step.h. The capture follows PyTorch's whole-network recipe (torch.cuda.graphs):
// warm up on a side stream, gradients set to none so the first graph's backward allocates
// them from the graph's private pool, capture on that side stream, replay on the current one.
#include "train/cuda_graph_step.h"

#include <stdexcept>
#include <utility>

#include "kernels/cpu_kernels.h"
#include "model/cuda_ops.h"
#include "train/micro_step.h"
#include "util/env_switch.h"

#ifdef DEPTHLAB_WITH_CUDA
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

namespace depthlab::train {

namespace {

// What a captured graph depends on besides the tensors it reads: a change means recapture.
struct GraphKey {
  int64_t batch = -1, seqLen = -1;
  int count = 0;
  bool autocast = false, kernels = false, residualFusion = false, fused = false;
  std::vector<const void*> storage;  // every parameter's data pointer, in order
  std::vector<int> dtypes;

  bool operator==(const GraphKey& o) const {
    return batch == o.batch && seqLen == o.seqLen && count == o.count && autocast == o.autocast &&
           kernels == o.kernels && residualFusion == o.residualFusion && fused == o.fused &&
           storage == o.storage && dtypes == o.dtypes;
  }
};

}  // namespace

bool CudaGraphStep::enabledByEnvironment() {
  static const bool on = util::envSwitch("DEPTHLAB_CUDA_GRAPHS", true);
  return on;
}

#ifndef DEPTHLAB_WITH_CUDA

struct CudaGraphStep::Impl {};
CudaGraphStep::CudaGraphStep(model::Decoder, std::vector<torch::Tensor>, torch::Device) {}
CudaGraphStep::~CudaGraphStep() = default;
bool CudaGraphStep::built() { return false; }
torch::Tensor CudaGraphStep::run(const data::TokenBatch&, int, int, bool) {
  throw std::logic_error("CUDA graphs: DepthLab was built against a LibTorch without CUDA");
}
int64_t CudaGraphStep::captures() const { return 0; }
int64_t CudaGraphStep::replays() const { return 0; }

#else

struct CudaGraphStep::Impl {
  model::Decoder model;
  std::vector<torch::Tensor> params;
  torch::Device device;

  GraphKey key;                                // of the graphs below
  std::unique_ptr<at::cuda::CUDAGraph> first;  // micro-batch 0: creates the gradients
  std::unique_ptr<at::cuda::CUDAGraph> later;  // micro-batches 1..count-1: add into them
  torch::Tensor inputs, targets;               // (B, T) int64, static inputs of both graphs
  torch::Tensor firstLoss, laterLoss;          // () float32, static outputs
  std::vector<torch::Tensor> grads;            // the gradients the first graph writes, by param
  int64_t nCaptures = 0, nReplays = 0;

  Impl(model::Decoder m, std::vector<torch::Tensor> p, torch::Device d)
      : model(std::move(m)), params(std::move(p)), device(d) {}

  GraphKey keyFor(const data::TokenBatch& b, int count, bool autocast) const {
    GraphKey k;
    k.batch = b.batch;
    k.seqLen = b.seqLen;
    k.count = count;
    k.autocast = autocast;
    k.kernels = model::cudaKernelsEnabled();
    k.residualFusion = model::cudaResidualFusionEnabled();
    k.fused = kernels::fusedKernelsEnabled();
    for (const auto& p : params) {
      k.storage.push_back(p.data_ptr());
      k.dtypes.push_back(static_cast<int>(p.scalar_type()));
    }
    return k;
  }

  void setGradsNone() {
    for (auto& p : params) p.mutable_grad() = torch::Tensor();
  }

  void release() {
    setGradsNone();
    grads.clear();
    firstLoss = laterLoss = inputs = targets = torch::Tensor();
    first.reset();
    later.reset();
    key = GraphKey{};
  }

  void load(const data::TokenBatch& b) {
    const auto [x, y] = batchViews(b);
    // Pageable host memory: the copy is staged before copy_ returns, so no wait is needed.
    inputs.copy_(x, /*non_blocking=*/true);
    targets.copy_(y, /*non_blocking=*/true);
  }

  // Forward and backward on the static inputs: what the graphs hold. Returns the loss.
  torch::Tensor microStep(int count, bool autocast) {
    return forwardBackward(model, inputs, targets, autocast, static_cast<double>(count));
  }

  void capture(const data::TokenBatch& b, int count, bool autocast) {
    release();
    c10::cuda::CUDAGuard deviceGuard(device);
    torch::cuda::synchronize(device.index());
    // The eager steps' cached blocks go back to the device: the graphs' pool needs its own.
    c10::cuda::CUDACachingAllocator::emptyCache();
    auto opts = torch::TensorOptions().dtype(torch::kInt64).device(device);
    inputs = torch::empty({b.batch, b.seqLen}, opts);
    targets = torch::empty({b.batch, b.seqLen}, opts);
    load(b);

    auto caller = c10::cuda::getCurrentCUDAStream(device.index());
    auto side = c10::cuda::getStreamFromPool(/*isHighPriority=*/false, device.index());
    at::cuda::CUDAEvent ready;
    ready.record(caller);
    ready.block(side);
    {
      c10::cuda::CUDAStreamGuard streamGuard(side);
      // Warm-up on the capture stream (cuBLAS workspaces, lazy initialisation); dropped.
      setGradsNone();
      microStep(count, autocast);
      setGradsNone();
      side.synchronize();

      first = std::make_unique<at::cuda::CUDAGraph>();
      captureInto(*first, c10::MempoolId_t{0, 0}, count, autocast, firstLoss);
      for (const auto& p : params) grads.push_back(p.grad());
      if (count > 1) {
        later = std::make_unique<at::cuda::CUDAGraph>();
        captureInto(*later, first->pool(), count, autocast, laterLoss);
      }
    }
    at::cuda::CUDAEvent captured;
    captured.record(side);
    captured.block(caller);
    key = keyFor(b, count, autocast);
  }

  void captureInto(at::cuda::CUDAGraph& g, c10::MempoolId_t pool, int count, bool autocast,
                   torch::Tensor& loss) {
    g.capture_begin(pool);
    try {
      loss = microStep(count, autocast);
    } catch (...) {
      try {
        g.capture_end();  // ends the (invalidated) capture; its own error is not the cause
      } catch (...) {}
      throw;
    }
    g.capture_end();
    ++nCaptures;
  }
};

CudaGraphStep::CudaGraphStep(model::Decoder model, std::vector<torch::Tensor> params,
                             torch::Device device)
    : m(std::make_unique<Impl>(std::move(model), std::move(params), device)) {
  if (!device.is_cuda()) throw std::invalid_argument("CUDA graphs need a CUDA device");
}

CudaGraphStep::~CudaGraphStep() = default;

bool CudaGraphStep::built() { return true; }

torch::Tensor CudaGraphStep::run(const data::TokenBatch& batch, int index, int count,
                                 bool autocast) {
  if (index == 0 && !(m->keyFor(batch, count, autocast) == m->key)) {
    try {
      m->capture(batch, count, autocast);
    } catch (...) {
      m->release();
      throw;
    }
  }
  if (!m->first || (index > 0 && !m->later) || index >= m->key.count ||
      batch.batch != m->key.batch || batch.seqLen != m->key.seqLen || count != m->key.count) {
    throw std::logic_error("CudaGraphStep: micro-batch " + std::to_string(index) + " of " +
                           std::to_string(count) + " does not match the update's first");
  }
  m->load(batch);
  c10::cuda::CUDAGuard deviceGuard(m->device);
  // The parameters point at the graphs' gradients whatever the caller did with them since.
  for (size_t i = 0; i < m->params.size(); ++i) m->params[i].mutable_grad() = m->grads[i];
  at::cuda::CUDAGraph& g = index == 0 ? *m->first : *m->later;
  g.replay();
  ++m->nReplays;
  return (index == 0 ? m->firstLoss : m->laterLoss).clone();
}

int64_t CudaGraphStep::captures() const { return m->nCaptures; }
int64_t CudaGraphStep::replays() const { return m->nReplays; }

#endif

}  // namespace depthlab::train
