// See task_eval.h.
#include "hf/task_eval.h"

#include <torch/torch.h>

#include <cmath>

#include "experiment/run_config.h"
#include "hf/hf_config.h"
#include "hf/model_analysis.h"
#include "hf/model_text.h"
#include "hf/run_model.h"
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

}  // namespace

TaskEvalResult evaluateTask(store::RunStore& store, int64_t runId, const TaskEvalOptions& o) {
  auto run = store.run(runId);
  if (!run) throw store::StoreError("no run with id " + std::to_string(runId));
  if (o.batch < 1) throw HfModelError("--batch must be at least 1");
  if (o.limit < 0) throw HfModelError("--limit must be 0 (every document) or more");
  const auto docs = tasks::readTaskFile(o.taskFile, o.limit);
  const auto requests = tasks::requestsOf(docs, o.templ);
  auto record = importRecordOf(*run);
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
  r.logLikelihoods.resize(docs.size());
  for (size_t i = 0; i < requests.size(); ++i) r.logLikelihoods[requests[i].doc].push_back(ll[i]);
  std::vector<double> hit, hitNorm;
  for (size_t d = 0; d < docs.size(); ++d) {
    const auto& lls = r.logLikelihoods[d];
    const auto choices = tasks::choicesOf(docs[d], o.templ);
    std::vector<double> normed;
    for (size_t c = 0; c < lls.size(); ++c) {
      normed.push_back(lls[c] /
                       static_cast<double>(std::max<size_t>(1, tasks::characters(choices[c]))));
    }
    r.answers.push_back(docs[d].answer);
    hit.push_back(argmax(lls) == static_cast<size_t>(docs[d].answer) ? 1.0 : 0.0);
    hitNorm.push_back(argmax(normed) == static_cast<size_t>(docs[d].answer) ? 1.0 : 0.0);
    r.chance += 1.0 / static_cast<double>(lls.size()) / static_cast<double>(docs.size());
  }
  std::tie(r.acc, r.accStderr) = meanAndError(hit);
  std::tie(r.accNorm, r.accNormStderr) = meanAndError(hitNorm);
  return r;
}

}  // namespace depthlab::hf
