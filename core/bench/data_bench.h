// The data benchmark behind `depthlab-cli bench data`: tokenization throughput (byte-level and
// SentencePiece) on a generated multi-GB corpus (the default corpus's lines, repeated and
// shuffled, as text and as .jsonl), the data loader's batch rate at the LLaMA-130M shape from
// one core, and, with a training executable, the resident memory and time to the first step
// of training runs reading a billion-token store against one reading a small store.
// Measurement only; the targets are judged by the caller.
#pragma once

#include <cstdint>
#include <string>

namespace depthlab::bench {

struct DataBenchOptions {
  std::string dir;             // work folder (generated corpora and stores; removed unless keep)
  double textGB = 2.0;         // generated text corpus
  double jsonlGB = 0.5;        // generated .jsonl corpus
  double spmMB = 200;          // text SentencePiece encodes
  int spmVocab = 8000;
  int threads = 0;             // tokenizing workers; 0 = every core
  std::string trainExe;        // depthlab-cli for the memory / first-step runs ("" = skip)
  std::string trainPreset = "cpu-demo";
  int trainSteps = 100;
  bool keep = false;
  bool verbose = true;         // progress to stderr
};

struct TrainProbe {
  double peakRssMB = 0, firstStepSeconds = 0, seconds = 0;
  double peakAnonMB = 0, peakFileMB = 0;  // sampled every 20 ms: private memory, mapped files
  int exitCode = 0;
  std::string error;
};

/// One tokenization: input on disk, time (without tokenizer training), rates.
struct Throughput {
  double mb = 0, seconds = 0, mbPerSecond = 0, tokensPerSecond = 0;
  uint64_t tokens = 0;
};

struct DataBenchResult {
  int threads = 0;
  bool pageCached = true;  // the generated corpora were just written: read from the page cache
  Throughput byte, jsonl, spm;  // byte-level text, byte-level .jsonl, SentencePiece text
  double spmTrainSeconds = 0;
  std::string spmSkipped;  // why SentencePiece was not measured ("" when it was)
  double reuseSeconds = 0;         // prepareCorpus on the up-to-date store
  double openStoreSeconds = 0;     // mapping the billion-token store
  uint64_t loaderTokensPerSecond = 0;  // batches of 512 x 256 built on one core
  TrainProbe bigStore, smallStore;
  uint64_t bigStoreTokens = 0, smallStoreTokens = 0;
};

DataBenchResult runDataBench(const DataBenchOptions& o);

}  // namespace depthlab::bench
