// RunsFilterModel: the runs browser's sort and filter proxy. The filter text is either free
// text (a case-insensitive substring of any column or of the run's notes, or of the chosen
// column) or conditions on named columns, joined by commas or "and": "val loss < 1.5",
// "depth >= 24, lr = 0.006", "steps > 100 and scheme lns" (a word after a column name, alone
// or beside others, matches a whole word of it: "scheme lns" is not "dyt_lns"; "group = tour"
// matches the cell's whole text; "notes warmup" searches the notes alone). Numbers compare the
// columns' sortable values. Sorting is by the same values, and happens when asked
// (a header click, rows added or removed), not whenever a value changes.
#pragma once

#include <QSortFilterProxyModel>
#include <QString>

#include <vector>

namespace depthlab::ui {

class RunsFilterModel : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit RunsFilterModel(QObject* parent = nullptr);
  /// Sets the filter; `column` -1 = any column (free text only).
  void setRunFilter(const QString& text, int column);
  /// What the filter understood, or why not ("" for free text).
  QString filterDescription() const { return m_description; }
  /// True when the text reads as a condition that cannot be one ("val loss < abc", an unknown
  /// column): filterDescription says why, and every run stays shown.
  bool filterInvalid() const { return m_invalid; }

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

 private:
  struct Condition {
    int column = -1;
    QString op;      // < <= > >= = != , or "~" for a substring
    double number = 0;
    QString text;
  };
  std::vector<Condition> m_conditions;  // all must hold
  QString m_free;                        // free text when there are no conditions
  int m_column = -1;
  QString m_description;
  bool m_invalid = false;
};

}  // namespace depthlab::ui
