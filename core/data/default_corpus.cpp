// Default corpus preparation; see default_corpus.h.
#include "data/default_corpus.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "util/paths.h"
#include "util/run_command.h"

namespace depthlab::data {

namespace fs = std::filesystem;

std::string defaultCorpusPath() {
  return (fs::path(util::dataDir()) / "corpora" / "kjv.txt").string();
}

std::string cleanBibleOutput(const std::string& raw) {
  std::string out;
  out.reserve(raw.size());
  std::istringstream in(raw);
  std::string line;
  while (std::getline(in, line)) {
    size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    size_t digits = i;
    while (digits < line.size() && std::isdigit(static_cast<unsigned char>(line[digits]))) ++digits;
    if (digits == i || digits >= line.size() || line[digits] != ' ') continue;  // heading/blank
    out.append(line, digits + 1, std::string::npos);
    out.push_back('\n');
  }
  return out;
}

DefaultCorpusStatus ensureDefaultCorpus() {
  DefaultCorpusStatus st;
  st.path = defaultCorpusPath();
  std::error_code ec;
  if (fs::exists(st.path, ec) && fs::file_size(st.path, ec) > 0) {
    st.ready = true;
    st.message = "default corpus: " + st.path;
    return st;
  }
  const char* hint =
      "The default corpus comes from Debian's bible-kjv package: sudo apt-get install "
      "bible-kjv bible-kjv-text (or `make run`, which installs it). Any UTF-8 text file works "
      "instead: pass --corpus FILE.";
  auto bible = util::runProgram({"bible", "-l", "100000", "gen1:1-rev22:21"});
  const std::string& raw = bible.output;
  if (bible.status != 0 || raw.size() < 1000000) {
    st.message = std::string("the `bible` program is missing or printed too little. ") + hint;
    return st;
  }
  std::string text = cleanBibleOutput(raw);
  try {
    util::ensureDir(util::parentDir(st.path));
  } catch (const std::exception& e) {
    st.message = e.what();
    return st;
  }
  const std::string tmp = util::writerTempPath(st.path);  // two first launches at once
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      st.message = "cannot write '" + tmp + "'";
      return st;
    }
  }
  fs::rename(tmp, st.path, ec);
  if (ec) {
    st.message = "cannot write '" + st.path + "': " + ec.message();
    fs::remove(tmp, ec);
    return st;
  }
  st.ready = true;
  st.message = "prepared the default corpus (King James Bible, " + std::to_string(text.size()) +
               " bytes) at " + st.path;
  return st;
}

}  // namespace depthlab::data
