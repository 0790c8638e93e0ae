// See model_analysis.h.
#include "hf/model_analysis.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "data/corpus.h"
#include "data/tokenizer.h"
#include "experiment/probe_schedule.h"
#include "experiment/run_checkpoints.h"
#include "experiment/run_config.h"
#include "experiment/train_loop.h"
#include "experiment/tuned_lens_run.h"
#include "hf/hf_import.h"
#include "hf/model_text.h"
#include "hf/run_model.h"
#include "probes/head_loss.h"
#include "probes/weight_spectra.h"
#include "train/checkpoint.h"
#include "train/trainer.h"

namespace depthlab::hf {

namespace {

using Clock = std::chrono::steady_clock;

/// The sequences of `text` for the model: the ids file's lines, or the whole text as one,
/// tokenized by the model's own tokenizer or the run's; `how` says which.
std::vector<std::vector<int32_t>> tokensFor(const LoadedModel& m, const TextInput& text,
                                            std::string& how) {
  const int vocab = m.config.model.vocabSize;
  if (text.validationSplit) {
    if (m.imported) {
      throw HfModelError(
          "an imported model has no validation split of ours: give a text (--corpus) "
          "or token ids (--tokens)");
    }
    if (!text.corpus.empty() || !text.tokensFile.empty()) {
      throw HfModelError("give a text, token ids or the validation split, not two of them");
    }
    experiment::ExperimentConfig c = m.config;
    const data::TokenDataset split = experiment::loadDataset(c);  // the split training made
    const uint64_t from = split.trainTokens();
    const uint64_t n = text.maxTokens > 0 ? std::min<uint64_t>(text.maxTokens, split.valTokens())
                                          : split.valTokens();
    std::vector<int64_t> tokens(n);
    split.source().read(from, n, tokens.data());
    how =
        std::string(n < split.valTokens() ? "the first " + std::to_string(n) + " tokens of " : "") +
        "the run's validation split: tokens " + std::to_string(from) + "-" +
        std::to_string(from + n) + " of " + split.source().describe();
    std::vector<int32_t> ids(tokens.begin(), tokens.end());
    checkIdsInVocab(ids, vocab, "the validation split");
    return {std::move(ids)};
  }
  if (text.corpus.empty() == text.tokensFile.empty()) {
    throw HfModelError("give either a text file (--corpus) or a tokens file (--tokens)");
  }
  if (!text.tokensFile.empty()) {
    how = "token ids from " + text.tokensFile;
    return readTokenSequences(text.tokensFile, vocab);
  }
  std::vector<int32_t> ids;
  if (m.imported) {
    auto enc = encodeWithModelTokenizer(m.imported->source, text.corpus);
    ids = std::move(enc.ids);
    how = enc.how;
  } else if (m.config.data.tokenizer == "byte") {
    std::ifstream in(text.corpus, std::ios::binary);
    if (!in) throw HfModelError("cannot read '" + text.corpus + "'");
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (unsigned char c : bytes) ids.push_back(c);
    how = "bytes (the run's tokenizer)";
  } else {
    const std::string model = spmModelOfRun(m.config.data);
    ids = data::SpmTokenizer(model).encodeFile(text.corpus);
    how = model + " through spm_encode (the run's tokenizer)";
  }
  if (ids.empty()) throw HfModelError("'" + text.corpus + "' gave no tokens");
  checkIdsInVocab(ids, vocab, "the tokenized text");
  return {std::move(ids)};
}

/// The windows of a tokens file, one line a sequence: `count` of the lines with at least
/// `length` + 1 ids, evenly spaced over them, each its first `length` + 1 ids; `how` says which.
std::vector<std::vector<int32_t>> lineWindows(const std::vector<std::vector<int32_t>>& lines,
                                              int count, int length, const std::string& file,
                                              std::string& how) {
  const size_t need = static_cast<size_t>(length) + 1;
  std::vector<size_t> usable;  // line numbers (0-based) long enough
  size_t longest = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    longest = std::max(longest, lines[i].size());
    if (lines[i].size() >= need) usable.push_back(i);
  }
  if (usable.empty()) {
    throw HfModelError("'" + file + "': no line holds " + std::to_string(need) +
                       " ids (a line is " + "a sequence; the longest has " +
                       std::to_string(longest) + "): use --seq-len " +
                       std::to_string(longest > 1 ? longest - 1 : 1) + " or less");
  }
  const size_t n = std::min(usable.size(), static_cast<size_t>(count));
  std::vector<std::vector<int32_t>> out;
  std::string which;
  for (size_t k = 0; k < n; ++k) {
    const size_t line = usable[n == 1 ? 0 : (usable.size() - 1) * k / (n - 1)];
    out.emplace_back(lines[line].begin(), lines[line].begin() + static_cast<long>(need));
    which += (which.empty() ? "" : ", ") + std::to_string(line + 1);
  }
  how += "; one line a sequence: line(s) " + which + ", each its first " + std::to_string(need) +
         " ids";
  if (n < static_cast<size_t>(count)) {
    how += " (" + std::to_string(usable.size()) + " of the " + std::to_string(lines.size()) +
           " lines hold that many: " + std::to_string(n) + " sequences, not " +
           std::to_string(count) + ")";
  }
  return out;
}

/// `count` windows evenly spaced over a text's ids (cutWindows), `how` saying when they overlap.
std::vector<std::vector<int32_t>> textWindows(const std::vector<int32_t>& ids, int count,
                                              int length, std::string& how) {
  auto out = cutWindows(ids, count, length);
  const uint64_t need = static_cast<uint64_t>(count) * (static_cast<uint64_t>(length) + 1);
  if (count > 1 && ids.size() < need) {
    how += "; the " + std::to_string(count) + " windows overlap (the text has " +
           std::to_string(ids.size()) + " tokens, fewer than " + std::to_string(need) + ")";
  }
  return out;
}

/// (B, T) inputs and targets from windows of T + 1 tokens.
std::pair<torch::Tensor, torch::Tensor> batchOf(const std::vector<std::vector<int32_t>>& windows,
                                                torch::Device device) {
  const int64_t B = static_cast<int64_t>(windows.size());
  const int64_t T = static_cast<int64_t>(windows.front().size()) - 1;
  auto all = torch::empty({B, T + 1}, torch::kInt64);
  auto* p = all.data_ptr<int64_t>();
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t <= T; ++t)
      p[b * (T + 1) + t] = windows[static_cast<size_t>(b)][static_cast<size_t>(t)];
  }
  return {all.slice(1, 0, T).contiguous().to(device),
          all.slice(1, 1, T + 1).contiguous().to(device)};
}

}  // namespace

