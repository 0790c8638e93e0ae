// The inside of the forward statistics (trace_stats.cpp), shared by depth_probes.cpp: the form
// of statsOfTrace that takes the pad mask already made, and the one device-to-host copy of many
// small results. Not part of the probes' interface (depth_probes.h is).
#pragma once

#include <torch/torch.h>

#include <vector>

#include "probes/depth_probes.h"

namespace depthlab::probes {

/// statsOfTrace with the real-token mask given (realTokens(targets); undefined: every token
/// counts), so a caller that has made it does not make it again.
ForwardProbes statsOfTraceMasked(const model::ForwardTrace& trace, const torch::Tensor& real,
                                 const ForwardProbeOptions& options);

/// The float64 values of n same-shaped tensors (scalars, or (B) rows), row after row, in one
/// device-to-host copy.
std::vector<double> hostValues(const std::vector<torch::Tensor>& parts);

}  // namespace depthlab::probes
