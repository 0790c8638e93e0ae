// Task files: the shapes an answer may take, each template's prompt and continuations as lm-eval's
// task configs write them, and bad files refused naming the file and line.
#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"
#include "tasks/task_file.h"

using namespace depthlab;

namespace {

std::string write(test::TempDir& dir, const std::string& text) {
  const auto path = dir.file("task.jsonl");
  std::ofstream(path) << text;
  return path;
}

std::string errorOf(const std::string& path) {
  try {
    tasks::readTaskFile(path);
  } catch (const tasks::TaskError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(TaskFile, AnswersAreIndicesTextsLettersOrYesNo) {
  test::TempDir dir;
  const auto docs =
      tasks::readTaskFile(write(dir,
                                R"({"question": "a", "choices": ["x", "y", "z"], "answer": 2}

{"question": "b", "choices": ["x", "y"], "answer": "y"}
{"question": "c", "choices": ["x", "y", "z"], "answer": "B"}
{"question": "d", "context": "p", "answer": true}
)"));
  ASSERT_EQ(docs.size(), 4u);
  EXPECT_EQ(docs[0].answer, 2);
  EXPECT_EQ(docs[1].answer, 1);
  EXPECT_EQ(docs[2].answer, 1);
  EXPECT_EQ(docs[3].answer, 1);
  EXPECT_EQ(docs[3].choices, (std::vector<std::string>{"no", "yes"}));
  EXPECT_EQ(docs[3].line, 5);  // the blank line counts
  EXPECT_EQ(tasks::readTaskFile(dir.file("task.jsonl"), 2).size(), 2u);
}

TEST(TaskFile, TemplatesWriteLmEvalsPrompts) {
  tasks::TaskDoc d;
  d.question = " Which is blue? ";
  d.context = "The sky is blue.";
  d.choices = {"sky", "grass"};
  const auto qa = tasks::requestsOf({d}, "qa");
  ASSERT_EQ(qa.size(), 2u);
  EXPECT_EQ(qa[0].prompt, "Question:  Which is blue? \nAnswer:");
  EXPECT_EQ(qa[1].continuation, " grass");
  const auto mmlu = tasks::requestsOf({d}, "mmlu");
  EXPECT_EQ(mmlu[0].prompt, "Which is blue?\nA. sky\nB. grass\nAnswer:");
  EXPECT_EQ(mmlu[1].continuation, " B");
  EXPECT_EQ(tasks::choicesOf(d, "mmlu"), (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(tasks::requestsOf({d}, "boolq")[0].prompt,
            "The sky is blue.\nQuestion:  Which is blue? ?\nAnswer:");
  EXPECT_EQ(tasks::requestsOf({d}, "plain")[0].prompt, d.question);
  EXPECT_THROW(tasks::requestsOf({d}, "gsm8k"), tasks::TaskError);
  d.context.clear();
  EXPECT_THROW(tasks::requestsOf({d}, "boolq"), tasks::TaskError);
  EXPECT_EQ(tasks::characters("caf\xc3\xa9"), 4u);  // code points, as Python's len()
}

TEST(TaskFile, BadFilesNameTheFileAndLine) {
  test::TempDir dir;
  const std::string good = R"({"question": "q", "choices": ["a", "b"], "answer": 0})";
  const std::pair<const char*, const char*> cases[] = {
      {R"({"question": "q", "choices": ["a", "b"]})", "no \"answer\""},
      {R"({"question": "q", "choices": ["a"], "answer": 0})", "two or more"},
      {R"({"question": "q", "choices": ["a", "b"], "answer": 5})", "out of range"},
      {R"({"question": "q", "choices": ["a", "b"], "answer": "c"})", "neither a choice"},
      {R"({"question": 3, "choices": ["a", "b"], "answer": 0})", "\"question\""},
      {R"({"question": "q", "choices": "ab", "answer": 0})", "list of strings"},
      {"[1, 2]", "not a JSON object"},
      {"{broken", "not valid JSON"},
  };
  for (const auto& [line, why] : cases) {
    const auto message = errorOf(write(dir, good + "\n" + line + "\n"));
    EXPECT_NE(message.find(why), std::string::npos) << line << ": " << message;
    EXPECT_NE(message.find("task.jsonl:2: "), std::string::npos) << message;
  }
  EXPECT_NE(errorOf(write(dir, "\n\n")).find("no documents"), std::string::npos);
  EXPECT_NE(errorOf(dir.file("none.jsonl")).find("cannot read"), std::string::npos);
}
