// See model_text.h.
#include "hf/model_text.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "data/corpus.h"
#include "data/token_dataset.h"
#include "hf/hf_config.h"
#include "util/python_env.h"
#include "util/run_command.h"
#include "util/spm_program.h"

namespace depthlab::hf {

namespace fs = std::filesystem;

namespace {

// Reads tokenizer.json and the whole text, prints its ids separated by spaces: the text is
// encoded as one string, newlines and all, with the special tokens the tokenizer's own
// post-processor adds (a Llama tokenizer's BOS), as `tokenizer(text)` in transformers does.
constexpr const char* kEncodeScript = R"(import sys
from tokenizers import Tokenizer
tok = Tokenizer.from_file(sys.argv[1])
with open(sys.argv[2], encoding="utf-8", errors="replace", newline="") as f:
    text = f.read()
sys.stdout.write(" ".join(map(str, tok.encode(text).ids)))
)";

// Reads a JSON list of strings, prints the ids of each on a line of its own.
constexpr const char* kEncodeStringsScript = R"(import json, sys
from tokenizers import Tokenizer
tok = Tokenizer.from_file(sys.argv[1])
with open(sys.argv[2], encoding="utf-8") as f:
    texts = json.load(f)
for enc in tok.encode_batch(texts):
    sys.stdout.write(" ".join(map(str, enc.ids)) + "\n")
)";

std::vector<int32_t> parseIds(const std::string& text, const std::string& what) {
  std::vector<int32_t> ids;
  std::istringstream in(text);
  long long v;
  while (in >> v) {
    if (v < 0 || v > INT32_MAX) throw HfModelError(what + " printed a bad id " + std::to_string(v));
    ids.push_back(static_cast<int32_t>(v));
  }
  if (!in.eof()) throw HfModelError(what + " printed something that is not token ids");
  return ids;
}

// Whether the model's own SentencePiece tokenizer adds BOS: tokenizer_config.json's
// add_bos_token, else true (transformers' LlamaTokenizer and GemmaTokenizer default).
bool addsBos(const fs::path& modelDir) {
  std::ifstream in(modelDir / "tokenizer_config.json");
  if (!in) return true;
  const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("add_bos_token") && j["add_bos_token"].is_boolean()) {
    return j["add_bos_token"].get<bool>();
  }
  return true;
}

// The tokenizers route; appends to `why` and returns false when it cannot run.
bool encodeWithJson(const fs::path& json, const std::string& textFile, EncodedText& out,
                    std::vector<std::string>& why) {
  const std::string python = util::pythonWithModule("tokenizers");
  if (python.empty()) {
    why.push_back(
        "tokenizer.json needs Python's tokenizers package (make build-torch2 "
        "installs it in DepthLab's environment, or set DEPTHLAB_PYTHON)");
    return false;
  }
  util::CommandOptions o;
  o.stderrMode = util::Stderr::Capture;
  auto r = util::runProgram({python, "-c", kEncodeScript, json.string(), textFile}, o);
  if (r.status != 0) {
    why.push_back("tokenizer.json: " + python + " failed: " + r.errors.substr(0, 400));
    return false;
  }
  out.ids = parseIds(r.output, "tokenizers");
  out.how = "tokenizer.json through Python tokenizers (" + python + ")";
  return true;
}

// The SentencePiece route (depthlab-spm-encode); appends to `why` and returns false when it
// cannot run.
bool encodeWithSpm(const fs::path& model, const std::string& textFile, EncodedText& out,
                   std::vector<std::string>& why) {
  const std::string tool = util::spmEncodeProgram();
  if (tool.empty()) {
    why.push_back(
        "tokenizer.model needs depthlab-spm-encode, built with the lab where "
        "libsentencepiece-dev is installed (sudo apt-get install libsentencepiece-dev, "
        "then rebuild)");
    return false;
  }
  const bool bos = addsBos(model.parent_path());
  util::CommandOptions o;
  o.stderrMode = util::Stderr::Capture;
  std::vector<std::string> argv = {tool, model.string(), textFile};
  if (bos) argv.push_back("--bos");
  auto r = util::runProgram(argv, o);
  if (r.status != 0) {
    why.push_back("tokenizer.model: " + tool + " failed: " + r.errors.substr(0, 400));
    return false;
  }
  out.ids = parseIds(r.output, "depthlab-spm-encode");
  out.how = std::string("tokenizer.model through SentencePiece (depthlab-spm-encode") +
            (bos ? ", BOS first)" : ")");
  return true;
}

}  // namespace

