// See openblas_kernels.h.
#include "util/openblas_kernels.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

namespace depthlab::util {

CpuVectorFeatures cpuVectorFeatures() {
  CpuVectorFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512cd");
#endif
  return f;
}

std::string betterOpenBlasCore(const std::string& picked, const CpuVectorFeatures& cpu) {
  // OpenBLAS's x86 cores without AVX2 kernels: what an unknown CPU falls back to.
  static const std::set<std::string> kFallbacks = {
      "prescott", "core2",   "penryn",     "dunnington", "nehalem",   "sandybridge",
      "atom",     "nano",    "katmai",     "coppermine", "northwood", "banias",
      "athlon",   "opteron", "opteron_sse3", "barcelona", "bobcat",   "unknown"};
  std::string name = picked;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!kFallbacks.count(name) || !cpu.avx2 || !cpu.fma) return "";
  return cpu.avx512 ? "SkylakeX" : "Haswell";
}

std::string openBlasCore() {
  using CoreName = char* (*)();
  auto fn = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (!fn) return "";
  const char* name = fn();
  std::string out = name ? name : "";
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

void ensureOpenBlasKernels(char** argv) {
  const char* chosen = std::getenv("OPENBLAS_CORETYPE");
  if (chosen && *chosen) return;  // the user's (or an earlier pass's) choice stands
  const std::string core = betterOpenBlasCore(openBlasCore(), cpuVectorFeatures());
  if (core.empty()) return;
  setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  execv("/proc/self/exe", argv);
  unsetenv("OPENBLAS_CORETYPE");  // exec failed: carry on as loaded, and say nothing to children
}

}  // namespace depthlab::util
