// Tokenizers; see tokenizer.h. SentencePiece is driven through its command-line tools.
#include "data/tokenizer.h"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "data/corpus.h"
#include "util/paths.h"
#include "util/run_command.h"
#include "util/spm_program.h"

namespace depthlab::data {

namespace fs = std::filesystem;

namespace {

// Runs a tool with an argument vector; returns its stdout; throws DataError with its stderr
// tail on failure.
std::string runTool(const std::vector<std::string>& argv, const std::string& stdinFile = "") {
  util::CommandOptions o;
  o.stdinFile = stdinFile;
  o.stderrMode = util::Stderr::Capture;
  auto r = util::runProgram(argv, o);
  if (r.status != 0) {
    std::string err = r.errors;
    if (err.size() > 600) err = "..." + err.substr(err.size() - 600);
    throw DataError("`" + argv.front() + "` failed" +
                    (r.status == 127 ? std::string(" to start") : std::string()) + ": " + err);
  }
  return r.output;
}

// The ids of spm_encode's output; `lineEnds` (optional) gets the id count at each line's end.
std::vector<int32_t> parseIds(const std::string& text, std::vector<size_t>* lineEnds) {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3);
  int32_t v = 0;
  bool in = false;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      v = v * 10 + (c - '0');
      in = true;
      continue;
    }
    if (in) {
      ids.push_back(v);
      v = 0;
      in = false;
    }
    if (c == '\n' && lineEnds) lineEnds->push_back(ids.size());
  }
  if (in) ids.push_back(v);
  if (lineEnds && !text.empty() && text.back() != '\n') lineEnds->push_back(ids.size());
  return ids;
}

// A file written for a tool to read, removed when it goes (also when the tool fails).
class ScratchFile {
 public:
  ScratchFile(std::string path, const std::string& content) : m_path(std::move(path)) {
    std::ofstream out(m_path, std::ios::binary);
    out << content;
    out.close();
    if (!out) throw DataError("cannot write '" + m_path + "' (disk full?)");
  }
  ~ScratchFile() {
    std::error_code ec;
    fs::remove(m_path, ec);
  }
  const std::string& path() const { return m_path; }

 private:
  std::string m_path;
};

// A scratch name of its own: tokenizers of one process may encode at once (threads).
std::string tempPath(const char* what) {
  static std::atomic<uint64_t> next{0};
  return (fs::temp_directory_path() / (std::string("depthlab-spm-") + what + "-" +
                                       std::to_string(getpid()) + "-" + std::to_string(next++) +
                                       ".txt")).string();
}

}  // namespace

bool SpmTokenizer::toolsAvailable() {
  return util::programExists("spm_encode") && util::programExists("spm_train");
}

SpmTokenizer::SpmTokenizer(std::string modelPath) : m_model(std::move(modelPath)) {
  if (!fs::exists(m_model)) throw DataError("SentencePiece model '" + m_model + "' does not exist");
  if (!toolsAvailable()) {
    throw DataError("SentencePiece tools not found: sudo apt-get install sentencepiece");
  }
  // One "piece<TAB>score" line per id, in id order.
  std::istringstream vocab(runTool({"spm_export_vocab", "--model=" + m_model}));
  for (std::string line; std::getline(vocab, line); ++m_vocab) {
    if (m_eos < 0 && line.rfind("</s>\t", 0) == 0) m_eos = m_vocab;
  }
  if (m_vocab <= 0) throw DataError("SentencePiece model '" + m_model + "' has no vocabulary");
  m_helper = util::spmEncodeProgram();
  if (!m_helper.empty() && linesLoseNothing()) m_helper.clear();  // the faster route, same ids
}

bool SpmTokenizer::linesLoseNothing() const {
  // Newlines, a blank line, indentation, a tab, runs of spaces and a line end without text.
  static const std::string probe =
      "The first line\nand a second one\n\n  indented, with\ta tab  and spaces\nend\n";
  try {
    return encodeText(probe, tempPath("probe")) == encodeDocuments({probe}, tempPath("probe")).front();
  } catch (const DataError&) {  // the helper failed: the lines it is
    return true;
  }
}

