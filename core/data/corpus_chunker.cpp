// See corpus_chunker.h.
#include "data/corpus_chunker.h"

#include <algorithm>

#include "data/corpus.h"
#include "data/jsonl_text.h"
#include "util/content_hash.h"

namespace depthlab::data {

namespace {
constexpr size_t kBlock = 1 << 20;

// The cut point of a full text buffer: after its last newline, else at a UTF-8 character start.
size_t cutPoint(const std::string& s, size_t limit) {
  const size_t nl = s.rfind('\n', limit - 1);
  if (nl != std::string::npos) return nl + 1;
  size_t cut = limit;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  return cut > 0 ? cut : limit;
}

// The cut point of a full .jsonl buffer: after its last newline before `limit`, else after the
// first one past it; npos when it holds none yet. `searched`: no newline lies in
// [limit, searched) (the bytes looked at before; updated), so a long record is scanned once.
size_t lineCut(const std::string& s, size_t limit, size_t& searched) {
  if (searched == 0) {
    const size_t nl = s.rfind('\n', limit - 1);
    if (nl != std::string::npos) return nl + 1;
  }
  const size_t nl = s.find('\n', std::max(limit, searched));
  searched = s.size();
  return nl == std::string::npos ? nl : nl + 1;
}

std::string mib(uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }
}  // namespace

CorpusChunker::CorpusChunker(std::vector<SourceFile> sources, size_t chunkBytes, bool folder,
                             size_t maxRecordBytes)
    : m_sources(std::move(sources)),
      m_chunkBytes(std::max<size_t>(chunkBytes, 64)),
      m_maxRecord(std::max(maxRecordBytes, m_chunkBytes)),
      m_folder(folder) {
  m_hashes.resize(m_sources.size());
}

bool CorpusChunker::openNext() {
  if (m_reader) {
    m_rawBefore += m_reader->rawBytes();
    m_reader.reset();
    ++m_index;
  }
  if (m_index >= m_sources.size()) return false;
  m_reader = openSource(m_sources[m_index]);
  m_firstBlock = true;
  m_fileBytes = 0;
  m_fileLines = 0;
  return true;
}

bool CorpusChunker::next(RawChunk& chunk) {
  if (!m_reader && m_index == 0 && m_seq == 0 && !openNext()) return false;
  while (m_reader) {
    const SourceFile& src = m_sources[m_index];
    bool atEnd = false;
    size_t cut = std::string::npos, searched = 0;
    while (true) {
      if (m_pending.size() >= m_chunkBytes) {
        if (src.format == SourceFormat::Text) {
          cut = cutPoint(m_pending, m_chunkBytes);
          break;
        }
        // A .jsonl chunk ends at a line end only: a record longer than a chunk is read whole.
        cut = lineCut(m_pending, m_chunkBytes, searched);
        if (cut == std::string::npos ? m_pending.size() >= m_maxRecord : cut > m_maxRecord) {
          throwRecordTooLong(src);  // a cut past chunkBytes holds one record
        }
        if (cut != std::string::npos) break;
      }
      const size_t old = m_pending.size();
      m_pending.resize(old + kBlock);
      const size_t got = m_reader->read(&m_pending[old], kBlock);
      m_pending.resize(old + got);
      m_fileBytes += got;
      if (got == 0) {
        atEnd = true;
        break;
      }
      if (m_firstBlock && src.format == SourceFormat::Text) {
        m_firstBlock = false;
        if (auto why = binaryReason(m_pending.substr(0, std::min<size_t>(m_pending.size(), kBlock)));
            !why.empty()) {
          if (!m_folder) {
            throw DataError("corpus '" + src.path + "' does not look like UTF-8 text (" + why +
                            "); pass a text file, a folder of text files, .jsonl(.gz/.zst), "
                            "or a .bin token file");
          }
          m_binary.push_back(src.relative.empty() ? src.path : src.relative);
          m_pending.clear();
          openNext();
          return next(chunk);
        }
      }
      m_firstBlock = false;
    }
    if (!atEnd) {
      chunk.seq = m_seq++;
      chunk.format = src.format;
      chunk.bytes.assign(m_pending, 0, cut);
      m_pending.erase(0, cut);
      if (src.format == SourceFormat::Jsonl) {
        m_fileLines += static_cast<uint64_t>(std::count(chunk.bytes.begin(), chunk.bytes.end(), '\n'));
      }
      chunk.rawDone = rawDone();
      chunk.endsFile = false;
      return true;
    }
    // The file is read whole: its hash is final; what is left is its last chunk (a text
    // file's, even empty: its document ends there).
    m_hashes[m_index] = util::hex64(m_reader->rawHash());
    std::string rest;
    rest.swap(m_pending);
    const SourceFormat format = src.format;
    const bool hadText = format == SourceFormat::Text && m_fileBytes > 0;
    openNext();
    if (!rest.empty() || hadText) {
      chunk.seq = m_seq++;
      chunk.format = format;
      chunk.bytes = std::move(rest);
      chunk.rawDone = rawDone();
      chunk.endsFile = true;
      return true;
    }
  }
  return false;
}

void CorpusChunker::throwRecordTooLong(const SourceFile& src) const {
  const uint64_t start = m_fileBytes - m_pending.size();  // of the record, in the text
  throw DataError("corpus file '" + src.path + "': the JSON Lines record on line " +
                  std::to_string(m_fileLines + 1) + " (from byte " + std::to_string(start) +
                  " of its text) runs past " + mib(m_maxRecord) +
                  " without a line end: too big to hold in memory (is it JSON Lines?)");
}

DocText chunkText(RawChunk&& chunk, SkippedInput& skipped) {
  DocText d;
  if (chunk.format == SourceFormat::Text) {
    d.text = std::move(chunk.bytes);
    if (chunk.endsFile) d.docEnds.push_back(d.text.size());
    return d;
  }
  std::string& text = d.text;
  text.reserve(chunk.bytes.size());
  const std::string& b = chunk.bytes;
  size_t start = 0;
  while (start < b.size()) {
    size_t end = b.find('\n', start);
    if (end == std::string::npos) end = b.size();
    const std::string_view line(b.data() + start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;  // blank line
    const size_t before = text.size();
    switch (extractJsonlText(line, text)) {
      case JsonlText::Ok:
        if (text.size() > before) d.docEnds.push_back(text.size());
        break;
      case JsonlText::NoText: ++skipped.linesWithoutText; break;
      case JsonlText::InvalidJson: ++skipped.invalidJsonLines; break;
      case JsonlText::InvalidUtf8: ++skipped.invalidUtf8Lines; break;
    }
  }
  return d;
}

std::string documentLines(const DocText& d, std::vector<size_t>* docLines) {
  std::string out;
  out.reserve(d.text.size() + d.docEnds.size());
  size_t from = 0, lines = 0;
  auto add = [&](size_t to) {  // text [from, to) as whole lines
    if (to > from) {
      out.append(d.text, from, to - from);
      lines += static_cast<size_t>(std::count(d.text.begin() + static_cast<long>(from),
                                              d.text.begin() + static_cast<long>(to), '\n'));
      if (d.text[to - 1] != '\n') {
        out += '\n';
        ++lines;
      }
    }
    from = to;
  };
  for (size_t end : d.docEnds) {
    add(end);
    if (docLines) docLines->push_back(lines);
  }
  add(d.text.size());  // a text file's chunk before its last: no document ends in it
  return out;
}

}  // namespace depthlab::data
