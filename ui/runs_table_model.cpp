// RunsTableModel; see runs_table_model.h.
#include "runs_table_model.h"

#include <QBrush>
#include <QColor>
#include <QDateTime>

namespace depthlab::ui {

void RunsTableModel::resetRuns(std::vector<store::RunInfo> runs) {
  beginResetModel();
  m_runs = std::move(runs);
  endResetModel();
}

const store::RunInfo* RunsTableModel::runAt(int row) const {
  return row >= 0 && row < static_cast<int>(m_runs.size()) ? &m_runs[static_cast<size_t>(row)]
                                                           : nullptr;
}

int RunsTableModel::rowOfRun(int64_t id) const {
  for (size_t i = 0; i < m_runs.size(); ++i) {
    if (m_runs[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

int RunsTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(m_runs.size());
}

int RunsTableModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

QVariant RunsTableModel::data(const QModelIndex& index, int role) const {
  const auto* r = runAt(index.row());
  if (!r) return {};
  if (role == Qt::ForegroundRole && index.column() == Status) {
    switch (r->status) {
      case store::RunStatus::Running: return QBrush(QColor(0, 110, 200));
      case store::RunStatus::Diverged:
      case store::RunStatus::Crashed: return QBrush(QColor(200, 40, 40));
      default: return {};
    }
  }
  if (role != Qt::DisplayRole) return {};
  switch (index.column()) {
    case Id: return QVariant::fromValue<qlonglong>(r->id);
    case Name: return QString::fromStdString(r->name);
    case Scheme: return QString::fromStdString(r->scheme);
    case Status: return QString::fromLatin1(store::toString(r->status));
    case Group: return QString::fromStdString(r->groupName);
    case Device: return QString::fromStdString(r->device);
    case Created:
      return QDateTime::fromSecsSinceEpoch(static_cast<qint64>(r->createdAt))
          .toString(QStringLiteral("yyyy-MM-dd hh:mm"));
    case Tags: {
      QStringList tags;
      for (const auto& t : r->tags) tags << QString::fromStdString(t);
      return tags.join(QStringLiteral(", "));
    }
    default: return {};
  }
}

QVariant RunsTableModel::headerData(int section, Qt::Orientation o, int role) const {
  if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
  static const char* names[] = {"ID", "Name", "Scheme", "Status", "Group", "Device", "Created",
                                "Tags"};
  return section >= 0 && section < ColumnCount ? QString::fromLatin1(names[section]) : QVariant();
}

}  // namespace depthlab::ui
