// ExperimentConfig: everything that defines a DepthLab experiment, as a plain struct that
// round-trips through JSON (the same JSON the run store keeps). Grouped like nanoGPT: model,
// scheme, data, optimizer, run. validate() names the offending field. No torch here.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace depthlab::experiment {

struct ModelConfig {
  int vocabSize = 256;        // set from the tokenizer at run time
  int dModel = 64;            // C, residual width
  int nLayers = 4;            // L, blocks
  int nHeads = 4;             // H; head dim = dModel / nHeads
  int dFF = 172;              // SwiGLU hidden width
  int seqLen = 64;            // T, training context
  std::string norm = "rmsnorm";   // rmsnorm | layernorm
  double normEps = 1e-6;
  double initStd = 0.02;      // N(0, initStd) for every Linear
  double embedStd = 0.02;     // 0.02 (paper), sqrt(2/5) ~ 0.632 (older official code)
  double ropeBase = 10000.0;
};

struct SchemeOptions {
  double mixLnAlpha = 0.25;       // mix_ln: first round(alpha*L) blocks are Post-LN
  bool scaledInit = false;        // o_proj/down_proj std initStd/sqrt(2L)
  bool depthScaledInit = false;   // block l's matrices std initStd/sqrt(2l)
  bool skipInit = false;          // learnable scalar per branch, init 1/sqrt(L)
  bool layerScale = false;        // per-channel branch scale, init layerScaleInit
  double layerScaleInit = 1e-4;
  std::string lnsPlacement = "after_norm";  // lns only: see kLnsPlacements
  double lnsLearnableLr = 1e-3;   // lns_learnable: lr of the per-channel scales
};

struct DataConfig {
  std::string corpus;             // text file/folder or .bin tokens; "" = default corpus
  std::string tokenizer = "byte"; // byte | spm:N (train BPE of size N) | spm:/path/x.model
  double valFraction = 0.05;      // tail of the token stream held out for validation
};

struct OptimConfig {
  std::string optimizer = "adam"; // adam | adamw
  double lr = 1e-3;               // peak learning rate
  double minLrRatio = 0.1;        // cosine floor as a fraction of peak
  int warmupSteps = 100;
  int steps = 1000;               // optimizer updates
  int batchSize = 16;             // sequences per micro-batch
  int gradAccum = 1;              // micro-batches per update
  bool autoMicroBatch = false;    // CUDA: choose the micro-batch from free GPU memory, keeping
                                  // batchSize x gradAccum (train/micro_batch.h); recorded after
  double weightDecay = 0.0;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double gradClip = 0.0;          // 0 = off (as in the paper)
};

struct RunConfig {
  int64_t seed = 1;
  std::string device = "cpu";     // cpu | cuda | cuda:N
  int threads = 0;                // intra-op threads; 0 = the measured default
  int evalEvery = 100;            // steps between validation passes (and at the end)
  int evalBatches = 8;            // fixed validation batches
  int checkpointEvery = 0;        // steps between checkpoints; 0 = by wall time only
  double checkpointMinutes = 10;  // wall time between checkpoints; 0 = off
  int checkpointKeep = 3;         // the last N checkpoints kept (plus the best and the final)
  int logEvery = 1;               // steps between train-loss rows
  bool bf16 = false;              // autocast to bf16 (CUDA only)
};

/// Depth probes (core/probes): what runs how often, in optimizer steps (0 = never).
struct ProbeConfig {
  int probeBatch = 8;             // held-out validation sequences the probes run on
  int forwardEvery = 25;          // variance, adjacent angular distance, BI, effectiveness
  int angularMatrixEvery = 100;   // the full (l, n) angular-distance matrix
  int pruningEvery = 300;         // single-layer pruning sweep (L+1 evaluations)
  bool blockPruningAtEnd = true;  // Gromov block pruning (l, n) matrix at the end
  int jacobianEvery = 0;          // Jacobian-to-identity estimate (off by default)
  int jacobianSamples = 4;        // random vector-Jacobian products per block
  bool lastTokenOnly = false;     // angular distance / BI on the last position only
  bool pruneRenumber = false;     // LNS pruning: renumber survivors' 1/sqrt(l)
  double lazyThreshold = 0.05;    // E_l below: lazy
  double lowThreshold = 0.2;      // E_l below: low; at or above: effective
};

struct ExperimentConfig {
  std::string preset;             // name it was derived from, informational
  std::string name;               // run-group name; "" = generated
  std::vector<std::string> schemes = {"pre_ln", "lns"};
  ModelConfig model;
  SchemeOptions options;
  DataConfig data;
  OptimConfig optim;
  RunConfig run;
  ProbeConfig probes;
};

extern const std::vector<std::string> kSchemes;
extern const std::vector<std::string> kLnsPlacements;

nlohmann::json toJson(const ExperimentConfig& c);
/// Missing keys keep their defaults; unknown keys and wrong types throw ConfigError.
ExperimentConfig configFromJson(const nlohmann::json& j);
ExperimentConfig loadConfigFile(const std::string& path);
void saveConfigFile(const ExperimentConfig& c, const std::string& path);

struct ConfigIssue {
  std::string field;    // dotted path, e.g. "model.nHeads"
  std::string message;  // full sentence naming the field
};
std::vector<ConfigIssue> validate(const ExperimentConfig& c);
/// Throws ConfigError listing every issue.
void requireValid(const ExperimentConfig& c);

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace depthlab::experiment
