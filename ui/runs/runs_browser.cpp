// RunsBrowser; see runs_browser.h.
#include "runs/runs_browser.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDesktopServices>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QUrl>
#include <QVBoxLayout>

#include "runs/runs_table_model.h"
#include "store_poller.h"

namespace depthlab::ui {

RunsBrowser::RunsBrowser(StorePoller* poller, QWidget* parent) : QWidget(parent), m_poller(poller) {
  m_model = new RunsTableModel(this);
  m_proxy = new QSortFilterProxyModel(this);
  m_proxy->setSourceModel(m_model);
  m_proxy->setSortRole(Qt::EditRole);
  m_proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
  m_proxy->setFilterKeyColumn(-1);
  m_view = new QTableView;
  m_view->setObjectName(QStringLiteral("runsView"));
  m_view->setModel(m_proxy);
  m_view->setSortingEnabled(true);
  m_view->sortByColumn(RunsTableModel::Id, Qt::DescendingOrder);
  m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_view->horizontalHeader()->setStretchLastSection(true);
  m_view->verticalHeader()->hide();
  connect(m_view, &QTableView::doubleClicked, this,
          [this] { emit openRequested(selectedRunIds()); });

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(makeButtons());
  layout->addWidget(makeFilterRow());
  layout->addWidget(m_view, 1);
}

QWidget* RunsBrowser::makeButtons() {
  auto* row = new QWidget;
  auto* buttons = new QHBoxLayout(row);
  buttons->setContentsMargins(0, 0, 0, 0);
  auto add = [&](const QString& text, auto&& onClick) {
    auto* b = new QPushButton(text);
    buttons->addWidget(b);
    connect(b, &QPushButton::clicked, this, onClick);
  };
  add(tr("Stop"), [this] { emit stopRequested(selectedRunIds()); });
  add(tr("Clone into set-up"), [this] {
    auto ids = selectedRunIds();
    if (!ids.empty()) emit cloneRequested(ids.front());
  });
  add(tr("Open dashboard"), [this] { emit openRequested(selectedRunIds()); });
  add(tr("Compare"), [this] {
    auto ids = selectedRunIds();
    if (ids.size() < 2) {
      emit message(tr("Select two or more runs to compare"));
      return;
    }
    emit compareRequested(ids);
  });
  add(tr("Paper figures…"), [this] {
    auto ids = selectedRunIds();
    if (ids.empty()) {
      emit message(tr("Select the runs to plot (e.g. a Pre-LN / LNS pair)"));
      return;
    }
    emit figuresRequested(ids);
  });
  add(tr("Rename…"), [this] { renameSelected(); });
  add(tr("Tag…"), [this] { tagSelected(); });
  add(tr("Notes…"), [this] { editNotesOfSelected(); });
  add(tr("Checkpoints"), [this] { revealCheckpointsOfSelected(); });
  add(tr("Delete…"), [this] { confirmDeleteOfSelected(); });
  buttons->addStretch(1);
  return row;
}

QWidget* RunsBrowser::makeFilterRow() {
  auto* row = new QWidget;
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  m_filter = new QLineEdit;
  m_filter->setPlaceholderText(tr("filter runs…"));
  m_filter->setClearButtonEnabled(true);
  m_filterColumn = new QComboBox;
  m_filterColumn->addItem(tr("all columns"), -1);
  for (int c = 0; c < RunsTableModel::ColumnCount; ++c) {
    m_filterColumn->addItem(RunsTableModel::columnName(c), c);
  }
  layout->addWidget(m_filter, 1);
  layout->addWidget(m_filterColumn);
  auto apply = [this] { setFilter(m_filter->text(), m_filterColumn->currentData().toInt()); };
  connect(m_filter, &QLineEdit::textChanged, this, apply);
  connect(m_filterColumn, &QComboBox::currentIndexChanged, this, apply);
  return row;
}

void RunsBrowser::setRuns(std::vector<store::RunInfo> runs,
                          std::map<int64_t, store::RunSummary> summaries) {
  const auto keep = selectedRunIds();
  m_model->resetRuns(std::move(runs), std::move(summaries));
  selectRuns(keep);
}

std::vector<int64_t> RunsBrowser::selectedRunIds() const {
  std::vector<int64_t> ids;
  for (const auto& idx : m_view->selectionModel()->selectedRows()) {
    if (const auto* r = m_model->runAt(m_proxy->mapToSource(idx).row())) ids.push_back(r->id);
  }
  return ids;
}

void RunsBrowser::selectRuns(const std::vector<int64_t>& runIds) {
  m_view->selectionModel()->clearSelection();
  for (int64_t id : runIds) {
    const int row = m_model->rowOfRun(id);
    if (row < 0) continue;
    auto idx = m_proxy->mapFromSource(m_model->index(row, 0));
    if (idx.isValid()) {
      m_view->selectionModel()->select(idx, QItemSelectionModel::Select | QItemSelectionModel::Rows);
    }
  }
}

void RunsBrowser::setFilter(const QString& text, int column) {
  m_proxy->setFilterKeyColumn(column);
  m_proxy->setFilterFixedString(text);
}

int RunsBrowser::visibleRunCount() const { return m_proxy->rowCount(); }

void RunsBrowser::withOneRun(const std::function<void(int64_t)>& action) {
  auto ids = selectedRunIds();
  if (ids.size() != 1) {
    emit message(tr("Select one run"));
    return;
  }
  action(ids.front());
}

void RunsBrowser::renameSelected() {
  withOneRun([this](int64_t id) {
    bool ok = false;
    auto r = m_poller->store().run(id);
    const QString name =
        QInputDialog::getText(this, tr("Rename run"), tr("Name"), QLineEdit::Normal,
                              QString::fromStdString(r ? r->name : std::string()), &ok);
    if (ok && !name.trimmed().isEmpty()) {
      m_poller->store().renameRun(id, name.trimmed().toStdString());
    }
    m_poller->poll();
  });
}

void RunsBrowser::tagSelected() {
  bool ok = false;
  const QString t = QInputDialog::getText(this, tr("Tag runs"), tr("Tag (prefix with - to remove)"),
                                          QLineEdit::Normal, QString(), &ok);
  if (!ok || t.trimmed().isEmpty()) return;
  for (int64_t id : selectedRunIds()) {
    if (t.startsWith(QLatin1Char('-'))) {
      m_poller->store().removeTag(id, t.mid(1).trimmed().toStdString());
    } else {
      m_poller->store().addTag(id, t.trimmed().toStdString());
    }
  }
  m_poller->poll();
}

void RunsBrowser::editNotesOfSelected() {
  withOneRun([this](int64_t id) {
    bool ok = false;
    auto r = m_poller->store().run(id);
    const QString text = QInputDialog::getMultiLineText(
        this, tr("Notes"), tr("Notes for run %1").arg(id),
        QString::fromStdString(r ? r->notes : std::string()), &ok);
    if (ok) m_poller->store().setNotes(id, text.toStdString());
    m_poller->poll();
  });
}

void RunsBrowser::revealCheckpointsOfSelected() {
  withOneRun([this](int64_t id) {
    auto ck = m_poller->store().checkpoints(id);
    if (ck.empty()) {
      emit message(tr("Run %1 has no checkpoint").arg(id));
      return;
    }
    const QString dir = QFileInfo(QString::fromStdString(ck.back().path)).absolutePath();
    emit message(dir);
    QDesktopServices::openUrl(QUrl::fromLocalFile(dir));
  });
}

void RunsBrowser::confirmDeleteOfSelected() {
  auto ids = selectedRunIds();
  if (ids.empty()) return;
  QMessageBox box(QMessageBox::Warning, tr("Delete runs"),
                  tr("Delete %n run(s) and all their metrics? This cannot be undone.", nullptr,
                     static_cast<int>(ids.size())),
                  QMessageBox::Yes | QMessageBox::Cancel, this);
  auto* keep = new QCheckBox(tr("keep the checkpoint files"));
  keep->setChecked(true);
  box.setCheckBox(keep);
  if (box.exec() == QMessageBox::Yes) emit deleteRequested(ids, keep->isChecked());
}

}  // namespace depthlab::ui
