// See table_text.h.
#include "util/table_text.h"

namespace depthlab::util {

std::string csvCell(std::string_view s) {
  const bool quote = s.find_first_of(",\"\r\n") != std::string_view::npos ||
                     (!s.empty() && (s.front() == ' ' || s.back() == ' '));
  if (!quote) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string latexText(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\textbackslash{}"; break;
      case '~': out += "\\textasciitilde{}"; break;
      case '^': out += "\\textasciicircum{}"; break;
      case '{':
      case '}':
      case '$':
      case '&':
      case '#':
      case '%':
      case '_':
        out += '\\';
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace depthlab::util
