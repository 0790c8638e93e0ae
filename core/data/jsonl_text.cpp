// See jsonl_text.h.
#include "data/jsonl_text.h"

#include <cctype>
#include <cstdint>

namespace depthlab::data {

namespace {

// Length of the well-formed UTF-8 sequence at p[0..n), 0 when it is not one.
size_t utf8SequenceLength(const unsigned char* p, size_t n) {
  const unsigned char c = p[0];
  if (c < 0x80) return 1;
  auto cont = [&](size_t i) { return i < n && (p[i] & 0xC0) == 0x80; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && p[1] < 0xA0) return 0;   // overlong
    if (c == 0xED && p[1] >= 0xA0) return 0;  // surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && p[1] < 0x90) return 0;   // overlong
    if (c == 0xF4 && p[1] >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

void appendUtf8(uint32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Scanner {
 public:
  explicit Scanner(std::string_view s) : m_p(s.data()), m_end(s.data() + s.size()) {}

  void skipSpace() {
    while (m_p < m_end && (*m_p == ' ' || *m_p == '\t' || *m_p == '\r' || *m_p == '\n')) ++m_p;
  }
  bool eat(char c) {
    skipSpace();
    if (m_p < m_end && *m_p == c) {
      ++m_p;
      return true;
    }
    return false;
  }
  bool atEnd() {
    skipSpace();
    return m_p == m_end;
  }
  char peek() {
    skipSpace();
    return m_p < m_end ? *m_p : '\0';
  }

  // A string at the cursor, decoded into `out` when given. Sets `badUtf8` for ill-formed
  // UTF-8 or lone surrogates; returns false for a syntax error.
  bool string(std::string* out, bool& badUtf8) {
    if (!eat('"')) return false;
    while (m_p < m_end) {
      // Copy the run of plain bytes up to the next quote, backslash or control byte.
      const char* run = m_p;
      while (m_p < m_end && *m_p != '"' && *m_p != '\\' && static_cast<unsigned char>(*m_p) >= 0x20) ++m_p;
      if (m_p > run) {
        const std::string_view piece(run, static_cast<size_t>(m_p - run));
        if (!isValidUtf8(piece)) badUtf8 = true;
        if (out) out->append(piece);
      }
      if (m_p == m_end) return false;
      const char c = *m_p++;
      if (c == '"') return true;
      if (c != '\\') return false;  // raw control byte
      if (m_p == m_end) return false;
      const char e = *m_p++;
      switch (e) {
        case '"': case '\\': case '/': if (out) *out += e; break;
        case 'b': if (out) *out += '\b'; break;
        case 'f': if (out) *out += '\f'; break;
        case 'n': if (out) *out += '\n'; break;
        case 'r': if (out) *out += '\r'; break;
        case 't': if (out) *out += '\t'; break;
        case 'u': {
          uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xD800 && cp <= 0xDBFF) {  // a high surrogate wants its low half
            uint32_t lo = 0;
            if (m_end - m_p >= 6 && m_p[0] == '\\' && m_p[1] == 'u') {
              m_p += 2;
              if (!hex4(lo)) return false;
            }
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else {
              badUtf8 = true;
              break;
            }
          } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
            badUtf8 = true;
            break;
          }
          if (out) appendUtf8(cp, *out);
          break;
        }
        default: return false;
      }
    }
    return false;
  }

  // Skips any value (object, array, string, number, literal) without building it.
  bool skipValue(int depth = 0) {
    if (depth > 512) return false;
    const char c = peek();
    bool bad = false;
    if (c == '"') return string(nullptr, bad);
    if (c == '{' || c == '[') {
      const char close = c == '{' ? '}' : ']';
      ++m_p;
      if (eat(close)) return true;
      while (true) {
        if (c == '{') {
          if (!string(nullptr, bad) || !eat(':')) return false;
        }
        if (!skipValue(depth + 1)) return false;
        if (eat(',')) continue;
        return eat(close);
      }
    }
    const char* start = m_p;
    while (m_p < m_end && (std::isalnum(static_cast<unsigned char>(*m_p)) || *m_p == '-' ||
                           *m_p == '+' || *m_p == '.')) {
      ++m_p;
    }
    return m_p > start;
  }

 private:
  bool hex4(uint32_t& v) {
    if (m_end - m_p < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = *m_p++;
      v <<= 4;
      if (h >= '0' && h <= '9') v |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f') v |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F') v |= static_cast<uint32_t>(h - 'A' + 10);
      else return false;
    }
    return true;
  }
  const char* m_p;
  const char* m_end;
};

}  // namespace

bool isValidUtf8(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  const size_t n = s.size();
  size_t i = 0;
  while (i < n) {
    // ASCII fast path, 8 bytes at a time.
    while (i + 8 <= n) {
      uint64_t w;
      __builtin_memcpy(&w, p + i, 8);
      if (w & 0x8080808080808080ull) break;
      i += 8;
    }
    if (i >= n) break;
    const size_t len = utf8SequenceLength(p + i, n - i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

JsonlText extractJsonlText(std::string_view line, std::string& out) {
  Scanner s(line);
  if (!s.eat('{')) return JsonlText::InvalidJson;
  std::string key, text;
  bool found = false, textIsString = false, badUtf8 = false;
  if (!s.eat('}')) {
    while (true) {
      key.clear();
      bool keyBad = false;
      if (!s.string(&key, keyBad) || !s.eat(':')) return JsonlText::InvalidJson;
      if (key == "text" && !found) {
        found = true;
        if (s.peek() == '"') {
          textIsString = true;
          if (!s.string(&text, badUtf8)) return JsonlText::InvalidJson;
        } else if (!s.skipValue()) {
          return JsonlText::InvalidJson;
        }
      } else if (!s.skipValue()) {
        return JsonlText::InvalidJson;
      }
      if (s.eat(',')) continue;
      if (s.eat('}')) break;
      return JsonlText::InvalidJson;
    }
  }
  if (!s.atEnd()) return JsonlText::InvalidJson;
  if (!found || !textIsString) return JsonlText::NoText;
  if (badUtf8) return JsonlText::InvalidUtf8;
  out += text;
  return JsonlText::Ok;
}

}  // namespace depthlab::data
