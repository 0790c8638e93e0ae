// See checkpoints_dialog.h.
#include "runs/checkpoints_dialog.h"

#include <QApplication>
#include <QClipboard>
#include <QDateTime>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableWidget>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>

#include "store/metric_catalogue.h"

namespace depthlab::ui {

namespace {

enum Column { kStep, kValLoss, kFile, kSize, kWritten, kColumns };

QString sizeText(qint64 bytes) {
  if (bytes >= 1 << 30)
    return QStringLiteral("%1 GB").arg(static_cast<double>(bytes) / (1 << 30), 0, 'f', 2);
  if (bytes >= 1 << 20)
    return QStringLiteral("%1 MB").arg(static_cast<double>(bytes) / (1 << 20), 0, 'f', 1);
  return QStringLiteral("%1 kB").arg(static_cast<double>(bytes) / 1024, 0, 'f', 0);
}

}  // namespace

CheckpointsDialog::CheckpointsDialog(store::RunStore& store, int64_t runId, QWidget* parent)
    : QDialog(parent) {
  const auto info = store.run(runId);
  setWindowTitle(
      tr("Checkpoints of run %1%2")
          .arg(runId)
          .arg(info ? QStringLiteral(" (%1)").arg(QString::fromStdString(info->name)) : QString()));
  auto checkpoints = store.checkpoints(runId);
  std::sort(checkpoints.begin(), checkpoints.end(),
            [](const auto& a, const auto& b) { return a.step < b.step; });
  const auto val = store.scalarSeries(runId, metrics::kLossVal);

  auto* layout = new QVBoxLayout(this);
  layout->addWidget(new QLabel(tr("Folder:")));
  m_folder = new QLineEdit;
  m_folder->setReadOnly(true);
  if (!checkpoints.empty()) {
    m_folder->setText(QFileInfo(QString::fromStdString(checkpoints.back().path)).absolutePath());
  }
  layout->addWidget(m_folder);

  m_table = new QTableWidget(static_cast<int>(checkpoints.size()), kColumns);
  m_table->setHorizontalHeaderLabels(
      {tr("step"), tr("validation loss"), tr("file"), tr("size"), tr("written")});
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->verticalHeader()->hide();
  for (int row = 0; row < static_cast<int>(checkpoints.size()); ++row) {
    const auto& c = checkpoints[static_cast<size_t>(row)];
    const QString path = QString::fromStdString(c.path);
    const QFileInfo file(path);
    auto* step = new QTableWidgetItem(QString::number(c.step));
    step->setData(Qt::UserRole, path);
    m_table->setItem(row, kStep, step);
    const auto at =
        std::find_if(val.begin(), val.end(), [&](const auto& p) { return p.step == c.step; });
    m_table->setItem(row, kValLoss,
                     new QTableWidgetItem(at == val.end() ? QStringLiteral("–")
                                                          : QString::number(at->value, 'f', 4)));
    auto* name = new QTableWidgetItem(file.fileName());
    name->setToolTip(path);
    m_table->setItem(row, kFile, name);
    auto* size = new QTableWidgetItem(file.exists() ? sizeText(file.size()) : tr("missing"));
    if (!file.exists()) {
      size->setForeground(QColor(180, 40, 40));
      size->setToolTip(tr("The store lists this checkpoint, but the file is gone"));
    }
    m_table->setItem(row, kSize, size);
    m_table->setItem(
        row, kWritten,
        new QTableWidgetItem(QDateTime::fromMSecsSinceEpoch(static_cast<qint64>(c.createdAt * 1000))
                                 .toString(QStringLiteral("yyyy-MM-dd hh:mm:ss"))));
  }
  m_table->resizeColumnsToContents();
  m_table->horizontalHeader()->setStretchLastSection(true);
  layout->addWidget(m_table, 1);
  layout->addWidget(new QLabel(tr("Resume or train further from the Runs tab, or on the command "
                                  "line: depthlab-cli resume %1 (a finished run: --steps N trains "
                                  "it further)")
                                   .arg(runId)));
  m_note = new QLabel;
  m_note->setWordWrap(true);
  layout->addWidget(m_note);

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
  auto* copy = buttons->addButton(tr("Copy path"), QDialogButtonBox::ActionRole);
  auto* open = buttons->addButton(tr("Open folder"), QDialogButtonBox::ActionRole);
  connect(copy, &QPushButton::clicked, this, [this] {
    QApplication::clipboard()->setText(pathToCopy());
    m_note->setText(tr("Copied %1").arg(pathToCopy()));
  });
  connect(open, &QPushButton::clicked, this, [this] { openFolder(); });
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
  resize(760, 360);
}

QString CheckpointsDialog::folder() const { return m_folder->text(); }

QString CheckpointsDialog::pathToCopy() const {
  const auto rows = m_table->selectionModel()->selectedRows();
  if (rows.isEmpty()) return folder();
  return m_table->item(rows.front().row(), kStep)->data(Qt::UserRole).toString();
}

QString CheckpointsDialog::openNote() const { return m_note->text(); }

bool CheckpointsDialog::openFolder() {
  const bool opened =
      !folder().isEmpty() && QDesktopServices::openUrl(QUrl::fromLocalFile(folder()));
  m_note->setText(opened ? tr("Opened %1").arg(folder())
                         : tr("No file manager opened the folder; its path is above, to copy."));
  return opened;
}

}  // namespace depthlab::ui
