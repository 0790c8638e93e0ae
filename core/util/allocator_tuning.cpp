// See allocator_tuning.h.
#include "util/allocator_tuning.h"

#include <cstdlib>  // defines __GLIBC__ where glibc is the C library

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace depthlab::util {

bool keepFreedMemoryForReuse() {
#if defined(__GLIBC__)
  // Allocations up to 32 MiB (glibc's largest mmap threshold on 64-bit) come from the heap,
  // and the heap is never trimmed back; both fixed values also turn off glibc's dynamic
  // threshold adjustment.
  const bool mmapOk = mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024) == 1;
  const bool trimOk = mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;
  return mmapOk && trimOk;
#else
  return false;
#endif
}

}  // namespace depthlab::util
