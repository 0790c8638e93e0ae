// See table_text.h.
#include "analysis/table_text.h"

#include "model/scheme_catalogue.h"

namespace depthlab::analysis {

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
      case '{': case '}': case '$': case '&': case '#': case '%': case '_':
        out += '\\';
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

std::string defaultSchemeName(std::string_view scheme) {
  return model::schemeDisplayName(std::string(scheme));
}

std::string schemeName(const std::map<std::string, std::string>& names, const std::string& scheme) {
  const auto it = names.find("scheme:" + scheme);
  return it == names.end() || it->second.empty() ? defaultSchemeName(scheme) : it->second;
}

}  // namespace depthlab::analysis
