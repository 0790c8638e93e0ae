// The grain the CPU autograd functions (model/fused_ops.cpp, model/packed_ops.cpp,
// model/causal_attention.cpp) give at::parallel_for: ATen's own elementwise grain, in units
// of `elementsPerUnit` elements (a row, a head's slice). Internal to core/model.
#pragma once

#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdint>

namespace depthlab::model {

inline int64_t grainFor(int64_t elementsPerUnit) {
  return std::max<int64_t>(1, at::internal::GRAIN_SIZE / std::max<int64_t>(1, elementsPerUnit));
}

}  // namespace depthlab::model
