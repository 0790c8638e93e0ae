// FigureCsv: the CSV beside an exported figure, exactly the plotted data, built cell by cell.
// A long run's variance figure has ~10^6 rows, so no string object per cell (that cost ~0.4 s
// of a figure set), and numbers by std::to_chars, which writes exactly what printf's %.9g
// writes at a fraction of its cost (snprintf was a quarter of a figure set's time). Qt only for
// the header and the bytes handed to the writer.
#pragma once

#include <QByteArray>
#include <QStringList>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>

namespace depthlab::ui {

class FigureCsv {
 public:
  QStringList header;
  FigureCsv& integer(int64_t v) {
    char buf[24];
    return put(std::string_view(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof(buf), v).ptr - buf)));
  }
  FigureCsv& value(double v) {
    if (!std::isfinite(v)) return put("nan");
    char buf[32];
    const auto end = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::general, 9).ptr;
    return put(std::string_view(buf, static_cast<size_t>(end - buf)));
  }
  FigureCsv& text(const char* t) { return put(t); }
  void endRow() {
    m_text += '\n';
    m_open = false;
    ++m_rows;
  }
  bool empty() const { return m_rows == 0; }
  QByteArray bytes() const {
    return header.join(QLatin1Char(',')).toUtf8() + '\n' +
           QByteArray(m_text.data(), static_cast<qsizetype>(m_text.size()));
  }

 private:
  FigureCsv& put(std::string_view cell) {
    if (m_open) m_text += ',';
    m_text += cell;
    m_open = true;
    return *this;
  }
  std::string m_text;
  size_t m_rows = 0;
  bool m_open = false;
};

}  // namespace depthlab::ui
