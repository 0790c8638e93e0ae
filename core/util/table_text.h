// Text for tables written out for other programs: one CSV cell (RFC 4180) and LaTeX text with
// every character LaTeX treats specially escaped, so a run named "a,b" or "50%_x" survives
// both. Pure functions; the tables themselves are built elsewhere (run_comparison,
// family_table), and the names schemes go by come from model::schemeDisplayName.
#pragma once

#include <string>
#include <string_view>

namespace depthlab::util {

/// `s` as one CSV cell: as it is, or in double quotes (inner quotes doubled) when it holds a
/// comma, a quote, a line break or leading/trailing spaces.
std::string csvCell(std::string_view s);
/// `s` as LaTeX text: \ { } $ & # % _ ~ ^ escaped (\textbackslash{}, \{, ..., \textasciitilde{}).
std::string latexText(std::string_view s);

}  // namespace depthlab::util
