// See process_memory.h.
#include "util/process_memory.h"

#include <fstream>
#include <string>

namespace depthlab::util {

namespace {

double statusMiB(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string key;
  double kb = 0;
  while (in >> key) {
    if (key == field && in >> kb) return kb / 1024.0;
  }
  return 0;
}

}  // namespace

double residentMiB() { return statusMiB("VmRSS:"); }

double peakResidentMiB() { return statusMiB("VmHWM:"); }

bool resetPeakResident() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace depthlab::util