/// `threads` CPU threads, 0 = every core (LibTorch's default counts physical cores only, one on
/// a two-vCPU machine, where two threads evaluate 1.5x faster, measured).
void useThreads(int threads) {
  if (threads < 0) throw HfModelError("--threads must be 0 (every core) or more");
  torch::set_num_threads(
      threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
}

ImportedProbeBatch importedProbeBatch(const ImportRecord& record, const model::ModelConfig& model,
                                      const ModelAnalysisOptions& o, int seqLen,
                                      torch::Device device) {
  LoadedModel m;  // only what tokensFor reads: the import and the vocabulary
  m.imported = record;
  m.config.model = model;
  ImportedProbeBatch b;
  const auto sequences = tokensFor(m, o.text, b.how);
  // A tokens file: a line is a sequence (as `eval` reads it), never windows across lines. A
  // text: windows evenly spaced over it, said when they overlap.
  const auto windows = !o.text.tokensFile.empty()
                           ? lineWindows(sequences, o.sequences, seqLen, o.text.tokensFile, b.how)
                           : textWindows(sequences.front(), o.sequences, seqLen, b.how);
  std::tie(b.inputs, b.targets) = batchOf(windows, device);
  b.sequences = static_cast<int>(windows.size());
  b.seqLen = seqLen;
  return b;
}

namespace {

// `analyze --probes spectra` on an import: the weights alone, no text read (a text given is
// not needed and not read).
ModelAnalysisResult spectraOnly(store::RunStore& store, int64_t runId, LoadedModel& m,
                                const ModelAnalysisOptions& o, Clock::time_point t0) {
  if (o.progress) o.progress("weight spectra of every block (no text needed)");
  store::WriteBatch rows;
  experiment::addSpectraRows(rows, 0, probes::weightSpectra(m.decoder));
  rows.event(0, store::EventLevel::Info,
             "analyzed the weight spectra of " + std::to_string(m.decoder->nLayers()) +
                 " blocks (no text), on " + o.device);
  store.write(runId, rows);
  ModelAnalysisResult r;
  r.tokensHow = "no text: the weights alone";
  r.valuesWritten = rows.valueCount();
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

}  // namespace

ModelAnalysisResult analyzeImportedRun(store::RunStore& store, int64_t runId,
                                       const ModelAnalysisOptions& o) {
  const auto t0 = Clock::now();
  auto run = store.run(runId);
  if (!run) throw store::StoreError("no run with id " + std::to_string(runId));
  auto record = importRecordOf(*run);
  if (!record) {
    throw HfModelError("run " + std::to_string(runId) + " is not an imported model; analyze a " +
                       "trained run's checkpoints with `depthlab-cli analyze --run " +
                       std::to_string(runId) + " [--step S]`");
  }
  if (experiment::isSeriesRun(*run)) {
    throw HfModelError("run " + std::to_string(runId) +
                       " is a checkpoint series: its checkpoints "
                       "are analysed at their steps by `depthlab-cli import-hf --series` (run it "
                       "again to add checkpoints)");
  }
  if (o.sequences < 1 || o.sequences > 4096) throw HfModelError("--sequences must be in [1, 4096]");
  const int seqLen = o.seqLen == 0 ? defaultProbeLength(*record) : o.seqLen;
  if (seqLen < 2) throw HfModelError("--seq-len must be at least 2");
  const torch::Device device = train::resolveDevice(o.device);
  useThreads(o.threads);
  auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  say("loading the model's weights");
  LoadedModel m = loadRunModel(store, *run, std::move(record), seqLen, device);
  std::set<std::string> which = o.probes;
  if (which.empty()) which = {experiment::kProbeNames.begin(), experiment::kProbeNames.end()};
  if (which == std::set<std::string>{"spectra"}) return spectraOnly(store, runId, m, o, t0);
  const bool tuned = which.erase(experiment::kTunedLensFamily) > 0;
  ModelAnalysisResult r;
  say("tokenizing");
  const auto batch = importedProbeBatch(*m.imported, m.config.model, o, seqLen, device);
  r.tokensHow = batch.how;
  r.sequences = batch.sequences;
  r.tokens = static_cast<int64_t>(batch.sequences) * seqLen;
  say("probing " + std::to_string(r.sequences) + " sequences x " + std::to_string(seqLen) +
      " tokens");
  // An earlier analysis's rows (step 0) are replaced: said, not silent.
  for (const auto& metric : {"variance", "angular_adjacent"}) {
    if (!store.layerSeries(runId, metric).steps.empty()) r.replacedEarlier = true;
  }
  store::WriteBatch batchRows;
  if (!which.empty()) {
    probeImportedDecoder(m.decoder, m.config.model, batch, 0, which, o.progress, batchRows);
  }
  if (tuned) {
    experiment::TunedLensJob job;
    ModelAnalysisOptions text = o;
    text.sequences = o.tunedLensSequences;
    job.text = importedProbeBatch(*m.imported, m.config.model, text, seqLen, device).inputs;
    job.folder = experiment::runCheckpointDir(store, runId, "");
    job.steps = o.tunedLensSteps;
    job.say = o.progress;
    experiment::runTunedLens(m.decoder, batch.inputs, batch.targets, 0, job, batchRows);
    which.insert(experiment::kTunedLensFamily);
  }
  std::string families;
  for (const auto& f : which) families += (families.empty() ? "" : ", ") + f;
  batchRows.event(0, store::EventLevel::Info,
                  "analyzed " + std::to_string(r.sequences) + " sequences x " +
                      std::to_string(seqLen) + " tokens of " +
                      (o.text.corpus.empty() ? o.text.tokensFile : o.text.corpus) + " (" +
                      r.tokensHow + "), probes: " + families + ", on " + o.device +
                      (r.replacedEarlier ? "; the rows of an earlier analysis were replaced" : ""));
  store.write(runId, batchRows);
  r.valuesWritten = batchRows.valueCount();
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

int defaultProbeLength(const ImportRecord& record) { return contextFor(record, 128); }

EvalResult evaluateRun(store::RunStore& store, int64_t runId, const EvalOptions& o) {
  auto run = store.run(runId);
  if (!run) throw store::StoreError("no run with id " + std::to_string(runId));
  if (o.batch < 1) throw HfModelError("--batch must be at least 1");
  const torch::Device device = train::resolveDevice(o.device);
  useThreads(o.threads);
  auto record = importRecordOf(*run);
  int seqLen = o.seqLen;
  EvalResult r;
  if (seqLen != 0) {
    r.contextWhy = "--seq-len";
  } else if (!record) {
    seqLen = experiment::configOf(*run).model.seqLen;
    r.contextWhy = "the run's training length";
  } else {  // an import: 1024, or fewer where its positions or attention window are fewer
    seqLen = contextFor(*record, 1024);
    r.contextWhy = seqLen == 1024 ? std::string("the default for imports")
                   : record->slidingWindow && seqLen == *record->slidingWindow
                       ? "the model's attention window"
                       : "the model's " + std::to_string(record->maxPositions) + " positions";
  }
  if (seqLen < 1) throw HfModelError("--seq-len must be at least 1");
  r.context = seqLen;
  LoadedModel m = loadRunModel(store, *run, std::move(record), seqLen, device);
  r.modelFrom = m.from;
  r.skippedCheckpoints = m.skipped;
  const auto sequences = tokensFor(m, o.text, r.tokensHow);
  // Each sequence in consecutive windows of up to seqLen + 1 tokens (sharing one token at each
  // cut, so every next-token prediction is made once); windows of equal length batch together.
  std::map<size_t, std::vector<std::vector<int32_t>>> byLength;
  for (const auto& s : sequences) {
    if (s.size() < 2) continue;
    ++r.sequences;
    for (size_t start = 0; start + 1 < s.size(); start += static_cast<size_t>(seqLen)) {
      const size_t end = std::min(s.size(), start + static_cast<size_t>(seqLen) + 1);
      byLength[end - start].emplace_back(s.begin() + start, s.begin() + end);
      ++r.windows;
    }
  }
  if (byLength.empty()) throw HfModelError("no sequence has the two tokens a prediction needs");
  torch::NoGradGuard ng;
  probes::WindowLosses losses(m.decoder);  // a large vocabulary's head in chunks, no (B, T, V)
  double sum = 0;
  for (const auto& [length, windows] : byLength) {
    for (size_t i = 0; i < windows.size(); i += static_cast<size_t>(o.batch)) {
      std::vector<std::vector<int32_t>> chunk(
          windows.begin() + i, windows.begin() + std::min(windows.size(), i + o.batch));
      auto [inputs, targets] = batchOf(chunk, device);
      sum += losses.sum(inputs, targets);
      r.predictedTokens += targets.numel();
    }
  }
  r.loss = sum / static_cast<double>(r.predictedTokens);
  r.perplexity = std::exp(r.loss);
  return r;
}

}  // namespace depthlab::hf
