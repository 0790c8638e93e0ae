// A plain-text table for the terminal: every column as wide as its widest cell (header
// included), two spaces between columns, the last column unpadded. Widths count UTF-8 code
// points, so names with accents or ² line up. Nothing is cut: a long run name widens its
// column rather than losing its tail (it used to be cut at 27 bytes, the group at 15, which
// dropped the scheme from every default name). No colours, no wrapping.
#pragma once

#include <string>
#include <vector>

namespace depthlab::cli {

/// header and rows of cells (rows may be shorter than the header) -> lines ending in '\n'.
std::string formatTextTable(const std::vector<std::string>& header,
                            const std::vector<std::vector<std::string>>& rows);

/// Code points in a UTF-8 string (continuation bytes not counted).
size_t displayWidth(const std::string& utf8);

}  // namespace depthlab::cli
