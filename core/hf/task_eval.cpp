// See task_eval.h.
#include "hf/task_eval.h"

#include <torch/torch.h>

#include <cmath>

#include "experiment/probe_schedule.h"
#include "experiment/run_config.h"
#include "experiment/train_loop.h"
#include "hf/hf_config.h"
#include "hf/model_analysis.h"
#include "hf/model_text.h"
#include "hf/run_model.h"
#include "probes/depth_probes.h"
#include "store/metric_catalogue.h"
#include "tasks/task_file.h"
#include "tasks/task_scoring.h"
#include "train/trainer.h"

namespace depthlab::hf {

namespace {

// (mean, standard error) of 0/1 outcomes, as lm-eval's mean_stderr: sample sd / sqrt(n).
std::pair<double, double> meanAndError(const std::vector<double>& x) {
  const double n = static_cast<double>(x.size());
  double mean = 0;
  for (double v : x) mean += v / n;
  if (x.size() < 2) return {mean, NAN};
  double ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  return {mean, std::sqrt(ss / (n - 1)) / std::sqrt(n)};
}

size_t argmax(const std::vector<double>& v) {
  return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// Each request's ids split as lm-eval splits them; HfModelError for an empty prompt, an empty
// continuation, an id outside the vocabulary or a request past the context.
std::vector<tasks::TokenizedRequest> tokenized(const std::vector<tasks::TaskRequest>& requests,
                                               const std::vector<tasks::TaskDoc>& docs,
                                               const LoadedModel& m, int context,
                                               std::string& how) {
  std::vector<std::string> texts;  // prompt, prompt + continuation, for each request
  for (const auto& r : requests) {
    std::string ctx = r.prompt, cont = r.continuation;
    const auto keep = ctx.find_last_not_of(" \t\n\r\v\f");
    const size_t cut = keep == std::string::npos ? 0 : keep + 1;
    cont = ctx.substr(cut) + cont;  // trailing whitespace moves to the continuation
    ctx.resize(cut);
    if (ctx.empty()) {
      throw HfModelError("the document at line " + std::to_string(docs[r.doc].line) +
                         " has an empty prompt");
    }
    texts.push_back(ctx);
    texts.push_back(ctx + cont);
  }
  std::vector<std::vector<int32_t>> ids;
  if (m.imported) {
    ids = encodeStringsWithModelTokenizer(m.imported->source, texts, how);
  } else if (m.config.data.tokenizer == "byte") {
    for (const auto& t : texts) ids.emplace_back(t.begin(), t.end());
    for (auto& v : ids) {
      for (auto& id : v) id = static_cast<unsigned char>(id);
    }
    how = "bytes (the run's tokenizer)";
  } else {
    throw HfModelError(
        "tasks on a run trained with SentencePiece are not read yet: export it "
        "(depthlab-cli export-hf) and import the folder, whose tokenizer.json "
        "tasks read");
  }
  std::vector<tasks::TokenizedRequest> out;
  for (size_t i = 0; i < requests.size(); ++i) {
    const auto& ctx = ids[2 * i];
    const auto& whole = ids[2 * i + 1];
    const int line = docs[requests[i].doc].line;
    if (whole.size() <= ctx.size()) {
      throw HfModelError("the document at line " + std::to_string(line) + ": choice " +
                         std::to_string(requests[i].choice) + " gives no tokens after its prompt");
    }
    tasks::TokenizedRequest r{ctx, std::vector<int32_t>(whole.begin() + ctx.size(), whole.end())};
    checkIdsInVocab(r.context, m.config.model.vocabSize, "the task's prompt");
    checkIdsInVocab(r.continuation, m.config.model.vocabSize, "the task's choice");
    const size_t length = r.context.size() + r.continuation.size() - 1;
    if (length > static_cast<size_t>(context)) {
      throw HfModelError("the document at line " + std::to_string(line) + " takes " +
                         std::to_string(length) + " tokens with choice " +
                         std::to_string(requests[i].choice) +
                         ", more than the model's context of " + std::to_string(context));
    }
    out.push_back(std::move(r));
  }
  return out;
}

// acc and acc_norm of per-request log-likelihoods `ll`; with `fill`, its per-document
// log-likelihoods, answers and chance level too.
struct Scores {
  double acc = 0, accStderr = 0, accNorm = 0, accNormStderr = 0;
};
Scores scoreDocuments(const std::vector<tasks::TaskDoc>& docs,
                      const std::vector<tasks::TaskRequest>& requests,
                      const std::vector<double>& ll, const std::string& templ,
                      TaskEvalResult* fill) {
  std::vector<std::vector<double>> byDoc(docs.size());
  for (size_t i = 0; i < requests.size(); ++i) byDoc[requests[i].doc].push_back(ll[i]);
  std::vector<double> hit, hitNorm;
  double chance = 0;
  for (size_t d = 0; d < docs.size(); ++d) {
    const auto& lls = byDoc[d];
    const auto choices = tasks::choicesOf(docs[d], templ);
    std::vector<double> normed;
    for (size_t c = 0; c < lls.size(); ++c) {
      const auto chars = std::max<size_t>(1, tasks::characters(choices[c]));
      normed.push_back(lls[c] / static_cast<double>(chars));
    }
    hit.push_back(argmax(lls) == static_cast<size_t>(docs[d].answer) ? 1.0 : 0.0);
    hitNorm.push_back(argmax(normed) == static_cast<size_t>(docs[d].answer) ? 1.0 : 0.0);
    chance += 1.0 / static_cast<double>(lls.size()) / static_cast<double>(docs.size());
  }
  if (fill) {
    fill->logLikelihoods = byDoc;
    for (const auto& d : docs) fill->answers.push_back(d.answer);
    fill->chance = chance;
  }
  Scores s;
  std::tie(s.acc, s.accStderr) = meanAndError(hit);
  std::tie(s.accNorm, s.accNormStderr) = meanAndError(hitNorm);
  return s;
}

// (B, T) inputs and targets for the loss and the angular distances: a trained run's own probe
// batch, an import's text (8 windows); `how` says which.
std::pair<torch::Tensor, torch::Tensor> lossBatch(const LoadedModel& m, const TaskEvalOptions& o,
                                                  int context, torch::Device device,
                                                  std::string& how) {
  if (m.imported) {
    if (o.text.corpus.empty() && o.text.tokensFile.empty()) {
      throw HfModelError(
          "--prune on an imported model needs a text for the loss and the "
          "angular distances: --corpus TEXT or --tokens IDS");
    }
    ModelAnalysisOptions a;
    a.text = o.text;
    a.sequences = 8;
    auto b = importedProbeBatch(*m.imported, m.config.model, a, std::min(128, context), device);
    how = std::to_string(b.sequences) + " windows of " + std::to_string(b.seqLen) + " tokens (" +
          b.how + ")";
    return {b.inputs, b.targets};
  }
  experiment::ExperimentConfig c = m.config;
  const auto data = experiment::loadDataset(c);
  experiment::ProbeSchedule batch(c.probes, data, device);
  how = "the run's probe batch (" + std::to_string(batch.inputs().size(0)) + " held-out sequences)";
  return {batch.inputs(), batch.targets()};
}

// The first block of each choice's n-block span: Gromov et al.'s least d(x_l, x_l+n) from the
// (L x L) angular matrix, or the n deepest blocks before the last.
int firstRemoved(bool angularChoice, int n, int L, const std::vector<float>& angular) {
  if (!angularChoice) return L - 1 - n;
  int best = 0;
  for (int l = 0; l + n <= L; ++l) {
    const float d = angular[static_cast<size_t>(l) * L + n - 1];
    if (d < angular[static_cast<size_t>(best) * L + n - 1]) best = l;
  }
  return best;
}

void pruneSweep(store::RunStore& store, const store::RunInfo& run, LoadedModel& m,
                const std::vector<tasks::TaskDoc>& docs,
                const std::vector<tasks::TaskRequest>& requests,
                const std::vector<tasks::TokenizedRequest>& ids, const TaskEvalOptions& o,
                torch::Device device, TaskEvalResult& r) {
  const int L = m.decoder->nLayers();
  const int N = o.maxRemoved > 0 ? std::min(o.maxRemoved, L - 1) : L / 2;
  if (N < 1) throw HfModelError("--prune needs a model of two blocks or more");
  const auto [inputs, targets] = lossBatch(m, o, r.context, device, r.lossText);
  const auto angular =
      probes::runForwardProbes(m.decoder, inputs, targets, {false, true, false, false})
          .angularMatrix;
  r.nLayers = L;
  r.step = m.step;
  std::vector<float> acc, accNorm, loss, first;  // (2, N + 1) row-major
  for (const bool angularChoice : {true, false}) {
    auto& points = angularChoice ? r.angular : r.deepest;
    for (int n = 0; n <= N; ++n) {
      PrunedTaskPoint p;
      p.removed = n;
      p.firstBlock = n == 0 ? 0 : firstRemoved(angularChoice, n, L, angular);
      model::ForwardOptions opts;
      opts.skip.assign(static_cast<size_t>(L), false);
      for (int k = 0; k < n; ++k) opts.skip[static_cast<size_t>(p.firstBlock + k)] = true;
      const auto s = scoreDocuments(
          docs, requests, tasks::logLikelihoods(m.decoder, ids, o.batch, opts), o.templ, nullptr);
      p.acc = s.acc;
      p.accNorm = s.accNorm;
      p.loss = probes::lossWithout(m.decoder, inputs, targets, opts.skip, false);
      points.push_back(p);
      acc.push_back(static_cast<float>(p.acc));
      accNorm.push_back(static_cast<float>(p.accNorm));
      loss.push_back(static_cast<float>(p.loss));
      first.push_back(static_cast<float>(p.firstBlock));
    }
  }
  store::WriteBatch b;
  b.matrix(r.step, metrics::kTaskAccPruned, 2, N + 1, acc);
  b.matrix(r.step, metrics::kTaskAccNormPruned, 2, N + 1, accNorm);
  b.matrix(r.step, metrics::kTaskLossPruned, 2, N + 1, loss);
  b.matrix(r.step, metrics::kTaskPruneFirst, 2, N + 1, first);
  b.scalar(r.step, metrics::kTaskChance, r.chance);
  b.event(r.step, store::EventLevel::Info,
          "task " + o.taskFile + " (" + o.templ + " template, " + std::to_string(docs.size()) +
              " documents) under pruning, n = 0.." + std::to_string(N) + " blocks; loss on " +
              r.lossText);
  store.write(run.id, b);
}

}  // namespace

TaskEvalResult evaluateTask(store::RunStore& store, int64_t runId, const TaskEvalOptions& o) {
  auto run = store.run(runId);
  if (!run) throw store::StoreError("no run with id " + std::to_string(runId));
  if (o.batch < 1) throw HfModelError("--batch must be at least 1");
  if (o.limit < 0) throw HfModelError("--limit must be 0 (every document) or more");
  const auto docs = tasks::readTaskFile(o.taskFile, o.limit);
  const auto requests = tasks::requestsOf(docs, o.templ);
  auto record = importRecordOf(*run);
  if (o.prune && record && o.text.corpus.empty() && o.text.tokensFile.empty()) {
    throw HfModelError(
        "--prune on an imported model needs a text for the loss and the angular "
        "distances: --corpus TEXT or --tokens IDS");
  }
  TaskEvalResult r;
  r.context = record ? contextFor(*record, 1 << 20) : experiment::configOf(*run).model.seqLen;
  const torch::Device device = train::resolveDevice(o.device);
  useThreads(o.threads);
  LoadedModel m = loadRunModel(store, *run, std::move(record), r.context, device);
  r.modelFrom = m.from;
  r.skippedCheckpoints = m.skipped;
  const auto ids = tokenized(requests, docs, m, r.context, r.tokensHow);
  const auto ll = tasks::logLikelihoods(m.decoder, ids, o.batch);
  r.documents = static_cast<int>(docs.size());
  r.requests = static_cast<int>(requests.size());
  const auto scored = scoreDocuments(docs, requests, ll, o.templ, &r);
  r.acc = scored.acc;
  r.accStderr = scored.accStderr;
  r.accNorm = scored.accNorm;
  r.accNormStderr = scored.accNormStderr;
  if (o.prune) pruneSweep(store, *run, m, docs, requests, ids, o, device, r);
  return r;
}

}  // namespace depthlab::hf
