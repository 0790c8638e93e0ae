// The text an spm:N tokenizer trains on (writeCorpusSample, declared in corpus_prepare.h):
// pieces from evenly spaced places in every file of the corpus, each document (a .jsonl
// record, a piece of a text file) as whole lines. No tokenizing and no store here.
#include <algorithm>
#include <fstream>

#include "data/corpus.h"
#include "data/corpus_chunker.h"
#include "data/corpus_prepare.h"
#include "data/corpus_sources.h"

namespace depthlab::data {

uint64_t writeCorpusSample(const std::string& corpusPath, uint64_t bytes, const std::string& outPath) {
  const auto sources = listCorpusSources(corpusPath);
  const uint64_t perFile = std::max<uint64_t>(bytes / sources.size(), 64 * 1024);
  std::ofstream out(outPath, std::ios::binary);
  if (!out) throw DataError("cannot write the tokenizer sample '" + outPath + "'");
  uint64_t written = 0;
  SkippedInput ignored;
  for (const auto& src : sources) {
    std::string raw;
    if (src.compression == Compression::None && src.size > perFile) {
      // Eight pieces at evenly spaced offsets, each cut to whole lines.
      std::ifstream in(src.path, std::ios::binary);
      const uint64_t piece = perFile / 8;
      for (int k = 0; k < 8 && in; ++k) {
        const uint64_t at = src.size * static_cast<uint64_t>(k) / 8;
        std::string buf(piece, '\0');
        in.seekg(static_cast<std::streamoff>(at));
        in.read(&buf[0], static_cast<std::streamsize>(piece));
        buf.resize(static_cast<size_t>(in.gcount()));
        in.clear();
        size_t from = 0;
        if (at > 0) {
          from = buf.find('\n');
          from = from == std::string::npos ? buf.size() : from + 1;
        }
        const size_t to = buf.rfind('\n');
        if (to != std::string::npos && to + 1 > from) raw.append(buf, from, to + 1 - from);
      }
    } else {
      auto reader = openSource(src);
      raw.resize(perFile);
      size_t have = 0, got;
      while (have < perFile && (got = reader->read(&raw[have], perFile - have)) > 0) have += got;
      raw.resize(have);
      if (have == perFile) {
        const size_t to = raw.rfind('\n');
        if (to != std::string::npos) raw.resize(to + 1);
      }
    }
    RawChunk c;
    c.format = src.format;
    c.bytes = std::move(raw);
    const DocText doc = chunkText(std::move(c), ignored);
    if (src.format == SourceFormat::Text && !binaryReason(doc.text).empty()) continue;
    const std::string text = documentLines(doc);  // a record a line (at least)
    out << text;
    written += text.size();
  }
  if (!out) throw DataError("cannot write the tokenizer sample '" + outPath + "' (disk full?)");
  if (written == 0) throw DataError("corpus '" + corpusPath + "' holds no text to train a tokenizer on");
  return written;
}

}  // namespace depthlab::data
