// MainWindow; see main_window.h.
#include "main_window.h"

#include <qcustomplot.h>

#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QStatusBar>
#include <QTableView>
#include <QVBoxLayout>

#include "plot/series_adapter.h"
#include "runs_table_model.h"
#include "store_poller.h"

namespace depthlab::ui {

MainWindow::MainWindow(store::RunStore store, MainWindowOptions options, QWidget* parent)
    : QMainWindow(parent), m_options(std::move(options)) {
  setWindowTitle(QStringLiteral("DepthLab — %1").arg(QString::fromStdString(store.path())));
  resize(1280, 800);

  m_runsModel = new RunsTableModel(this);
  m_runsView = new QTableView;
  m_runsView->setModel(m_runsModel);
  m_runsView->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_runsView->setSelectionMode(QAbstractItemView::SingleSelection);
  m_runsView->horizontalHeader()->setStretchLastSection(true);
  m_runsView->verticalHeader()->hide();

  m_lossPlot = new QCustomPlot;
  m_lossPlot->setObjectName(QStringLiteral("lossPlot"));
  m_lossPlot->xAxis->setLabel(QStringLiteral("step"));
  m_lossPlot->yAxis->setLabel(QStringLiteral("loss"));
  m_lossPlot->legend->setVisible(true);
  m_lossPlot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_plotInfo = new QLabel(tr("Select a run to see its loss curves."));

  auto* right = new QWidget;
  auto* rightLayout = new QVBoxLayout(right);
  rightLayout->addWidget(m_plotInfo);
  rightLayout->addWidget(m_lossPlot, 1);

  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(m_runsView);
  split->addWidget(right);
  split->setStretchFactor(1, 2);
  setCentralWidget(split);

  statusBar()->showMessage(m_options.corpusMessage);

  m_poller = new StorePoller(std::move(store), 200, this);
  connect(m_poller, &StorePoller::runsChanged, this, &MainWindow::onRunsChanged);
  connect(m_poller, &StorePoller::storeError, this,
          [this](const QString& msg) { statusBar()->showMessage(tr("Run store: %1").arg(msg)); });
  connect(m_runsView->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
    auto rows = m_runsView->selectionModel()->selectedRows();
    const auto* r = rows.isEmpty() ? nullptr : m_runsModel->runAt(rows.first().row());
    m_selectedRun = r ? r->id : 0;
    showSelectedRun();
  });
  m_poller->poll();
}

MainWindow::~MainWindow() = default;

void MainWindow::selectRun(int64_t runId) {
  int row = m_runsModel->rowOfRun(runId);
  if (row >= 0) m_runsView->selectRow(row);
}

void MainWindow::onRunsChanged(const std::vector<int64_t>& changed) {
  const int64_t keep = m_selectedRun;
  m_runsModel->resetRuns(m_poller->store().listRuns());
  if (keep) selectRun(keep);
  if (keep && std::find(changed.begin(), changed.end(), keep) != changed.end()) {
    showSelectedRun();
  }
}

void MainWindow::showSelectedRun() {
  m_lossPlot->clearGraphs();
  if (!m_selectedRun) {
    m_lossPlot->replot(QCustomPlot::rpQueuedReplot);
    return;
  }
  auto& store = m_poller->store();
  const int columns = std::max(100, m_lossPlot->axisRect()->width());
  const struct { const char* key; QColor color; } curves[] = {
      {"loss_train", QColor(0, 114, 178)}, {"loss_val", QColor(213, 94, 0)}};
  QStringList info;
  for (const auto& c : curves) {
    auto points = store.scalarSeries(m_selectedRun, c.key);
    if (points.empty()) continue;
    auto series = decimateMinMax(points, static_cast<double>(points.front().step),
                                 static_cast<double>(points.back().step), columns);
    auto* g = m_lossPlot->addGraph();
    g->setName(QString::fromLatin1(c.key));
    g->setPen(QPen(c.color, 1.5));
    setGraphData(g, series);
    if (series.decimated()) {
      info << tr("%1: %2 of %3 points").arg(QString::fromLatin1(c.key)).arg(series.keys.size())
                  .arg(series.sourcePoints);
    }
  }
  m_plotInfo->setText(info.isEmpty() ? tr("Run %1").arg(m_selectedRun) : info.join(QStringLiteral("; ")));
  m_lossPlot->rescaleAxes();
  m_lossPlot->replot(QCustomPlot::rpQueuedReplot);
}

}  // namespace depthlab::ui
