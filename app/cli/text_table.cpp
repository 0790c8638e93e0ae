// See text_table.h.
#include "text_table.h"

#include <algorithm>

namespace depthlab::cli {

size_t displayWidth(const std::string& utf8) {
  return static_cast<size_t>(std::count_if(utf8.begin(), utf8.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

std::string formatTextTable(const std::vector<std::string>& header,
                            const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width(header.size(), 0);
  auto widen = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], displayWidth(cells[c]));
    }
  };
  widen(header);
  for (const auto& r : rows) widen(r);
  std::string out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (size_t c = 0; c < cells.size() && c < width.size(); ++c) {
      l += cells[c];
      if (c + 1 < cells.size()) l.append(width[c] - displayWidth(cells[c]) + 2, ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  line(header);
  for (const auto& r : rows) line(r);
  return out;
}

}  // namespace depthlab::cli