EncodedText encodeWithModelTokenizer(const std::string& modelDir, const std::string& textFile) {
  std::error_code ec;
  if (!fs::is_regular_file(textFile, ec)) throw HfModelError("no text file '" + textFile + "'");
  if (fs::file_size(textFile, ec) == 0) throw HfModelError("'" + textFile + "' is empty");
  const fs::path spm = fs::path(modelDir) / "tokenizer.model";
  const fs::path json = fs::path(modelDir) / "tokenizer.json";
  const bool hasSpm = fs::is_regular_file(spm, ec), hasJson = fs::is_regular_file(json, ec);
  std::vector<std::string> why;
  EncodedText out;
  if (hasSpm && encodeWithSpm(spm, textFile, out, why)) return out;
  if (hasJson && encodeWithJson(json, textFile, out, why)) return out;
  if (!hasSpm && !hasJson)
    why.push_back("the folder has neither tokenizer.model nor tokenizer.json");
  std::string msg = "cannot tokenize text for the model in '" + modelDir + "': ";
  for (size_t i = 0; i < why.size(); ++i) msg += (i ? "; " : "") + why[i];
  throw HfModelError(msg + " (or pass token ids with --tokens FILE)");
}

std::vector<std::vector<int32_t>> encodeStringsWithModelTokenizer(
    const std::string& modelDir, const std::vector<std::string>& texts, std::string& how) {
  const fs::path json = fs::path(modelDir) / "tokenizer.json";
  std::error_code ec;
  if (!fs::is_regular_file(json, ec)) {
    throw HfModelError("tasks need the model's tokenizer.json ('" + modelDir +
                       "' has none; a tokenizer.model alone is not read for tasks yet)");
  }
  const std::string python = util::pythonWithModule("tokenizers");
  if (python.empty()) {
    throw HfModelError(
        "tokenizer.json needs Python's tokenizers package (make build-torch2 "
        "installs it in DepthLab's environment, or set DEPTHLAB_PYTHON)");
  }
  char name[] = "/tmp/depthlab-task-texts-XXXXXX";
  const int fd = mkstemp(name);
  if (fd < 0) throw HfModelError("cannot write a temporary file for the tokenizer");
  close(fd);
  {
    std::ofstream out(name, std::ios::trunc);
    out << nlohmann::json(texts).dump();
  }
  util::CommandOptions o;
  o.stderrMode = util::Stderr::Capture;
  auto r = util::runProgram({python, "-c", kEncodeStringsScript, json.string(), name}, o);
  fs::remove(name, ec);
  if (r.status != 0) {
    throw HfModelError("tokenizer.json: " + python + " failed: " + r.errors.substr(0, 400));
  }
  std::vector<std::vector<int32_t>> out;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) out.push_back(parseIds(line, "tokenizers"));
  if (out.size() != texts.size()) {
    throw HfModelError("tokenizers printed " + std::to_string(out.size()) + " lines for " +
                       std::to_string(texts.size()) + " texts");
  }
  how = "tokenizer.json through Python tokenizers (" + python + ")";
  return out;
}

std::string spmModelOfRun(const data::DataConfig& data) {
  if (data.tokenizer == "byte") throw HfModelError("the run's tokens are bytes, not SentencePiece");
  const std::string name = data::loadCorpusTokens(data).tokenizerName;
  if (name.rfind("spm:", 0) != 0)
    throw HfModelError("the run's tokenizer '" + name + "' is unknown");
  return name.substr(4);
}

void checkIdsInVocab(const std::vector<int32_t>& ids, int vocab, const std::string& what) {
  for (int32_t id : ids) {
    if (id < 0 || id >= vocab) {
      throw HfModelError(what + " has token id " + std::to_string(id) + ", outside the model's " +
                         std::to_string(vocab) + "-token vocabulary");
    }
  }
}

std::vector<std::vector<int32_t>> readTokenSequences(const std::string& path, int vocab) {
  std::ifstream in(path);
  if (!in) throw HfModelError("cannot read tokens file '" + path + "'");
  std::vector<std::vector<int32_t>> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::vector<int32_t> seq;
    try {
      seq = parseIds(line, "line " + std::to_string(n));
    } catch (const HfModelError&) {
      throw HfModelError("'" + path + "' line " + std::to_string(n) +
                         ": expected whitespace-separated token ids");
    }
    if (seq.empty()) continue;
    checkIdsInVocab(seq, vocab, "'" + path + "' line " + std::to_string(n));
    out.push_back(std::move(seq));
  }
  if (out.empty()) throw HfModelError("'" + path + "' has no token ids");
  return out;
}

std::vector<std::vector<int32_t>> cutWindows(const std::vector<int32_t>& ids, int count,
                                             int length) {
  const int64_t need = length + 1;
  if (count < 1 || length < 1) throw HfModelError("need at least one sequence of one token");
  if (static_cast<int64_t>(ids.size()) < need) {
    throw HfModelError("the text has " + std::to_string(ids.size()) + " tokens, fewer than one " +
                       "sequence of " + std::to_string(need) +
                       "; use a longer text or a shorter --seq-len");
  }
  const int64_t last = static_cast<int64_t>(ids.size()) - need;  // latest start
  std::vector<std::vector<int32_t>> out;
  for (int i = 0; i < count; ++i) {
    const int64_t start = count == 1 ? 0 : last * i / (count - 1);
    out.emplace_back(ids.begin() + start, ids.begin() + start + need);
  }
  return out;
}

}  // namespace depthlab::hf
