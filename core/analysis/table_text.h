// Text for tables written out for other programs: one CSV cell (RFC 4180) and LaTeX text with
// every character LaTeX treats specially escaped, so a run named "a,b" or "50%_x" survives
// both; and the names schemes go by in tables and figures ("pre_ln" -> "Pre-LN", or what the
// figure window named it, RunStore::displayNames). Pure functions; the tables themselves are
// built elsewhere (run_comparison).
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace depthlab::analysis {

/// `s` as one CSV cell: as it is, or in double quotes (inner quotes doubled) when it holds a
/// comma, a quote, a line break or leading/trailing spaces.
std::string csvCell(std::string_view s);
/// `s` as LaTeX text: \ { } $ & # % _ ~ ^ escaped (\textbackslash{}, \{, ..., \textasciitilde{}).
std::string latexText(std::string_view s);
/// The scheme catalogue's name of a scheme id: "Pre-LN", "LNS", "Post-LN", ...; an unknown id as it is.
std::string defaultSchemeName(std::string_view scheme);
/// The scheme's name in `names` (RunStore::displayNames(): "scheme:<id>"), else its default.
std::string schemeName(const std::map<std::string, std::string>& names, const std::string& scheme);

}  // namespace depthlab::analysis
