// CorpusChunker: the files of a corpus as a sequence of chunks of about `chunkBytes` raw
// (decompressed) bytes, each cut at a line end and never spanning two files, numbered from 0.
// A .jsonl chunk is cut only at a line end (a record longer than a chunk makes a longer chunk;
// one past `maxRecordBytes` is an error naming its file and line); a text file's line longer
// than a chunk is cut at a UTF-8 character start (the file is one document either way).
// The cut points are a pure function of the content and chunkBytes, so a preparation that is
// interrupted can resume at a chunk number. Text files in a folder that turn out to be binary
// are skipped and named; a single binary file is an error. chunkText() turns a chunk into the
// text to tokenize and says where its documents end: a document is a JSON Lines record's
// "text" (records with an empty text are none) or a whole text file; nothing joins documents
// (the store puts its end-of-document token there). One thread reads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "data/corpus_sources.h"
#include "data/token_store.h"

namespace depthlab::data {

struct RawChunk {
  uint64_t seq = 0;
  SourceFormat format = SourceFormat::Text;
  std::string bytes;
  uint64_t rawDone = 0;  // bytes on disk consumed up to the end of this chunk, all files
  bool endsFile = false; // the last chunk of its file (then possibly empty: the file's
                         // length fell on a cut; a text file's document still ends here)
};

/// The text of a chunk and where its documents end.
struct DocText {
  std::string text;
  std::vector<size_t> docEnds;  // offsets into text, ascending: a document ends before each
};

class CorpusChunker {
 public:
  static constexpr size_t kMaxRecordBytes = size_t{1} << 30;
  CorpusChunker(std::vector<SourceFile> sources, size_t chunkBytes, bool folder,
                size_t maxRecordBytes = kMaxRecordBytes);
  /// The next chunk; false at the end. Throws DataError (unreadable, damaged, binary file, a
  /// .jsonl record past maxRecordBytes).
  bool next(RawChunk& chunk);
  /// Hashes of the files read whole so far ("" for skipped ones), in source order.
  const std::vector<std::string>& hashes() const { return m_hashes; }
  const std::vector<std::string>& binaryFiles() const { return m_binary; }
  uint64_t rawDone() const { return m_rawBefore + (m_reader ? m_reader->rawBytes() : 0); }

 private:
  bool openNext();
  [[noreturn]] void throwRecordTooLong(const SourceFile& src) const;
  std::vector<SourceFile> m_sources;
  size_t m_chunkBytes, m_maxRecord;
  bool m_folder;
  size_t m_index = 0;  // the source being read (m_sources.size() when done)
  std::unique_ptr<SourceReader> m_reader;
  std::string m_pending;
  bool m_firstBlock = true;
  uint64_t m_fileBytes = 0;  // text read from the current file
  uint64_t m_fileLines = 0;  // lines of the current .jsonl file handed out in chunks
  uint64_t m_seq = 0, m_rawBefore = 0;
  std::vector<std::string> m_hashes;
  std::vector<std::string> m_binary;
};

/// The text of a chunk to tokenize (takes the chunk's bytes); jsonl records that are skipped
/// are counted in `skipped`. A text file's document ends at its last chunk's end (when the
/// file holds any byte), a record's at its text's end.
DocText chunkText(RawChunk&& chunk, SkippedInput& skipped);
/// The documents of `d` one after another, each ending in a newline (one added where its text
/// does not end in one): the lines SentencePiece encodes, and the tokenizer's sample.
/// `docLines`, when given, gets the line count up to the end of each document.
std::string documentLines(const DocText& d, std::vector<size_t>* docLines = nullptr);

}  // namespace depthlab::data
