// The lab's default corpus: the King James Bible from Debian's `bible-kjv` package, prepared
// once into the data folder as plain UTF-8 text, one verse a line (verse numbers stripped).
// Only prepares the file; reading and tokenizing belong to Corpus and the tokenizers.
#pragma once

#include <string>

namespace depthlab::data {

struct DefaultCorpusStatus {
  bool ready = false;
  std::string path;     // the prepared text file (exists when ready)
  std::string message;  // what happened, or how to get the corpus when not ready
};

/// dataDir()/corpora/kjv.txt
std::string defaultCorpusPath();
/// Prepares the default corpus when missing (runs `bible`), never throws.
DefaultCorpusStatus ensureDefaultCorpus();
/// Turns `bible -l 100000` output into one verse a line: drops headings and blank lines and
/// the leading verse numbers. Exposed for tests.
std::string cleanBibleOutput(const std::string& raw);

}  // namespace depthlab::data
