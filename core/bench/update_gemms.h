// The dense products of one training update timed alone: every block's linear layers (q/k/v
// packed, o, gate/up packed, down) and the LM head, each as its forward product and its two
// backward products (input gradient, weight gradient), under this build's BLAS (through ATen's
// mm, as the trainer's linear layers call it). `depthlab-cli bench train` has the PyTorch
// reference time the same list under its own BLAS (bench/reference_model.py `gemm`), so a
// speed ratio can be split into what the BLAS library does and what the rest of an update does.
// Does not time the attention's per-head products (small, and computed differently by each side).
// Legend: M tokens of one update (batch x seq), K input width, N output width.
#pragma once

#include <string>
#include <vector>

#include "experiment/experiment_config.h"

namespace depthlab::bench {

/// A linear layer's product y (M, N) = x (M, K) @ w (N, K)^T, `count` times in an update.
struct GemmShape {
  int64_t m = 0, k = 0, n = 0, count = 1;
};

/// The linear products of one update of `config` (one micro-batch), each distinct shape once
/// with how often it runs (the blocks' shapes repeat).
std::vector<GemmShape> updateGemmShapes(const experiment::ExperimentConfig& config);
/// The shapes as JSON ([[M, K, N, count], ...]), as the reference script's `gemm --shapes`
/// takes them.
std::string gemmShapesJson(const std::vector<GemmShape>& shapes);
/// How the products use more than one thread: as the C++ trainer's row split does (each of
/// `threads` workers multiplies its share of the M rows on one intra-op thread, side by side:
/// train/row_split.h), or each product split over the threads by the BLAS (the references, and
/// the trainer with --per-op).
enum class GemmThreading { RowSplit, PerOp };
/// Milliseconds for every product of an update: each shape's forward, input and weight
/// gradient products run back to back `reps` times (operands warm in cache, as the kernels see
/// them at their best), the median times its count, summed; on `threads` threads used as
/// `threading` says (one thread: the same either way). Row split: the wall time of the
/// workers' shares, all started together (the weight gradients' sum over the workers is not a
/// product and is left out).
double timeUpdateGemmsMs(const std::vector<GemmShape>& shapes, int threads, int reps = 9,
                         GemmThreading threading = GemmThreading::PerOp);
/// The BLAS this build's matrix products run on: "MKL", "OpenBLAS skylakex", or "ATen's BLAS".
std::string thisBuildBlas();

}  // namespace depthlab::bench
