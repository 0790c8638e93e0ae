// The checkpoint benchmark behind `depthlab-cli bench checkpoint`: a preset's model and AdamW
// state are saved, verified and loaded back (into the same objects, as a resume does), each timed
// in MB/s of file, with this process's peak resident memory during those steps set against what
// the model and state take; the disk's own write and read speed is measured beside them.
// Pure measurement: the files go to a scratch folder and are deleted.
#pragma once

#include <cstdint>
#include <string>

namespace depthlab::bench {

struct CheckpointBenchOptions {
  std::string preset = "llama-130m";
  std::string dir = "/tmp";  // scratch folder for the checkpoint and the disk probe
  std::string device = "cpu";
  bool verbose = true;  // phase lines on stderr
};

struct CheckpointBenchResult {
  std::string preset, device;
  int64_t parameters = 0;
  double stateMiB = 0;  // model parameters and buffers + AdamW moments
  double fileMiB = 0;
  double saveSeconds = 0, verifySeconds = 0, loadSeconds = 0;
  double saveMiBps = 0, verifyMiBps = 0, loadMiBps = 0;
  double diskWriteMiBps = 0, diskReadMiBps = 0;  // plain write+fsync / uncached read beside them
  double runtimeMiB = 0;      // resident before the model was built (LibTorch, the program)
  double residentMiB = 0;     // resident once model and state exist
  double peakMiB = 0;         // the most resident during save, verify and load
  bool peakMeasured = false;  // false where the kernel would not reset the high-water mark
  double peakOverState() const { return stateMiB > 0 ? (peakMiB - runtimeMiB) / stateMiB : 0; }
  bool roundTripExact = false;  // the loaded weights and moments equal the saved ones
};

CheckpointBenchResult runCheckpointBench(const CheckpointBenchOptions& options);

}  // namespace depthlab::bench
