// RunsTableModel: the run store's runs as a Qt table for the runs browser: name, group,
// scheme, seed, size (params, depth, width), peak lr, corpus, status, steps, final validation
// loss and perplexity, tokens seen, device, duration, created time, tags; plus one row per
// scheme of each launch whose runs are not in the store yet (queued, or starting with its
// phase; negative ids, no actions). Holds value snapshots only; refreshed by the StorePoller.
// A refresh with the same rows updates them in place (the view does not re-sort under the
// cursor). Sorting and filtering happen in a proxy (RunsFilterModel).
#pragma once

#include <QAbstractTableModel>

#include <map>
#include <tuple>
#include <vector>

#include "store/store_types.h"

namespace depthlab::ui {

class RunsTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Id, Name, Group, Scheme, Seed, Params, Depth, Width, Lr, Corpus, Status, Steps,
                LossVal, PplVal, Tokens, Device, Duration, Created, Tags, ColumnCount };
  /// A run's notes (every column; also its tooltip), for the filter.
  static constexpr int NotesRole = Qt::UserRole + 1;
  using QAbstractTableModel::QAbstractTableModel;

  /// Replaces the rows. Returns true when the set of rows changed (else they were updated in
  /// place). `pending`: launches not in the store yet, as (group, scheme, status text) rows.
  bool resetRuns(std::vector<store::RunInfo> runs, std::map<int64_t, store::RunSummary> summaries = {},
                 const std::vector<std::tuple<QString, QString, QString>>& pending = {});
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
    double lr = 0;
    QString pendingStatus;  // a launch not in the store yet: what it is doing
    QString corpus;
    double tokensPerStep = 0;
    bool imported = false;  // an imported model: no seed, learning rate, corpus or steps of ours
  };
  std::vector<Row> m_rows;
};

}  // namespace depthlab::ui
