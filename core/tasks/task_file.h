// Multiple-choice tasks from local files, as `lm-eval` scores them by log-likelihood: a JSONL
// file, one document a line, {"question": ..., "choices": [...], "answer": ...} (optional
// "context": a passage, BoolQ's), turned by a prompt template into one request per choice: the
// prompt (the context of the request) and " " + the choice's text (the continuation, after
// lm-eval's target delimiter). Templates follow lm-eval's task configs:
//   plain      question                                   | " " + choice
//   qa         "Question: {question}\nAnswer:"             | " " + choice   (ARC, PIQA)
//   mmlu       "{question}\nA. {c0}\nB. {c1}...\nAnswer:"   | " A", " B", ...
//   boolq      "{context}\nQuestion: {question}?\nAnswer:" | " no", " yes"
//   hellaswag  question (already "{activity_label}: {ctx}") | " " + ending
// "answer" is the index of the right choice, its text, or a letter (A = 0); BoolQ's may be
// true/false (choices default to ["no", "yes"]). The chance level is the mean of 1/choices.
// Pure text handling: no tokens, no model. Does not: read data sets from the hub (docs/tasks.md
// says where they come from and how to convert them).
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace depthlab::tasks {

class TaskError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TaskDoc {
  std::string question, context;
  std::vector<std::string> choices;
  int answer = 0;
  int line = 0;  // 1-based line in the file
};

struct TaskRequest {
  int doc = 0, choice = 0;
  std::string prompt;        // the request's context
  std::string continuation;  // " " + the choice as the template writes it
};

/// The templates by name, in the order `--template` lists them.
const std::vector<std::string>& templateNames();

/// The documents of `path` (at most `limit`, 0 = all). TaskError naming the file and line for an
/// unreadable or empty file, a line that is not a JSON object, a missing question, missing or
/// empty choices, a missing answer or one that names no choice.
std::vector<TaskDoc> readTaskFile(const std::string& path, int limit = 0);

/// The choices a template scores for `doc` (mmlu: the letters; boolq: no/yes).
std::vector<std::string> choicesOf(const TaskDoc& doc, const std::string& templ);

/// One request per choice of every document, in order; TaskError for an unknown template or a
/// boolq document without a context.
std::vector<TaskRequest> requestsOf(const std::vector<TaskDoc>& docs, const std::string& templ);

/// Characters of `s` (UTF-8 code points), as Python's len(): lm-eval's acc_norm length.
size_t characters(const std::string& s);

}  // namespace depthlab::tasks
