// Writes the fuzzers' first seeds into tests/fuzz/corpus/<target>/: a valid config (the
// cpu-demo preset), a small .safetensors file and a checkpoint of the tiny model fuzz_checkpoint
// loads (prefixed with its mode byte). Run by scripts/fuzz.sh when a corpus folder is empty.
#include <cstdio>
#include <fstream>
#include <map>
#include <string>

#include "experiment/presets.h"
#include "io/safetensors.h"
#include "model/decoder.h"
#include "tiny_model.h"
#include "train/checkpoint.h"

using namespace depthlab;

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const std::string root = argv[1];
  std::ofstream(root + "/config/cpu-demo.json") << experiment::toJson(*experiment::presetConfig("cpu-demo")).dump(1);
  std::map<std::string, torch::Tensor> t = {{"a", torch::arange(6, torch::kFloat32).view({2, 3})},
                                            {"b", torch::ones({4}, torch::kBFloat16)}};
  io::saveSafetensors(root + "/safetensors/small.safetensors", t);
  const experiment::ExperimentConfig c = fuzz::tinyModelConfig();
  model::Decoder m(c.model, c.options, "lns");
  train::CheckpointMeta meta;
  meta.step = 3;
  meta.scheme = "lns";
  meta.runId = 1;
  meta.config = experiment::toJson(c);
  const std::string tmp = root + "/checkpoint/.raw";
  train::saveCheckpoint(tmp, m, nullptr, meta);
  std::ifstream in(tmp, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(tmp.c_str());
  for (char mode : {'\0', '\1'}) {
    std::ofstream(root + "/checkpoint/tiny-mode" + std::to_string(int(mode)) + ".bin", std::ios::binary)
        << mode << bytes;
  }
  return 0;
}
