// See runs_filter_model.h.
#include "runs/runs_filter_model.h"

#include <QRegularExpression>

#include <cmath>

#include "runs/runs_table_model.h"

namespace depthlab::ui {

RunsFilterModel::RunsFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
  setSortRole(Qt::EditRole);
  setDynamicSortFilter(false);  // no re-sorting under the cursor while rows update
}

namespace {

// Runs' notes are no column of the table (they are its rows' tooltips) but can be filtered on.
constexpr int kNotes = RunsTableModel::ColumnCount;

// The column a user's word names ("val loss", "valloss", "lr", "notes", ...); -1 when none.
int columnNamed(const QString& word) {
  const QString w = word.simplified().remove(QLatin1Char(' ')).toLower();
  if (w == QLatin1String("notes") || w == QLatin1String("note")) return kNotes;
  for (int c = 0; c < RunsTableModel::ColumnCount; ++c) {
    if (RunsTableModel::columnName(c).remove(QLatin1Char(' ')).toLower() == w) return c;
  }
  return -1;
}

// Why `part` reads as a comparison (a name, an operator, a value) that cannot be one: an
// unknown column or a value that is not a number; "" when it is fine or not a comparison.
QString invalidCondition(const QString& part) {
  static const QRegularExpression shape(
      QStringLiteral("^\\s*([A-Za-z][A-Za-z ]*?)\\s*(<=|>=|!=|==|=|<|>)\\s*(.*?)\\s*$"));
  const auto m = shape.match(part);
  if (!m.hasMatch()) return QString();
  const QString name = m.captured(1).simplified(), value = m.captured(3);
  if (columnNamed(name) < 0) {
    QStringList columns;
    for (int c = 0; c < RunsTableModel::ColumnCount; ++c) columns << RunsTableModel::columnName(c).toLower();
    columns << QStringLiteral("notes");
    return QObject::tr("no column \"%1\" (columns: %2)").arg(name, columns.join(QStringLiteral(", ")));
  }
  if (columnNamed(name) == kNotes) {
    return QObject::tr("notes are searched for a word, not compared (try e.g. notes warmup)");
  }
  bool ok = false;
  value.toDouble(&ok);
  const QString op = m.captured(2);
  const bool equality = op == QLatin1String("=") || op == QLatin1String("==") || op == QLatin1String("!=");
  if (value.isEmpty() || (!ok && !equality)) {  // "group = tour" compares text: fine
    return QObject::tr("\"%1\" is not a number (in \"%2\"): %3 compares numbers; try e.g. "
                       "depth >= 24, or %4 = NAME to match a name whole")
        .arg(value.isEmpty() ? QObject::tr("nothing") : value, part.trimmed(), op, name);
  }
  return QString();
}

// Whether `cell` holds `word` as a whole word ("lns" in "lns", not in "dyt_lns" or "lnsx").
bool holdsWord(const QString& cell, const QString& word) {
  const QRegularExpression whole(QStringLiteral("(?<![\\w])") + QRegularExpression::escape(word) +
                                     QStringLiteral("(?![\\w])"),
                                 QRegularExpression::CaseInsensitiveOption);
  return whole.match(cell).hasMatch();
}

}  // namespace

