// Tokenizers; see tokenizer.h. SentencePiece is driven through its command-line tools.
#include "data/tokenizer.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "data/corpus.h"
#include "util/paths.h"
#include "util/run_command.h"

namespace depthlab::data {

namespace fs = std::filesystem;

namespace {

using util::shellQuote;

// Runs a tool; returns its stdout; throws DataError with its stderr tail on failure.
std::string runTool(const std::string& cmd) {
  const std::string errFile = (fs::temp_directory_path() /
                               ("depthlab-spm-" + std::to_string(getpid()) + ".err")).string();
  auto r = util::runCommand(cmd + " 2>" + shellQuote(errFile));
  if (r.status != 0) {
    std::ifstream in(errFile);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string err = ss.str();
    fs::remove(errFile);
    if (err.size() > 600) err = "..." + err.substr(err.size() - 600);
    throw DataError("`" + cmd.substr(0, cmd.find(' ')) + "` failed: " + err);
  }
  fs::remove(errFile);
  return r.output;
}

std::vector<int32_t> parseIds(const std::string& text) {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3);
  int32_t v = 0;
  bool in = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      v = v * 10 + (c - '0');
      in = true;
    } else if (in) {
      ids.push_back(v);
      v = 0;
      in = false;
    }
  }
  if (in) ids.push_back(v);
  return ids;
}

}  // namespace

std::vector<int32_t> ByteTokenizer::encode(const std::string& text) const {
  std::vector<int32_t> out(text.size());
  for (size_t i = 0; i < text.size(); ++i) out[i] = static_cast<unsigned char>(text[i]);
  return out;
}

bool SpmTokenizer::toolsAvailable() {
  return std::system("command -v spm_encode >/dev/null 2>&1 && command -v spm_train "
                     ">/dev/null 2>&1") == 0;
}

SpmTokenizer::SpmTokenizer(std::string modelPath) : m_model(std::move(modelPath)) {
  if (!fs::exists(m_model)) throw DataError("SentencePiece model '" + m_model + "' does not exist");
  if (!toolsAvailable()) {
    throw DataError("SentencePiece tools not found: sudo apt-get install sentencepiece");
  }
  std::string vocab = runTool("spm_export_vocab --model=" + shellQuote(m_model));
  for (char c : vocab) m_vocab += c == '\n';
  if (m_vocab <= 0) throw DataError("SentencePiece model '" + m_model + "' has no vocabulary");
}

std::vector<int32_t> SpmTokenizer::encodeFile(const std::string& path) const {
  return parseIds(runTool("spm_encode --model=" + shellQuote(m_model) +
                          " --output_format=id < " + shellQuote(path)));
}

std::vector<int32_t> SpmTokenizer::encode(const std::string& text) const {
  std::string tmp = (fs::temp_directory_path() /
                     ("depthlab-spm-in-" + std::to_string(getpid()) + ".txt")).string();
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
  }
  auto ids = encodeFile(tmp);
  fs::remove(tmp);
  return ids;
}

std::string SpmTokenizer::train(const std::string& corpusFile, const std::string& prefix,
                                int vocab, const std::string& modelType) {
  if (!toolsAvailable()) {
    throw DataError("SentencePiece tools not found: sudo apt-get install sentencepiece");
  }
  runTool("spm_train --input=" + shellQuote(corpusFile) + " --model_prefix=" +
          shellQuote(prefix) + " --vocab_size=" + std::to_string(vocab) +
          " --model_type=" + modelType +
          " --character_coverage=1.0 --input_sentence_size=2000000 --shuffle_input_sentence=true"
          " --pad_id=0 --unk_id=2 --bos_id=-1 --eos_id=1 --minloglevel=2");
  return prefix + ".model";
}

std::string cacheDirFor(const std::string& corpusPath) {
  fs::path p(corpusPath);
  fs::path dir = fs::is_directory(p) ? p : p.parent_path();
  if (dir.empty()) dir = ".";
  if (access(dir.c_str(), W_OK) == 0) return dir.string();
  std::string fallback = (fs::path(util::dataDir()) / "cache").string();
  util::ensureDir(fallback);
  return fallback;
}

std::unique_ptr<Tokenizer> makeTokenizer(const std::string& spec, const std::string& corpusFile) {
  if (spec == "byte") return std::make_unique<ByteTokenizer>();
  if (spec.rfind("spm:", 0) != 0) throw DataError("unknown tokenizer '" + spec + "'");
  std::string arg = spec.substr(4);
  if (!arg.empty() && arg.find_first_not_of("0123456789") == std::string::npos) {
    int vocab = std::stoi(arg);
    // Cache key: corpus name, size and vocab, beside the corpus (or in the data cache).
    std::error_code ec;
    auto size = fs::is_regular_file(corpusFile, ec) ? fs::file_size(corpusFile, ec) : 0;
    std::string prefix = (fs::path(cacheDirFor(corpusFile)) /
                          (fs::path(corpusFile).filename().string() + ".spm" + arg + "-" +
                           std::to_string(size))).string();
    std::string model = prefix + ".model";
    if (!fs::exists(model)) SpmTokenizer::train(corpusFile, prefix, vocab);
    return std::make_unique<SpmTokenizer>(model);
  }
  return std::make_unique<SpmTokenizer>(arg);
}

}  // namespace depthlab::data
