// See tokenize_pipeline.h.
#include "data/tokenize_pipeline.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "data/corpus.h"
#include "data/token_store.h"

namespace depthlab::data {

namespace fs = std::filesystem;

TokenizePipeline::TokenizePipeline(const std::vector<SourceFile>& sources, bool folder,
                                   const ResolvedTokenizer& tok, int threads, size_t chunkBytes,
                                   uint64_t resumeChunk, const std::string& tmpDir)
    : m_chunker(sources, chunkBytes, folder), m_tok(tok), m_resume(resumeChunk), m_dir(tmpDir) {
  m_threads = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  m_window = static_cast<uint64_t>(m_threads) * 2 + 2;
}

void TokenizePipeline::start() {
  m_reader = std::thread([this] { readLoop(); });
  for (int i = 0; i < m_threads; ++i) m_workers.emplace_back([this] { workLoop(); });
}

bool TokenizePipeline::next(uint64_t seq, DoneChunk& out) {
  std::unique_lock<std::mutex> lock(m_mu);
  m_writerAt = seq;
  m_cv.notify_all();
  m_cv.wait(lock, [&] {
    return m_error || m_done.count(seq) || (m_readerDone && seq >= m_chunks);
  });
  if (m_error) std::rethrow_exception(m_error);
  auto it = m_done.find(seq);
  if (it == m_done.end()) return false;
  out = std::move(it->second);
  m_done.erase(it);
  m_cv.notify_all();
  return true;
}

void TokenizePipeline::stop() {
  {
    std::lock_guard<std::mutex> lock(m_mu);
    m_abort = true;
  }
  m_cv.notify_all();
  if (m_reader.joinable()) m_reader.join();
  for (auto& w : m_workers) {
    if (w.joinable()) w.join();
  }
  m_workers.clear();
}

void TokenizePipeline::fail(std::exception_ptr e) {
  std::lock_guard<std::mutex> lock(m_mu);
  if (!m_error) m_error = e;
  m_abort = true;
  m_cv.notify_all();
}

void TokenizePipeline::readLoop() {
  try {
    RawChunk c;
    while (true) {
      {
        std::lock_guard<std::mutex> lock(m_mu);
        if (m_abort) return;
      }
      if (!m_chunker.next(c)) break;
      m_seen = c.seq + 1;
      if (c.seq < m_resume) {  // tokenized before the interruption
        m_skipRaw = c.rawDone;
        continue;
      }
      std::unique_lock<std::mutex> lock(m_mu);
      m_cv.wait(lock, [&] { return m_abort || m_raw.size() < m_window; });
      if (m_abort) return;
      m_raw.push_back(std::move(c));
      c = RawChunk{};
      m_cv.notify_all();
    }
    std::lock_guard<std::mutex> lock(m_mu);
    m_chunks = std::max<uint64_t>(m_seen, m_resume);
    m_readerDone = true;
    m_cv.notify_all();
  } catch (...) {
    fail(std::current_exception());
  }
}

void TokenizePipeline::workLoop() {
  try {
    while (true) {
      RawChunk c;
      {
        std::unique_lock<std::mutex> lock(m_mu);
        // Keep at most `window` chunks ahead of the writer (bounded memory).
        m_cv.wait(lock, [&] {
          return m_abort || (m_raw.empty() ? m_readerDone : m_raw.front().seq < m_writerAt + m_window);
        });
        if (m_abort || m_raw.empty()) return;
        c = std::move(m_raw.front());
        m_raw.pop_front();
        m_cv.notify_all();
      }
      DoneChunk d = tokenize(c);
      std::lock_guard<std::mutex> lock(m_mu);
      m_done.emplace(c.seq, std::move(d));
      m_cv.notify_all();
    }
  } catch (...) {
    fail(std::current_exception());
  }
}

DoneChunk TokenizePipeline::tokenize(RawChunk& c) {
  DoneChunk d;
  d.rawDone = c.rawDone;
  const uint64_t seq = c.seq;
  DocText doc = chunkText(std::move(c), d.skipped);
  const std::string& text = doc.text;
  d.textBytes = text.size();
  d.hasText = text.find_first_not_of(" \t\r\n") != std::string::npos;
  const uint32_t width = static_cast<uint32_t>(bytesPerTokenFor(m_tok.vocab));
  if (!m_tok.spm && width == 2) {  // bytes are their own ids, written as uint16 straight away
    d.count = text.size() + doc.docEnds.size();
    d.encoded.resize(d.count * 2);
    char* out = &d.encoded[0];
    auto put = [&out](uint16_t v) {
      std::memcpy(out, &v, 2);
      out += 2;
    };
    size_t from = 0;
    for (size_t end : doc.docEnds) {  // the end-of-document id after each document
      for (size_t i = from; i < end; ++i) put(static_cast<unsigned char>(text[i]));
      put(static_cast<uint16_t>(m_tok.eod));
      from = end;
    }
    for (size_t i = from; i < text.size(); ++i) put(static_cast<unsigned char>(text[i]));
    return d;
  }
  if (!m_tok.spm) throw DataError("the byte tokenizer's ids need 2-byte tokens");
  std::vector<int32_t> ids;
  if (!text.empty() || !doc.docEnds.empty()) ids = encodeDocuments(doc, seq);
  d.count = ids.size();
  encodeTokens(ids.data(), ids.size(), width, static_cast<uint32_t>(m_tok.vocab), d.encoded);
  return d;
}

std::vector<int32_t> TokenizePipeline::encodeDocuments(const DocText& doc, uint64_t seq) const {
  const std::string scratch = (fs::path(m_dir) / ("chunk-" + std::to_string(seq) + "-" +
                                                  std::to_string(getpid()) + ".tmp")).string();
  if (!m_tok.spm->encodesWholeDocuments()) return encodeLines(doc, scratch);
  // Each document whole (a text file's chunk before its last holds no end: its text is the
  // tail), the end-of-document id after each one that ends here.
  std::vector<std::string_view> parts;
  size_t from = 0;
  for (size_t end : doc.docEnds) {
    parts.emplace_back(doc.text.data() + from, end - from);
    from = end;
  }
  if (from < doc.text.size()) parts.emplace_back(doc.text.data() + from, doc.text.size() - from);
  const auto encoded = m_tok.spm->encodeDocuments(parts, scratch);
  std::vector<int32_t> ids;
  for (size_t i = 0; i < encoded.size(); ++i) {
    ids.insert(ids.end(), encoded[i].begin(), encoded[i].end());
    if (i < doc.docEnds.size()) ids.push_back(m_tok.eod);
  }
  return ids;
}

std::vector<int32_t> TokenizePipeline::encodeLines(const DocText& doc,
                                                   const std::string& scratch) const {
  // spm_encode writes a line of ids for each line: each document is written as whole lines,
  // and the end-of-document id follows the ids of its last line.
  std::vector<size_t> docLines, lineEnds;
  const std::string lines = documentLines(doc, &docLines);
  const std::vector<int32_t> encoded = m_tok.spm->encodeText(lines, scratch, &lineEnds);
  std::vector<int32_t> ids;
  ids.reserve(encoded.size() + docLines.size());
  size_t from = 0;
  for (size_t n : docLines) {
    const size_t to = n == 0 ? 0 : n <= lineEnds.size() ? lineEnds[n - 1] : encoded.size();
    ids.insert(ids.end(), encoded.begin() + static_cast<long>(from), encoded.begin() + static_cast<long>(to));
    ids.push_back(m_tok.eod);
    from = std::max(from, to);
  }
  ids.insert(ids.end(), encoded.begin() + static_cast<long>(from), encoded.end());
  return ids;
}

}  // namespace depthlab::data
