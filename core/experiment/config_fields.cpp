// The table of config fields; see config_fields.h.
#include "experiment/config_fields.h"

#include <algorithm>
#include <cmath>

#include "data/data_config.h"
#include "model/scheme_catalogue.h"

namespace depthlab::experiment {

bool FieldRange::contains(double v) const {
  if (std::isnan(v)) return false;
  const bool aboveLo = loOpen ? v > lo : v >= lo;
  const bool belowHi = hiOpen ? v < hi : v <= hi;
  return aboveLo && belowHi;
}

bool ConfigField::offers(const std::string& value) const {
  return choices.values.empty() ||
         std::find(choices.values.begin(), choices.values.end(), value) != choices.values.end();
}

std::string ConfigField::choiceRule(const std::string& value) const {
  std::string known;
  for (const auto& v : choices.values) known += (known.empty() ? "" : ", ") + v;
  return "unknown " + std::string(choices.noun) + " '" + value + "' (known: " + known + ")";
}

namespace {

constexpr double kInf = 1e300;
FieldRange atLeast(double lo, const char* rule) { return {lo, kInf, false, false, rule}; }
FieldRange above(double lo, const char* rule) { return {lo, kInf, true, false, rule}; }
FieldRange within(double lo, double hi, bool loOpen, bool hiOpen, const char* rule) {
  return {lo, hi, loOpen, hiOpen, rule};
}
FieldRange below(double hi, const char* rule) { return {-kInf, hi, false, true, rule}; }

// FIELD(section, member, label, help, range): the JSON key is the member's name.
#define FIELD(sec, member, label, help, ...)                                        \
  ConfigField {                                                                     \
#sec, #member, label, help,                                                     \
        [](ExperimentConfig & c) -> FieldRef { return &c.sec.member; }, __VA_ARGS__ \
  }
// CHOICE(section, member, label, help, noun, values): a string field with a closed set.
#define CHOICE(sec, member, label, help, noun, ...) \
  FIELD(sec, member, label, help, std::nullopt, FieldChoices{noun, __VA_ARGS__})

std::vector<ConfigField> modelFields() {
  return {
      FIELD(model, vocabSize, "Vocabulary", "set from the tokenizer at run time",
            atLeast(2, "must be at least 2")),
      FIELD(model, dModel, "Width", "C, the residual stream's width",
            above(0, "width must be positive")),
      FIELD(model, nLayers, "Depth", "L, the number of blocks",
            within(1, 10000, false, false,
                   "depth must be in [1, 10000] (the deepest model of the papers has 128 blocks)")),
      FIELD(model, nHeads, "Heads", "attention heads; they must divide the width", std::nullopt),
      FIELD(model, dFF, "FFN", "SwiGLU hidden width", above(0, "FFN width must be positive")),
      FIELD(model, seqLen, "Sequence", "T, the training context in tokens",
            atLeast(2, "sequence length must be at least 2")),
      CHOICE(model, norm, "Norm", "rmsnorm or layernorm", "norm", {"rmsnorm", "layernorm"}),
      FIELD(model, normEps, "Norm epsilon", "added to the mean square", above(0, "must be > 0")),
      FIELD(model, initStd, "Init std", "N(0, std) for every Linear", above(0, "must be > 0")),
      FIELD(model, embedStd, "Embedding std", "N(0, std) for the embedding (paper: 0.02)",
            above(0, "must be > 0")),
      FIELD(model, ropeBase, "RoPE base", "rotary embedding base", above(1, "must be > 1")),
      FIELD(model, nKvHeads, "KV heads", "grouped-query attention: key/value heads (0 = heads)",
            atLeast(0, "must be >= 0 (0 = as many as heads)")),
      FIELD(model, headDim, "Head dim", "D per head (0 = width / heads)",
            atLeast(0, "must be >= 0 (0 = width / heads)")),
      FIELD(model, qkvBias, "q/k/v biases",
            "biases on the query, key and value projections (Qwen2)", std::nullopt),
      FIELD(model, tieEmbeddings, "Tied embeddings", "the LM head reuses the embedding's weight",
            std::nullopt),
  };
}

std::vector<ConfigField> optionsFields() {
  return {
      FIELD(options, mixLnAlpha, "Mix-LN alpha",
            "mix_ln: the first round(alpha L) blocks are Post-LN",
            within(0, 1, false, false, "must be in [0, 1]")),
      FIELD(options, scaledInit, "scaled init (o/down std / sqrt(2L))",
            "o_proj and down_proj std initStd / sqrt(2L)", std::nullopt),
      FIELD(options, depthScaledInit, "depth-scaled init (1/sqrt(2l))",
            "block l's matrices std initStd / sqrt(2l)", std::nullopt),
      FIELD(options, skipInit, "SkipInit (branch scalar, 1/sqrt(L))",
            "a learnable scalar per branch, initialised to 1/sqrt(L)", std::nullopt),
      FIELD(options, layerScale, "LayerScale (per-channel, 1e-4)",
            "a learnable per-channel branch scale", std::nullopt),
      FIELD(options, layerScaleInit, "LayerScale init", "LayerScale's initial value",
            above(0, "must be > 0")),
      CHOICE(options, lnsPlacement, "LNS placement", "where lns multiplies by 1/sqrt(l)",
             "placement", model::lnsPlacements()),
      FIELD(options, lnsLearnableLr, "LNS learnable lr",
            "lns_learnable: learning rate of the per-channel scales", above(0, "must be > 0")),
      FIELD(options, qkNorm, "QK-norm (per-head RMSNorm of q, k)",
            "any scheme: RMSNorm of each head's queries and keys before RoPE", std::nullopt),
      FIELD(options, dytAlphaAttn, "DyT alpha (attention)",
            "dyt: initial alpha of the norms before attention; 0 = DyT's table by width",
            within(0, 100, false, false, "must be in [0, 100] (0 = by width)")),
      FIELD(options, dytAlphaOther, "DyT alpha (MLP, final)",
            "dyt: initial alpha of the other norms; 0 = DyT's table by width",
            within(0, 100, false, false, "must be in [0, 100] (0 = by width)")),
  };
}

std::vector<ConfigField> dataFields() {
  return {
      FIELD(data, corpus, "Corpus",
            "a text file or folder, .jsonl[.gz|.zst], a token store or .bin tokens; empty: the "
            "default",
            std::nullopt),
      FIELD(data, tokenizer, "Tokenizer", "byte, spm:N (train one of N pieces) or spm:/path.model",
            std::nullopt),
      FIELD(data, valFraction, "Validation fraction", "the tail of the tokens held out",
            within(0, 0.5, true, true, "must be in (0, 0.5)")),
      FIELD(data, tokenizerSampleMB, "Tokenizer sample (MB)",
            "spm:N trains on this much text, taken from evenly spaced places in the corpus",
            atLeast(1, "must be at least 1 MB")),
      CHOICE(data, packing, "Packing",
             "packed: windows run across documents, an end-of-document token between them; "
             "document: one document a row, cut to the sequence and padded, pads ignored (the "
             "paper's code)",
             "packing", {data::kPackingPacked, data::kPackingDocument}),
  };
}

std::vector<ConfigField> optimFields() {
  return {
      CHOICE(optim, optimizer, "Optimizer", "adam or adamw", "optimizer", {"adam", "adamw"}),
      FIELD(optim, lr, "Peak lr", "the learning rate after warm-up",
            above(0, "learning rate must be > 0")),
      FIELD(optim, minLrRatio, "Min lr ratio", "the cosine schedule's floor, a fraction of peak",
            within(0, 1, false, false, "must be in [0, 1]")),
      FIELD(optim, warmupSteps, "Warm-up", "linear warm-up steps", atLeast(0, "must be >= 0")),
      FIELD(optim, steps, "Steps", "optimizer updates", atLeast(1, "must be at least 1")),
      FIELD(optim, scheduleSteps, "Schedule length",
            "updates the warm-up and cosine span (0 = every step); past them the learning rate "
            "stays at its floor",
            atLeast(0, "must be >= 0 (0 = every step)")),
      FIELD(optim, batchSize, "Batch", "sequences per micro-batch",
            atLeast(1, "must be at least 1")),
      FIELD(optim, gradAccum, "Grad accumulation", "micro-batches per update",
            within(1, 65536, false, false, "must be in [1, 65536]")),
      FIELD(optim, autoMicroBatch, "Micro-batch from free GPU memory",
            "CUDA: split the batch by free memory, keeping batch x accumulation", std::nullopt),
      FIELD(optim, weightDecay, "Weight decay", "decoupled for adamw", atLeast(0, "must be >= 0")),
      FIELD(optim, beta1, "Beta 1", "Adam's first-moment decay",
            within(0, 1, false, true, "must be in [0, 1)")),
      FIELD(optim, beta2, "Beta 2", "Adam's second-moment decay",
            within(0, 1, false, true, "must be in [0, 1)")),
      FIELD(optim, eps, "Adam epsilon", "Adam's denominator term", above(0, "must be > 0")),
      FIELD(optim, gradClip, "Gradient clip", "global-norm clipping; 0 = off (as in the paper)",
            atLeast(0, "must be >= 0 (0 = off)")),
  };
}

std::vector<ConfigField> runFields() {
  return {
      FIELD(run, seed, "Seed", "initialisation and batch order", atLeast(0, "must be >= 0")),
      FIELD(run, device, "Device", "cpu, cuda or cuda:N", std::nullopt),
      FIELD(run, threads, "Threads (0 = default)", "intra-op threads; 0 = the measured default",
            atLeast(0, "must be >= 0 (0 = default)")),
      FIELD(run, evalEvery, "Eval every", "steps between validation passes (and at the end)",
            atLeast(0, "must be >= 0")),
      FIELD(run, evalBatches, "Eval batches", "fixed validation batches",
            within(1, 1000000, false, false, "must be in [1, 1000000]")),
      FIELD(run, checkpointEvery, "Checkpoint every (steps)",
            "steps between checkpoints; 0 = by wall time only", atLeast(0, "must be >= 0")),
      FIELD(run, logEvery, "Log every", "steps between train-loss rows",
            atLeast(1, "must be at least 1")),
      FIELD(run, checkpointMinutes, "Checkpoint every (min)",
            "wall time between checkpoints (0 = only at the end)",
            atLeast(0, "must be >= 0 (0 = off)")),
      FIELD(run, checkpointKeep, "Checkpoints kept",
            "checkpoints kept besides the best and the final", atLeast(1, "must be at least 1")),
      FIELD(run, bf16, "bf16", "autocast to bf16 (CUDA only)", std::nullopt),
      FIELD(run, processes, "GPUs / processes",
            "data-parallel ranks: one per GPU on CUDA (NCCL), processes on the CPU (Gloo); 1 = one "
            "process",
            within(1, 1024, false, false, "must be in [1, 1024]")),
  };
}

std::vector<ConfigField> probesFields() {
  return {
      FIELD(probes, probeBatch, "Probe batch", "held-out sequences the probes run on",
            atLeast(1, "must be at least 1")),
      FIELD(probes, forwardEvery, "Variance/angular every",
            "steps between variance, adjacent angular distance, BI and effectiveness",
            atLeast(0, "must be >= 0 (0 = never)")),
      FIELD(probes, angularMatrixEvery, "Angular matrix every",
            "steps between full (l, n) angular-distance matrices",
            atLeast(0, "must be >= 0 (0 = never)")),
      FIELD(probes, lensEvery, "Logit lens every",
            "steps between logit-lens measurements (KL to the output, top-1 agreement, entropy, "
            "cross-entropy and the settle depth per block)",
            atLeast(0, "must be >= 0 (0 = never)")),
      FIELD(probes, pruningEvery, "Pruning sweep every",
            "steps between single-layer pruning sweeps", atLeast(0, "must be >= 0 (0 = never)")),
      FIELD(probes, pruneSequences, "Pruning sequences",
            "probe sequences (evenly spaced, fixed) the pruning sweeps evaluate, 0 = all; every "
            "delta carries its standard error over them",
            atLeast(0, "must be >= 0 (0 = all)")),
      FIELD(probes, blockPruningAtEnd, "block pruning at the end",
            "the (l, n) block-pruning matrix at the end of the run", std::nullopt),
      FIELD(probes, jacobianEvery, "Jacobian every", "steps between Jacobian-to-identity estimates",
            atLeast(0, "must be >= 0 (0 = never)")),
      FIELD(probes, jacobianSamples, "Jacobian samples", "vector-Jacobian products per block",
            atLeast(1, "must be at least 1")),
      FIELD(
          probes, spectraAtEnd, "weight spectra at the end",
          "the power-law alpha and stable rank of every block's weight matrices at the end of the "
          "run (no data needed)",
          std::nullopt),
      FIELD(probes, lastTokenOnly, "Last token only",
            "angular distance and BI on the last position only", std::nullopt),
      FIELD(probes, pruneRenumber, "Renumber after pruning",
            "LNS pruning: survivors take 1/sqrt of their new index", std::nullopt),
      FIELD(probes, besideTraining, "Probes beside training",
            "CPU: the probes due during training run on a core training leaves free, over a copy "
            "of the weights (the same numbers; training waits less)",
            std::nullopt),
      FIELD(probes, lazyThreshold, "Lazy threshold", "E_l below it: lazy", std::nullopt),
      FIELD(probes, lowThreshold, "Low threshold", "E_l below it: low; at or above: effective",
            below(1, "must be below 1")),
  };
}

}  // namespace

const std::vector<ConfigField>& configFields() {
  static const std::vector<ConfigField> fields = [] {
    std::vector<ConfigField> all;
    for (auto section :
         {&modelFields, &optionsFields, &dataFields, &optimFields, &runFields, &probesFields}) {
      auto part = section();
      all.insert(all.end(), part.begin(), part.end());
    }
    return all;
  }();
  return fields;
}

#undef CHOICE
#undef FIELD

const ConfigField* configField(const std::string& path) {
  for (const auto& f : configFields()) {
    if (f.path() == path) return &f;
  }
  return nullptr;
}

std::vector<ConfigIssue> choiceIssues(const ExperimentConfig& c, const std::string& section) {
  std::vector<ConfigIssue> out;
  auto& mutableConfig = const_cast<ExperimentConfig&>(c);  // read only
  for (const auto& f : configFields()) {
    if (section != f.section || f.choices.values.empty()) continue;
    const FieldRef ref = f.ref(mutableConfig);
    const auto* value = std::get_if<std::string*>(&ref);
    if (value && !f.offers(**value))
      out.push_back({f.path(), f.path() + ": " + f.choiceRule(**value)});
  }
  return out;
}

const std::vector<std::string>& configSections() {
  static const std::vector<std::string> sections = {"model", "options", "data",
                                                    "optim", "run",     "probes"};
  return sections;
}

}  // namespace depthlab::experiment
