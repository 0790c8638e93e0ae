// RunsTableModel; see runs_table_model.h.
#include "runs/runs_table_model.h"

#include <QBrush>
#include <QColor>
#include <QDateTime>
#include <QFileInfo>

#include <algorithm>
#include <cmath>

#include "experiment/experiment_config.h"
#include "experiment/presets.h"
#include "experiment/run_config.h"

namespace depthlab::ui {

QString RunsTableModel::columnName(int c) {
  static const char* names[] = {"ID",     "Name",     "Group",    "Scheme",  "Seed",
                                "Params", "Depth",    "Width",    "LR",      "Corpus",
                                "Status", "Steps",    "Val loss", "Val PPL", "Tokens",
                                "Device", "Duration", "Created",  "Tags"};
  return c >= 0 && c < ColumnCount ? QString::fromLatin1(names[c]) : QString();
}

bool RunsTableModel::resetRuns(std::vector<store::RunInfo> runs,
                               std::map<int64_t, store::RunSummary> summaries,
                               const std::vector<std::tuple<QString, QString, QString>>& pending) {
  std::vector<Row> rows;
  for (auto& r : runs) {
    Row row;
    row.summary = summaries[r.id];
    try {
      auto c = experiment::configOf(r);
      row.params = experiment::parameterCount(c.model, r.scheme, c.options);
      row.depth = c.model.nLayers;
      row.width = c.model.dModel;
      row.lr = c.optim.lr;
      row.corpus = c.data.corpus.empty()
                       ? QStringLiteral("default (KJV)")
                       : QFileInfo(QString::fromStdString(c.data.corpus)).fileName();
      row.tokensPerStep =
          static_cast<double>(c.optim.batchSize) * c.model.seqLen * c.optim.gradAccum;
    } catch (const std::exception&) {
      row.corpus = QStringLiteral("(unreadable config)");
    }
    row.imported = experiment::isImportedRun(r);
    const bool watched = experiment::isWatchedRun(r);
    if (row.imported || watched) {  // its config's training fields are defaults, not facts
      row.lr = 0;
      row.corpus = watched ? QStringLiteral("(its own loop)") : QStringLiteral("-");
      row.tokensPerStep = 0;
    }
    row.info = std::move(r);
    rows.push_back(std::move(row));
  }
  int64_t fakeId = 0;
  for (const auto& [group, scheme, status] : pending) {
    Row row;
    row.info.id = --fakeId;
    row.info.groupName = group.toStdString();
    row.info.scheme = scheme.toStdString();
    row.info.name = (group + QLatin1Char(' ') + scheme).toStdString();
    row.pendingStatus = status;
    rows.push_back(std::move(row));
  }
  bool same = rows.size() == m_rows.size();
  for (size_t i = 0; same && i < rows.size(); ++i) same = rows[i].info.id == m_rows[i].info.id;
  if (same) {  // values only: update in place, no reset (the view keeps its order)
    m_rows = std::move(rows);
    if (!m_rows.empty()) Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, ColumnCount - 1));
    return false;
  }
  beginResetModel();
  m_rows = std::move(rows);
  endResetModel();
  return true;
}

const store::RunInfo* RunsTableModel::runAt(int row) const {
  return row >= 0 && row < static_cast<int>(m_rows.size()) ? &m_rows[static_cast<size_t>(row)].info
                                                           : nullptr;
}

int RunsTableModel::rowOfRun(int64_t id) const {
  for (size_t i = 0; i < m_rows.size(); ++i) {
    if (m_rows[i].info.id == id) return static_cast<int>(i);
  }
  return -1;
}

int RunsTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_rows.size());
}

int RunsTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunsTableModel::data(const QModelIndex& index, int role) const {
  if (index.row() < 0 || index.row() >= static_cast<int>(m_rows.size())) return {};
  const Row& row = m_rows[static_cast<size_t>(index.row())];
  const auto& r = row.info;
  if (role == Qt::ForegroundRole && !row.pendingStatus.isEmpty())
    return QBrush(QColor(120, 120, 120));
  if (role == Qt::ForegroundRole && index.column() == Status) {
    switch (r.status) {
      case store::RunStatus::Running: return QBrush(QColor(0, 110, 200));
      case store::RunStatus::Diverged:
      case store::RunStatus::Crashed: return QBrush(QColor(200, 40, 40));
      default: return {};
    }
  }
  if (role == NotesRole) return QString::fromStdString(r.notes);
  if (role == Qt::ToolTipRole && !r.notes.empty()) return QString::fromStdString(r.notes);
  // EditRole carries sortable values (numbers stay numbers).
  if (role != Qt::DisplayRole && role != Qt::EditRole) return {};
  const bool display = role == Qt::DisplayRole;
  const int64_t steps = row.summary.lastStep + 1;
  if (!row.pendingStatus.isEmpty()) {  // a launch on its way into the store
    switch (index.column()) {
      case Name: return QString::fromStdString(r.name);
      case Group: return QString::fromStdString(r.groupName);
      case Scheme: return QString::fromStdString(r.scheme);
      case Status: return row.pendingStatus;
      case Id:
        return display ? QVariant(QStringLiteral("…")) : QVariant::fromValue<qlonglong>(1LL << 60);
      default: return display ? QVariant(QStringLiteral("–")) : QVariant(0);  // not yet, not blank
    }
  }
  if (row.imported &&
      (index.column() == Seed || index.column() == Steps || index.column() == Tokens)) {
    return display ? QVariant(QStringLiteral("-")) : QVariant(-1);
  }
  switch (index.column()) {
    case Id: return QVariant::fromValue<qlonglong>(r.id);
    case Seed: return QVariant::fromValue<qlonglong>(r.seed);
    case Lr:
      return display ? QVariant(row.lr > 0 ? QString::number(row.lr, 'g', 3) : QStringLiteral("-"))
                     : QVariant(row.lr);
    case Name: return QString::fromStdString(r.name);
    case Group: return QString::fromStdString(r.groupName);
    case Scheme: return QString::fromStdString(r.scheme);
    case Params:
      return display ? QVariant(QStringLiteral("%1M").arg(row.params / 1e6, 0, 'f', 2))
                     : QVariant::fromValue(row.params);
    case Depth: return row.depth;
    case Width: return row.width;
    case Corpus: return row.corpus;
    case Status: return QString::fromLatin1(store::toString(r.status));
    case Steps: return QVariant::fromValue<qlonglong>(steps);
    case LossVal:
      if (!row.summary.lossVal) return display ? QVariant(QStringLiteral("-")) : QVariant(1e300);
      return display ? QVariant(QString::number(*row.summary.lossVal, 'f', 4))
                     : QVariant(*row.summary.lossVal);
    case PplVal:
      if (!row.summary.lossVal) return display ? QVariant(QStringLiteral("-")) : QVariant(1e300);
      return display ? QVariant(QString::number(std::exp(*row.summary.lossVal), 'f', 2))
                     : QVariant(std::exp(*row.summary.lossVal));
    case Tokens: {
      const double t = row.tokensPerStep * static_cast<double>(std::max<int64_t>(steps, 0));
      return display ? QVariant(t >= 1e9 ? QStringLiteral("%1B").arg(t / 1e9, 0, 'f', 2)
                                         : QStringLiteral("%1M").arg(t / 1e6, 0, 'f', 2))
                     : QVariant(t);
    }
    case Device: return QString::fromStdString(r.device);
    case Duration: {
      const auto trained = store::trainingSeconds(r);  // not the pauses before resumes
      if (!trained) return display ? QVariant(QStringLiteral("-")) : QVariant(0.0);
      const int s = static_cast<int>(*trained);
      return display ? QVariant(QStringLiteral("%1:%2:%3")
                                    .arg(s / 3600)
                                    .arg(s / 60 % 60, 2, 10, QLatin1Char('0'))
                                    .arg(s % 60, 2, 10, QLatin1Char('0')))
                     : QVariant(*trained);
    }
    case Created:
      return QDateTime::fromSecsSinceEpoch(static_cast<qint64>(r.createdAt))
          .toString(QStringLiteral("yyyy-MM-dd hh:mm"));
    case Tags: {
      QStringList tags;
      for (const auto& t : r.tags) tags << QString::fromStdString(t);
      return tags.join(QStringLiteral(", "));
    }
    default: return {};
  }
}

QVariant RunsTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  return columnName(section);
}

}  // namespace depthlab::ui