void RunsFilterModel::setRunFilter(const QString& text, int column) {
  m_conditions.clear();
  m_free.clear();
  m_description.clear();
  m_column = column;
  static const QRegularExpression cond(
      QStringLiteral("^\\s*([A-Za-z][A-Za-z ]*?)\\s*(<=|>=|!=|==|=|<|>)\\s*([-+0-9.eE]+)\\s*$"));
  static const QRegularExpression word(QStringLiteral("^\\s*([A-Za-z][A-Za-z ]*?)\\s+~?\\s*(\\S+)\\s*$"));
  static const QRegularExpression textEq(
      QStringLiteral("^\\s*([A-Za-z][A-Za-z ]*?)\\s*(==|!=|=)\\s*(.+?)\\s*$"));
  const QStringList parts = text.split(QRegularExpression(QStringLiteral(",|\\band\\b")), Qt::SkipEmptyParts);
  bool structured = !parts.isEmpty();
  m_invalid = false;
  std::vector<Condition> conditions;
  for (const auto& part : parts) {
    Condition c;
    if (const QString why = invalidCondition(part); !why.isEmpty()) {  // said, not silently empty
      m_invalid = true;
      m_description = tr("Not a filter: %1 (every run is shown)").arg(why);
      invalidate();
      return;
    }
    if (auto m = cond.match(part); m.hasMatch() && columnNamed(m.captured(1)) >= 0) {
      bool ok = false;
      c.column = columnNamed(m.captured(1));
      c.op = m.captured(2) == QLatin1String("==") ? QStringLiteral("=") : m.captured(2);
      c.number = m.captured(3).toDouble(&ok);
      if (!ok) { structured = false; break; }
    } else if (auto t = textEq.match(part); t.hasMatch() && columnNamed(t.captured(1)) >= 0) {
      c.column = columnNamed(t.captured(1));  // "group = tour": the cell's whole text
      c.op = t.captured(2) == QLatin1String("!=") ? QStringLiteral("is not") : QStringLiteral("is");
      c.text = t.captured(3);
    } else if (auto w = word.match(part); w.hasMatch() && columnNamed(w.captured(1)) >= 0) {
      c.column = columnNamed(w.captured(1));  // "scheme lns", alone too: a whole word
      c.op = QStringLiteral("~");
      c.text = w.captured(2);
    } else {
      structured = false;
      break;
    }
    conditions.push_back(c);
  }
  if (structured) {
    m_conditions = std::move(conditions);
    QStringList said;
    for (const auto& c : m_conditions) {
      const QString name = c.column == kNotes ? tr("Notes") : RunsTableModel::columnName(c.column);
      const bool text = c.op == QLatin1String("~") || c.op.startsWith(QLatin1String("is"));
      // Notes are searched as text; a table column's word is matched whole.
      const QString op = c.op != QLatin1String("~") ? c.op : c.column == kNotes ? c.op : tr("has the word");
      said << name + QLatin1Char(' ') + op +
                  QLatin1Char(' ') + (text ? c.text : QString::number(c.number));
    }
    m_description = tr("runs where %1").arg(said.join(tr(" and ")));
  } else {
    m_free = text.trimmed();
  }
  invalidate();
}

bool RunsFilterModel::filterAcceptsRow(int row, const QModelIndex& parent) const {
  auto* m = sourceModel();
  if (!m_conditions.empty()) {
    for (const auto& c : m_conditions) {
      if (c.column == kNotes) {  // notes: a substring test only
        const QString notes = m->data(m->index(row, 0, parent), RunsTableModel::NotesRole).toString();
        if (c.op != QLatin1String("~") || !notes.contains(c.text, Qt::CaseInsensitive)) return false;
        continue;
      }
      const QModelIndex idx = m->index(row, c.column, parent);
      const QString cell = m->data(idx, Qt::DisplayRole).toString();
      if (c.op == QLatin1String("~")) {
        if (!holdsWord(cell, c.text)) return false;
        continue;
      }
      if (c.op.startsWith(QLatin1String("is"))) {
        const bool same = cell.compare(c.text, Qt::CaseInsensitive) == 0;
        if (same != (c.op == QLatin1String("is"))) return false;
        continue;
      }
      bool ok = false;
      const double v = m->data(idx, Qt::EditRole).toDouble(&ok);
      if (!ok || !std::isfinite(v) || v >= 1e299) return false;  // "-" (not measured) never matches
      const double x = c.number;
      const double tol = 1e-9 * std::max(1.0, std::abs(x));
      const bool pass = c.op == QLatin1String("<") ? v < x
                      : c.op == QLatin1String("<=") ? v <= x + tol
                      : c.op == QLatin1String(">") ? v > x
                      : c.op == QLatin1String(">=") ? v >= x - tol
                      : c.op == QLatin1String("=") ? std::abs(v - x) <= tol
                                                   : std::abs(v - x) > tol;
      if (!pass) return false;
    }
    return true;
  }
  if (m_free.isEmpty()) return true;
  if (m_column < 0 && m->data(m->index(row, 0, parent), RunsTableModel::NotesRole)
                          .toString()
                          .contains(m_free, Qt::CaseInsensitive)) {
    return true;  // free text finds a run by its notes too
  }
  for (int c = 0; c < m->columnCount(parent); ++c) {
    if (m_column >= 0 && c != m_column) continue;
    if (m->data(m->index(row, c, parent), Qt::DisplayRole).toString().contains(m_free, Qt::CaseInsensitive)) return true;
  }
  return false;
}

}  // namespace depthlab::ui
