// This process's resident memory from /proc/self/status (Linux): now, the high-water mark, and
// resetting that mark (/proc/self/clear_refs) so a phase's own peak can be measured. For
// benchmarks and memory-bound tests; nothing here allocates on their behalf.
#pragma once

namespace depthlab::util {

/// VmRSS in MiB (0 where /proc is not there).
double residentMiB();
/// VmHWM in MiB: the most resident memory since start or the last resetPeakResident().
double peakResidentMiB();
/// Sets the high-water mark to the current resident size; false where the kernel refuses.
bool resetPeakResident();

}  // namespace depthlab::util
