// keepFreedMemoryForReuse: after it, large blocks freed and allocated again are served from
// memory the process already touched (no page faults), which is what saves a training step
// its per-step page faults.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cstdlib>
#include <cstring>

#include "util/allocator_tuning.h"

namespace {

long minorFaults() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_minflt;
}

}  // namespace

TEST(AllocatorTuning, FreedLargeBlocksAreReusedWithoutPageFaults) {
#if !defined(__GLIBC__)
  GTEST_SKIP() << "glibc only";
#else
  ASSERT_TRUE(depthlab::util::keepFreedMemoryForReuse());
  // Like a training step: several large buffers live at once, then all are freed. With
  // glibc's dynamic thresholds the freed heap top (24 MiB here) exceeds the trim threshold
  // and goes back to the kernel, so every round faults its pages in again (~6,000 faults).
  // (LibTorch allocates with posix_memalign; glibc 2.36's memalign reuses freed chunks less
  // predictably in this synthetic pattern, so the effect on real training steps is measured
  // by `depthlab-cli bench train`, which reports page faults per step.)
  constexpr size_t kBytes = 8 << 20;
  auto round = [&] {
    void* blocks[3] = {};
    for (auto& b : blocks) {
      b = std::malloc(kBytes);
      ASSERT_NE(b, nullptr);
      std::memset(b, 1, kBytes);
    }
    for (auto* b : blocks) std::free(b);
  };
  round();  // the heap grows once
  round();
  const long before = minorFaults();
  for (int i = 0; i < 5; ++i) round();
  EXPECT_LT(minorFaults() - before, 200);
#endif
}
