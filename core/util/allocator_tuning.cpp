// See allocator_tuning.h.
#include "util/allocator_tuning.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace depthlab::util {

void tuneAllocatorForTraining() {
#if defined(__GLIBC__)
  static const bool done = [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);   // the maximum glibc accepts: blocks below 32 MiB come from the heap
    mallopt(M_TRIM_THRESHOLD, 1 << 30);    // keep up to 1 GiB of free heap
    mallopt(M_TOP_PAD, 256 << 20);         // grow the heap in large steps
    return true;
  }();
  (void)done;
#endif
}

}  // namespace depthlab::util
