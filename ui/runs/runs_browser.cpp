// RunsBrowser; see runs_browser.h.
#include "runs/runs_browser.h"

#include <algorithm>

#include <QCheckBox>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>

#include <QLabel>

#include "flow_layout.h"
#include "plot/plot_theme.h"
#include "runs/checkpoints_dialog.h"
#include "runs/runs_filter_model.h"
#include "runs/runs_table_model.h"
#include "store_poller.h"

namespace depthlab::ui {

RunsBrowser::RunsBrowser(StorePoller* poller, QWidget* parent) : QWidget(parent), m_poller(poller) {
  m_model = new RunsTableModel(this);
  m_proxy = new RunsFilterModel(this);
  m_proxy->setSourceModel(m_model);
  m_view = new QTableView;
  m_view->setObjectName(QStringLiteral("runsView"));
  m_view->setModel(m_proxy);
  m_view->setSortingEnabled(true);
  m_view->sortByColumn(RunsTableModel::Id, Qt::DescendingOrder);
  m_view->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_view->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_view->horizontalHeader()->setStretchLastSection(true);
  m_view->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  m_view->verticalHeader()->hide();
  // Columns take their contents' width as rows arrive (setRuns).
  connect(m_view, &QTableView::doubleClicked, this,
          [this] { emit openRequested(selectedRunIds()); });

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(makeButtons());
  layout->addWidget(makeFilterRow());
  layout->addWidget(m_view, 1);
}

QWidget* RunsBrowser::makeButtons() {
  auto* row = new QWidget;
  auto* buttons = new FlowLayout(row);  // wraps on narrow windows instead of widening them
  buttons->setContentsMargins(0, 0, 0, 0);
  auto add = [&](const QString& text, const QString& tip, auto&& onClick) {
    auto* b = new QPushButton(text);
    b->setToolTip(tip);
    b->setObjectName(text.section(QLatin1Char(' '), 0, 0).remove(QStringLiteral("…")).toLower());
    buttons->addWidget(b);
    connect(b, &QPushButton::clicked, this, onClick);
  };
  add(tr("Stop"), tr("Checkpoint the selected running runs and stop them"),
      [this] { emit stopRequested(selectedRunIds()); });
  add(tr("Resume"),
      tr("Continue the selected stopped or crashed runs from their newest checkpoint"), [this] {
        withRuns(1, tr("Select the stopped or crashed runs to resume"),
                 [this](const auto& ids) { emit resumeRequested(ids); });
      });
  add(tr("Train further…"),
      tr("Continue the selected finished (or stopped) runs past their planned steps; the "
         "learning-rate schedule keeps its length, past it the rate stays at its floor"),
      [this] {
        withRuns(1, tr("Select the runs to train further"),
                 [this](const auto& ids) { emit trainFurtherRequested(ids); });
      });
  add(tr("Clone into set-up"), tr("Load the selected run's config into the set-up panel: change it, launch"), [this] {
    auto ids = selectedRunIds();
    if (!ids.empty()) emit cloneRequested(ids.front());
  });
  add(tr("Open dashboard"), tr("Open the live dashboard of the selected runs' groups (or double-click a row)"),
      [this] { emit openRequested(selectedRunIds()); });
  add(tr("Compare"), tr("Compare the selected runs side by side (two or more)"), [this] {
    withRuns(2, tr("Select two or more runs to compare"),
             [this](const auto& ids) { emit compareRequested(ids); });
  });
  add(tr("Paper figures…"), tr("Choose a figure, runs, format and size, with a live preview"),
      [this] {
        withRuns(1, tr("Select the runs to plot (e.g. a Pre-LN / LNS pair)"),
                 [this](const auto& ids) { emit figuresRequested(ids); });
      });
  add(tr("Export HF…"), tr("Write the selected trained run as a Hugging Face LlamaForCausalLM folder "
                           "(Pre-LN as is, LNS with 1/sqrt(l) folded into its norms)"),
      [this] { withOneRun([this](int64_t id) { emit exportHfRequested(id); }); });
  add(tr("Rename…"), tr("Rename the selected run (legends and figures use the new name)"),
      [this] { renameSelected(); });
  add(tr("Tag…"), tr("Add a tag to the selected runs (prefix with - to remove it)"), [this] { tagSelected(); });
  add(tr("Notes…"), tr("Edit the notes of the selected run (shown as the row's tooltip)"),
      [this] { editNotesOfSelected(); });
  add(tr("Checkpoints…"), tr("The selected run's checkpoints: steps, validation loss, files, folder"),
      [this] { revealCheckpointsOfSelected(); });
  add(tr("Delete…"), tr("Delete the selected runs and their metrics (asks first, lists them)"),
      [this] { confirmDeleteOfSelected(); });
  return row;
}

QWidget* RunsBrowser::makeFilterRow() {
  auto* row = new QWidget;
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  m_filter = new QLineEdit;
  m_filter->setObjectName(QStringLiteral("runFilter"));
  m_filter->setPlaceholderText(tr("filter runs… (text, or conditions: val loss < 1.5, depth >= 24)"));
  m_filter->setToolTip(tr("Free text matches any column (or the chosen one). Conditions compare a "
                          "column's number: \"val loss < 1.5\", \"lr = 0.006, depth >= 24\", "
                          "\"steps > 100 and scheme lns\"."));
  m_filter->setClearButtonEnabled(true);
  m_filterNote = new QLabel;
  m_filterNote->setStyleSheet(mutedTextStyle(palette()));
  m_filterColumn = new QComboBox;
  m_filterColumn->setToolTip(tr("The column free text is matched in"));
  m_filterColumn->addItem(tr("all columns"), -1);
  for (int c = 0; c < RunsTableModel::ColumnCount; ++c) {
    m_filterColumn->addItem(RunsTableModel::columnName(c), c);
  }
  layout->addWidget(m_filter, 1);
  layout->addWidget(m_filterColumn);
  layout->addWidget(m_filterNote);
  auto apply = [this] { setFilter(m_filter->text(), m_filterColumn->currentData().toInt()); };
  connect(m_filter, &QLineEdit::textChanged, this, apply);
  connect(m_filterColumn, &QComboBox::currentIndexChanged, this, apply);
  return row;
}

void RunsBrowser::setRuns(std::vector<store::RunInfo> runs,
                          std::map<int64_t, store::RunSummary> summaries,
                          const std::vector<std::tuple<QString, QString, QString>>& pending) {
  const auto keep = selectedRunIds();
  if (m_model->resetRuns(std::move(runs), std::move(summaries), pending)) {
    m_proxy->invalidate();  // rows came or went: sort them in; value updates keep the order
    m_view->sortByColumn(m_proxy->sortColumn(), m_proxy->sortOrder());
    selectRuns(keep);
    // Every column as wide as its contents (names and groups in full, up to a limit).
    m_view->resizeColumnsToContents();
    for (int c : {RunsTableModel::Name, RunsTableModel::Group, RunsTableModel::Status}) {
      m_view->setColumnWidth(c, std::clamp(m_view->columnWidth(c) + 12, 90, 360));
    }
  }
}

std::vector<int64_t> RunsBrowser::selectedRunIds() const {
  std::vector<int64_t> ids;
  for (const auto& idx : m_view->selectionModel()->selectedRows()) {
    const auto* r = m_model->runAt(m_proxy->mapToSource(idx).row());
    if (r && r->id > 0) ids.push_back(r->id);  // pending launches (ids <= 0) take no actions
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
  m_proxy->setRunFilter(text, column);
  m_filterNote->setText(m_proxy->filterDescription());
  m_filterNote->setStyleSheet(m_proxy->filterInvalid() ? QStringLiteral("color: #b03a2e;") : mutedTextStyle(palette()));
}

int RunsBrowser::visibleRunCount() const { return m_proxy->rowCount(); }

void RunsBrowser::withRuns(size_t atLeast, const QString& otherwise,
                           const std::function<void(const std::vector<int64_t>&)>& action) {
  const auto ids = selectedRunIds();
  if (ids.size() < atLeast) {
    emit message(otherwise);
    return;
  }
  action(ids);
}

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
    auto* dialog = new CheckpointsDialog(m_poller->store(), id, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->open();
  });
}