std::vector<std::vector<int32_t>> SpmTokenizer::encodeDocuments(
    const std::vector<std::string_view>& docs, const std::string& scratch) const {
  if (m_helper.empty()) throw DataError("depthlab-spm-encode was not found");
  std::string framed;
  for (std::string_view d : docs) framed.append(std::to_string(d.size())).append(1, '\n').append(d);
  const ScratchFile file(scratch, framed);
  const std::string printed = runTool({m_helper, m_model, file.path(), "--documents"});
  std::vector<size_t> lineEnds;
  const std::vector<int32_t> ids = parseIds(printed, &lineEnds);
  if (lineEnds.size() != docs.size()) {
    throw DataError("depthlab-spm-encode printed " + std::to_string(lineEnds.size()) +
                    " lines of ids for " + std::to_string(docs.size()) + " documents");
  }
  std::vector<std::vector<int32_t>> out(docs.size());
  size_t from = 0;
  for (size_t i = 0; i < docs.size(); ++i) {
    out[i].assign(ids.begin() + static_cast<long>(from), ids.begin() + static_cast<long>(lineEnds[i]));
    from = lineEnds[i];
  }
  return out;
}

std::vector<int32_t> SpmTokenizer::encodeFile(const std::string& path,
                                              std::vector<size_t>* lineEnds) const {
  return parseIds(runTool({"spm_encode", "--model=" + m_model, "--output_format=id"}, path),
                  lineEnds);
}

std::vector<int32_t> SpmTokenizer::encode(const std::string& text) const {
  return encodeText(text, tempPath("in"));
}

std::vector<int32_t> SpmTokenizer::encodeText(const std::string& text, const std::string& scratch,
                                              std::vector<size_t>* lineEnds) const {
  const ScratchFile file(scratch, text);
  return encodeFile(file.path(), lineEnds);
}

std::string SpmTokenizer::train(const std::string& corpusFile, const std::string& prefix,
                                int vocab, const std::string& modelType) {
  if (!toolsAvailable()) {
    throw DataError("SentencePiece tools not found: sudo apt-get install sentencepiece");
  }
  try {
    runTool({"spm_train", "--input=" + corpusFile, "--model_prefix=" + prefix,
             "--vocab_size=" + std::to_string(vocab), "--model_type=" + modelType,
             "--character_coverage=1.0", "--input_sentence_size=2000000",
             "--shuffle_input_sentence=true", "--pad_id=0", "--unk_id=2", "--bos_id=-1",
             "--eos_id=1", "--minloglevel=2"});
  } catch (const DataError& e) {  // spm_train's internal checks, in the user's terms
    const std::string why = e.what();
    if (why.find("sentences_.empty()") != std::string::npos) {
      throw DataError("spm:" + std::to_string(vocab) + " found no line to learn from: SentencePiece "
                      "trains on lines of at most 4192 bytes, and the corpus has none (one long "
                      "line, or no text). Use the byte tokenizer, or a corpus with line breaks");
    }
    if (why.find("Vocabulary size is too high") != std::string::npos ||
        why.find("vocab_size") != std::string::npos) {
      throw DataError("spm:" + std::to_string(vocab) + ": the corpus holds too few distinct "
                      "pieces for a vocabulary of " + std::to_string(vocab) +
                      "; use a smaller spm:N or a larger corpus (" + why + ")");
    }
    throw;
  }
  return prefix + ".model";
}

std::string cacheDirFor(const std::string& corpusPath) {
  fs::path p(corpusPath);
  fs::path dir = fs::is_directory(p) ? p : p.parent_path();
  if (dir.empty()) dir = ".";
  if (util::folderMeantWritable(dir.string())) return dir.string();
  std::string fallback = (fs::path(util::dataDir()) / "cache").string();
  util::ensureDir(fallback);
  return fallback;
}

int spmVocabSize(const std::string& spec) {
  const std::string arg = spec.substr(spec.rfind(':') + 1);
  if (arg.empty() || arg.size() > 7 || arg.find_first_not_of("0123456789") != std::string::npos ||
      std::stoi(arg) < kSpmMinVocab || std::stoi(arg) > kSpmMaxVocab) {
    throw DataError("tokenizer '" + spec + "': the SentencePiece vocabulary size must be a number from " +
                    std::to_string(kSpmMinVocab) + " to " + std::to_string(kSpmMaxVocab));
  }
  return std::stoi(arg);
}

}  // namespace depthlab::data
