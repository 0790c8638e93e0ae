// RunsTableModel: the run store's runs as a Qt table for the runs browser: name, group,
// scheme, size (params, depth, width), corpus, status, steps, final validation loss and
// perplexity, tokens seen, device, duration, created time, tags. Holds value snapshots only;
// refreshed by the StorePoller. Sorting and filtering happen in a QSortFilterProxyModel.
#pragma once

#include <QAbstractTableModel>

#include <map>
#include <vector>

#include "store/store_types.h"

namespace depthlab::ui {

class RunsTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Id, Name, Group, Scheme, Params, Depth, Width, Corpus, Status, Steps, LossVal,
                PplVal, Tokens, Device, Duration, Created, Tags, ColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  void resetRuns(std::vector<store::RunInfo> runs, std::map<int64_t, store::RunSummary> summaries = {});
  const store::RunInfo* runAt(int row) const;
  int rowOfRun(int64_t id) const;
  static QString columnName(int column);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation o, int role) const override;

 private:
  struct Row {
    store::RunInfo info;
    store::RunSummary summary;
    qint64 params = 0;
    int depth = 0, width = 0;
    QString corpus;
    double tokensPerStep = 0;
  };
  std::vector<Row> m_rows;
};

}  // namespace depthlab::ui
