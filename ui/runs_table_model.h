// RunsTableModel: the run store's runs as a Qt table (id, name, scheme, status, group,
// device, created, tags). Holds value snapshots only; refreshed by the StorePoller.
#pragma once

#include <QAbstractTableModel>

#include <vector>

#include "store/store_types.h"

namespace depthlab::ui {

class RunsTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Id, Name, Scheme, Status, Group, Device, Created, Tags, ColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  void resetRuns(std::vector<store::RunInfo> runs);
  const store::RunInfo* runAt(int row) const;
  int rowOfRun(int64_t id) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  std::vector<store::RunInfo> m_runs;
};

}  // namespace depthlab::ui