QString RunsBrowser::deleteQuestion(const std::vector<int64_t>& ids) const {
  QStringList lines;
  int running = 0;
  for (int64_t id : ids) {
    const auto* r = m_model->runAt(m_model->rowOfRun(id));
    if (!r) continue;
    const bool active = r->status == store::RunStatus::Running;
    running += active;
    if (lines.size() < 12) {
      lines << QStringLiteral("  #%1  %2  (%3)%4")
                   .arg(id)
                   .arg(QString::fromStdString(r->name), QString::fromLatin1(store::toString(r->status)),
                        active ? tr("  <- still training: it will not be deleted") : QString());
    }
  }
  if (static_cast<int>(ids.size()) > lines.size()) lines << tr("  … and %n more", nullptr, static_cast<int>(ids.size()) - lines.size());
  QString text = tr("Delete %n run(s) and all their metrics? This cannot be undone.", nullptr,
                    static_cast<int>(ids.size())) +
                 QStringLiteral("\n\n") + lines.join(QLatin1Char('\n'));
  if (running > 0) {
    text += QStringLiteral("\n\n") + tr("%n of them is still training: stop it first (the store refuses to delete a "
                                          "running run).", nullptr, running);
  }
  return text;
}

void RunsBrowser::confirmDeleteOfSelected() {
  auto ids = selectedRunIds();
  if (ids.empty()) return;
  QMessageBox box(QMessageBox::Warning, tr("Delete runs"), deleteQuestion(ids),
                  QMessageBox::Yes | QMessageBox::Cancel, this);
  auto* keep = new QCheckBox(tr("keep the checkpoint files"));
  keep->setChecked(true);
  box.setCheckBox(keep);
  if (box.exec() == QMessageBox::Yes) emit deleteRequested(ids, keep->isChecked());
}

}  // namespace depthlab::ui
