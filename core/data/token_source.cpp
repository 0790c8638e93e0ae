// See token_source.h.
#include "data/token_source.h"

#include <algorithm>
#include <cstring>

#include "data/corpus.h"

namespace depthlab::data {

namespace {
// `what` names the source only when the range is wrong (it is read on every window).
template <class Describe>
void checkRange(uint64_t start, size_t n, uint64_t size, const Describe& what) {
  if (start > size || n > size - start) {
    throw DataError("tokens [" + std::to_string(start) + ", " + std::to_string(start + n) +
                    ") are past the end of " + what() + " (" + std::to_string(size) + " tokens)");
  }
}
}  // namespace

std::vector<int32_t> TokenSource::readAll() const {
  std::vector<int64_t> wide(size());
  if (!wide.empty()) read(0, wide.size(), wide.data());
  return std::vector<int32_t>(wide.begin(), wide.end());
}

std::vector<uint64_t> TokenSource::positionsOf(int64_t id) const {
  constexpr uint64_t kBlock = 1 << 20;
  std::vector<uint64_t> out;
  std::vector<int64_t> block;
  for (uint64_t at = 0; at < size(); at += kBlock) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kBlock, size() - at));
    block.resize(n);
    read(at, n, block.data());
    for (size_t i = 0; i < n; ++i) {
      if (block[i] == id) out.push_back(at + i);
    }
  }
  return out;
}

InMemoryTokens::InMemoryTokens(std::vector<int32_t> tokens) : m_tokens(std::move(tokens)) {
  int32_t hi = -1;
  for (int32_t t : m_tokens) {
    if (t < 0) throw DataError("token id " + std::to_string(t) + " is negative");
    hi = std::max(hi, t);
  }
  m_vocab = hi + 1;
}

void InMemoryTokens::read(uint64_t start, size_t n, int64_t* out) const {
  checkRange(start, n, m_tokens.size(), [] { return std::string("the tokens"); });
  std::copy(m_tokens.begin() + static_cast<long>(start),
            m_tokens.begin() + static_cast<long>(start + n), out);
}

MappedTokens::MappedTokens(std::vector<Segment> segments, int vocab)
    : m_segments(std::move(segments)), m_vocab(vocab) {
  for (const auto& s : m_segments) {
    m_first.push_back(m_total);
    m_total += s.count;
  }
}

void MappedTokens::releasePages() const {
  for (const auto& s : m_segments) s.file.releasePages();
}

void MappedTokens::read(uint64_t start, size_t n, int64_t* out) const {
  checkRange(start, n, m_total, [this] { return describe(); });
  if (m_releaseEvery > 0 && m_reads.fetch_add(1, std::memory_order_relaxed) % m_releaseEvery ==
                                m_releaseEvery - 1) {
    releasePages();
  }
  size_t seg = static_cast<size_t>(std::upper_bound(m_first.begin(), m_first.end(), start) -
                                   m_first.begin()) - 1;
  while (n > 0) {
    const Segment& s = m_segments[seg];
    const uint64_t local = start - m_first[seg];
    const size_t take = static_cast<size_t>(std::min<uint64_t>(n, s.count - local));
    const unsigned char* p = s.file.data() + s.offset + local * static_cast<uint64_t>(s.bytesPerToken);
    if (s.bytesPerToken == 1) {
      for (size_t i = 0; i < take; ++i) out[i] = p[i];
    } else if (s.bytesPerToken == 2) {
      for (size_t i = 0; i < take; ++i) {
        uint16_t v;
        std::memcpy(&v, p + 2 * i, 2);
        out[i] = v;
      }
    } else {
      for (size_t i = 0; i < take; ++i) {
        uint32_t v;
        std::memcpy(&v, p + 4 * i, 4);
        out[i] = v;
      }
    }
    out += take;
    start += take;
    n -= take;
    ++seg;
  }
}

std::string MappedTokens::describe() const {
  if (m_segments.empty()) return "no token files";
  if (m_segments.size() == 1) return "'" + m_segments[0].file.path() + "'";
  return std::to_string(m_segments.size()) + " token files from '" + m_segments[0].file.path() + "'";
}

}  // namespace depthlab::data
