// See task_file.h.
#include "tasks/task_file.h"

#include <nlohmann/json.hpp>

#include <fstream>

namespace depthlab::tasks {

namespace {

std::string at(const std::string& path, int line) {
  return path + ":" + std::to_string(line) + ": ";
}

// The answer's index among `choices`: an index, the text of a choice, a letter, or (BoolQ)
// true / false for yes / no.
int answerIndex(const nlohmann::json& a, const std::vector<std::string>& choices,
                const std::string& where) {
  const int n = static_cast<int>(choices.size());
  if (a.is_boolean()) return a.get<bool>() ? 1 : 0;
  if (a.is_number_integer()) {
    const auto i = a.get<int64_t>();
    if (i < 0 || i >= n) {
      throw TaskError(where + "answer " + std::to_string(i) + " is out of range (" +
                      std::to_string(n) + " choices: 0.." + std::to_string(n - 1) + ")");
    }
    return static_cast<int>(i);
  }
  if (a.is_string()) {
    const auto s = a.get<std::string>();
    for (int i = 0; i < n; ++i) {
      if (choices[static_cast<size_t>(i)] == s) return i;
    }
    if (s.size() == 1 && s[0] >= 'A' && s[0] < 'A' + n) return s[0] - 'A';
    throw TaskError(where + "answer \"" + s + "\" is neither a choice, nor a letter A-" +
                    std::string(1, static_cast<char>('A' + n - 1)));
  }
  throw TaskError(where + "answer must be an index, a choice's text, a letter or true/false");
}

TaskDoc parseDoc(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw TaskError(where + "not a JSON object");
  TaskDoc d;
  if (!j.contains("question") || !j["question"].is_string()) {
    throw TaskError(where + "no \"question\" (a string)");
  }
  d.question = j["question"].get<std::string>();
  if (j.contains("context")) {
    if (!j["context"].is_string()) throw TaskError(where + "\"context\" must be a string");
    d.context = j["context"].get<std::string>();
  }
  if (!j.contains("answer")) throw TaskError(where + "no \"answer\"");
  if (j.contains("choices")) {
    if (!j["choices"].is_array()) throw TaskError(where + "\"choices\" must be a list of strings");
    for (const auto& c : j["choices"]) {
      if (!c.is_string()) throw TaskError(where + "\"choices\" must be a list of strings");
      d.choices.push_back(c.get<std::string>());
    }
  } else if (j["answer"].is_boolean()) {
    d.choices = {"no", "yes"};
  }
  if (d.choices.size() < 2) throw TaskError(where + "needs \"choices\": two or more");
  d.answer = answerIndex(j["answer"], d.choices, where);
  return d;
}

}  // namespace

const std::vector<std::string>& templateNames() {
  static const std::vector<std::string> names = {"plain", "qa", "mmlu", "boolq", "hellaswag"};
  return names;
}

std::vector<TaskDoc> readTaskFile(const std::string& path, int limit) {
  std::ifstream in(path);
  if (!in) throw TaskError("cannot read the task file '" + path + "'");
  std::vector<TaskDoc> docs;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) throw TaskError(at(path, n) + "not valid JSON");
    docs.push_back(parseDoc(j, at(path, n)));
    docs.back().line = n;
    if (limit > 0 && static_cast<int>(docs.size()) == limit) break;
  }
  if (docs.empty()) throw TaskError("the task file '" + path + "' has no documents");
  return docs;
}

std::vector<std::string> choicesOf(const TaskDoc& doc, const std::string& templ) {
  if (templ == "mmlu") {
    std::vector<std::string> letters;
    for (size_t i = 0; i < doc.choices.size(); ++i) {
      letters.emplace_back(1, static_cast<char>('A' + i));
    }
    return letters;
  }
  return doc.choices;
}

std::vector<TaskRequest> requestsOf(const std::vector<TaskDoc>& docs, const std::string& templ) {
  bool known = false;
  for (const auto& t : templateNames()) known = known || t == templ;
  if (!known) {
    std::string names;
    for (const auto& t : templateNames()) names += (names.empty() ? "" : ", ") + t;
    throw TaskError("unknown template '" + templ + "' (known: " + names + ")");
  }
  std::vector<TaskRequest> out;
  for (size_t d = 0; d < docs.size(); ++d) {
    const auto& doc = docs[d];
    std::string prompt;
    if (templ == "qa") {
      prompt = "Question: " + doc.question + "\nAnswer:";
    } else if (templ == "mmlu") {
      const auto b = doc.question.find_first_not_of(" \t\n");
      const auto e = doc.question.find_last_not_of(" \t\n");
      prompt = b == std::string::npos ? "" : doc.question.substr(b, e - b + 1);
      for (size_t i = 0; i < doc.choices.size(); ++i) {
        prompt += "\n" + std::string(1, static_cast<char>('A' + i)) + ". " + doc.choices[i];
      }
      prompt += "\nAnswer:";
    } else if (templ == "boolq") {
      if (doc.context.empty()) {
        throw TaskError("line " + std::to_string(doc.line) + ": boolq needs a \"context\" passage");
      }
      prompt = doc.context + "\nQuestion: " + doc.question + "?\nAnswer:";
    } else {
      prompt = doc.question;  // plain, hellaswag
    }
    const auto choices = choicesOf(doc, templ);
    for (size_t c = 0; c < choices.size(); ++c) {
      out.push_back({static_cast<int>(d), static_cast<int>(c), prompt, " " + choices[c]});
    }
  }
  return out;
}

size_t characters(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace depthlab::tasks
