// `depthlab-cli bench checkpoint`: save, verify and load a preset's model and AdamW state,
// against the targets (peak resident memory at most 1.1x the model and state; save and load at
// least 1 GiB/s of file, or the disk's own speed where that is lower). Prints measurements
// only; the work is bench::runCheckpointBench.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "bench/checkpoint_bench.h"
#include "cli_common.h"

namespace depthlab::cli {

void addBenchCheckpoint(CLI::App* bench, GlobalOptions& g) {
  auto o = std::make_shared<bench::CheckpointBenchOptions>();
  auto* cmd = bench->add_subcommand(
      "checkpoint", "Checkpoint save / verify / load speed and peak memory at a preset's size");
  cmd->add_option("--preset", o->preset, "Preset whose model and AdamW state are checkpointed")
      ->capture_default_str();
  cmd->add_option("--dir", o->dir, "Scratch folder (needs the checkpoint's size free)")
      ->capture_default_str();
  cmd->add_option("--device", o->device, "cpu or cuda[:N]")->capture_default_str();
  cmd->callback([&g, o] {
    o->verbose = !g.json;
    const auto r = bench::runCheckpointBench(*o);
    constexpr double kTargetMiBps = 1024;
    const double saveTarget =
        std::min(kTargetMiBps, r.diskWriteMiBps > 0 ? r.diskWriteMiBps : kTargetMiBps);
    const double loadTarget =
        std::min(kTargetMiBps, r.diskReadMiBps > 0 ? r.diskReadMiBps : kTargetMiBps);
    const bool memoryOk = r.peakMeasured && r.peakOverState() <= 1.1;
    if (g.json) {
      std::cout << nlohmann::json{{"preset", r.preset},
                                  {"device", r.device},
                                  {"parameters", r.parameters},
                                  {"state_mib", r.stateMiB},
                                  {"file_mib", r.fileMiB},
                                  {"save_s", r.saveSeconds},
                                  {"verify_s", r.verifySeconds},
                                  {"load_s", r.loadSeconds},
                                  {"save_mib_per_s", r.saveMiBps},
                                  {"verify_mib_per_s", r.verifyMiBps},
                                  {"load_mib_per_s", r.loadMiBps},
                                  {"disk_write_mib_per_s", r.diskWriteMiBps},
                                  {"disk_read_mib_per_s", r.diskReadMiBps},
                                  {"runtime_mib", r.runtimeMiB},
                                  {"resident_mib", r.residentMiB},
                                  {"peak_mib", r.peakMiB},
                                  {"peak_measured", r.peakMeasured},
                                  {"peak_over_state", r.peakOverState()},
                                  {"round_trip_exact", r.roundTripExact}}
                       .dump(2)
                << "\n";
      return;
    }
    const char* ok[] = {"MISSED", "ok"};
    std::printf(
        "bench checkpoint: preset %s on %s, %.1f M parameters; model + AdamW state %.0f MiB, "
        "file %.0f MiB\n",
        r.preset.c_str(), r.device.c_str(), static_cast<double>(r.parameters) / 1e6, r.stateMiB,
        r.fileMiB);
    std::printf("  save     %6.2f s  %6.0f MiB/s (fsync included; target >= %.0f) %s\n",
                r.saveSeconds, r.saveMiBps, saveTarget, ok[r.saveMiBps >= saveTarget]);
    std::printf("  verify   %6.2f s  %6.0f MiB/s (read and hashed, not cached)\n", r.verifySeconds,
                r.verifyMiBps);
    std::printf(
        "  load     %6.2f s  %6.0f MiB/s (verified on the way, not cached; target >= %.0f) %s\n",
        r.loadSeconds, r.loadMiBps, loadTarget, ok[r.loadMiBps >= loadTarget]);
    std::printf("  disk     write %.0f MiB/s (fsync), read %.0f MiB/s, measured beside them\n",
                r.diskWriteMiBps, r.diskReadMiBps);
    if (r.peakMeasured) {
      std::printf(
          "  memory   peak resident %.0f MiB = runtime %.0f + %.3fx the model and state "
          "(target <= 1.1x) %s\n",
          r.peakMiB, r.runtimeMiB, r.peakOverState(), ok[memoryOk]);
    } else {
      std::printf(
          "  memory   not measured: this kernel would not reset the peak "
          "(/proc/self/clear_refs)\n");
    }
    std::printf("  loaded   %s\n",
                r.roundTripExact ? "equal to what was saved" : "DIFFERS from what was saved");
  });
}

}  // namespace depthlab::cli
