// The runs browser (columns, filter, sort, delete with or without checkpoint files) and the
// comparison view (different depths, missing metrics, seed statistics, results table).
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QDir>
#include <QFile>
#include <QFontMetrics>
#include <QHeaderView>
#include <QTableWidget>
#include <QTest>

#include <cmath>

#include <nlohmann/json.hpp>

#include "compare/compare_view.h"
#include "dashboard/panel_specs.h"
#include "experiment/presets.h"
#include "main_window.h"
#include "plot/colormaps.h"
#include "runs/checkpoints_dialog.h"
#include "runs/runs_table_model.h"
#include "store/metric_catalogue.h"
#include "store_poller.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

int64_t addRun(store::RunStore& s, const std::string& scheme, int depth, int64_t seed, double valLoss,
               bool probes) {
  auto c = *experiment::presetConfig("cpu-demo");
  c.model.nLayers = depth;
  c.run.seed = seed;
  c.schemes = {scheme};
  store::NewRun nr;
  nr.name = scheme + " L" + std::to_string(depth) + " s" + std::to_string(seed);
  nr.groupName = "g" + std::to_string(depth) + "s" + std::to_string(seed);
  nr.scheme = scheme;
  nr.configJson = experiment::toJson(c).dump();
  int64_t id = s.createRun(nr);
  store::WriteBatch b;
  for (int step = 0; step < 200; ++step) b.scalar(step, "loss_train", 4 - step * 0.01);
  b.scalar(200, "loss_val", valLoss);
  if (probes) {
    for (int step = 0; step <= 200; step += 50) {
      std::vector<float> v(static_cast<size_t>(depth));
      for (int l = 0; l < depth; ++l) v[static_cast<size_t>(l)] = static_cast<float>((l + 1) * (scheme == "lns" ? 0.2 : 1.0) * step / 50.0);
      b.layer(step, "variance", v);
      b.layer(step, "angular_adjacent", std::vector<float>(static_cast<size_t>(depth), 0.1f));
    }
  }
  s.write(id, b);
  s.finishRun(id, store::RunStatus::Finished);
  return id;
}

std::unique_ptr<ui::MainWindow> openWindow(const std::string& db) {
  auto w = std::make_unique<ui::MainWindow>(
      store::RunStore::open(db), ui::MainWindowOptions{{}, {}, {}, QString::fromStdString(db + ".window.ini")});
  w->setClosePolicy(ui::MainWindow::ClosePolicy::KeepRunning);
  w->show();
  return w;
}

}  // namespace

TEST(RunsBrowser, ColumnsFilterAndSort) {
  test::TempDir dir;
  {
    auto s = store::RunStore::open(dir.file("lab.db"));
    addRun(s, "pre_ln", 24, 1, 2.0, true);
    addRun(s, "lns", 24, 1, 1.9, true);
    addRun(s, "lns", 12, 1, 1.95, false);
  }
  auto w = openWindow(dir.file("lab.db"));
  auto* m = w->runsModel();
  ASSERT_EQ(m->rowCount(), 3);
  const int row = m->rowOfRun(2);
  auto cell = [&](int c) { return m->data(m->index(row, c), Qt::DisplayRole).toString(); };
  EXPECT_EQ(cell(ui::RunsTableModel::Depth), QStringLiteral("24"));
  EXPECT_EQ(cell(ui::RunsTableModel::Width), QStringLiteral("64"));
  EXPECT_EQ(cell(ui::RunsTableModel::Steps), QStringLiteral("200"));
  EXPECT_EQ(cell(ui::RunsTableModel::LossVal), QStringLiteral("1.9000"));
  EXPECT_EQ(cell(ui::RunsTableModel::PplVal), QString::number(std::exp(1.9), 'f', 2));
  EXPECT_EQ(cell(ui::RunsTableModel::Params), QStringLiteral("1.22M"));
  EXPECT_EQ(cell(ui::RunsTableModel::Corpus), QStringLiteral("default (KJV)"));
  EXPECT_EQ(cell(ui::RunsTableModel::Tokens), QStringLiteral("0.20M"));  // 200 steps x 1024
  w->setRunFilter(QStringLiteral("lns"));
  EXPECT_EQ(w->visibleRunCount(), 2);
  w->setRunFilter(QStringLiteral("12"), ui::RunsTableModel::Depth);
  EXPECT_EQ(w->visibleRunCount(), 1);
  w->setRunFilter(QString());
  EXPECT_EQ(w->visibleRunCount(), 3);
}

TEST(RunsBrowser, DeleteRemovesTheRunAndOptionallyItsCheckpoints) {
  test::TempDir dir;
  int64_t a, b;
  {
    auto s = store::RunStore::open(dir.file("lab.db"));
    a = addRun(s, "pre_ln", 4, 1, 2.0, true);
    b = addRun(s, "lns", 4, 1, 1.9, true);
    test::writeFile(dir.file("a.ckpt"), "x");
    test::writeFile(dir.file("b.ckpt"), "y");
    s.addCheckpoint(a, {200, dir.file("a.ckpt"), "", 0});
    s.addCheckpoint(b, {200, dir.file("b.ckpt"), "", 0});
  }
  auto w = openWindow(dir.file("lab.db"));
  w->deleteRuns({a}, /*keepCheckpoints=*/true);
  EXPECT_TRUE(QFile::exists(QString::fromStdString(dir.file("a.ckpt"))));
  auto& s = w->poller()->store();
  EXPECT_FALSE(s.run(a));
  EXPECT_TRUE(s.layerSeries(a, "variance").steps.empty());
  EXPECT_EQ(s.layerSeries(b, "variance").steps.size(), 5u);  // nothing else removed
  w->deleteRuns({b}, /*keepCheckpoints=*/false);
  EXPECT_FALSE(QFile::exists(QString::fromStdString(dir.file("b.ckpt"))));
  EXPECT_TRUE(QFile::exists(QString::fromStdString(dir.file("a.ckpt"))));
  QTRY_COMPARE_WITH_TIMEOUT(w->runsModel()->rowCount(), 0, 2000);
}

TEST(RunsBrowser, CheckpointsListsStepsLossesFilesAndSaysWhenNoFileManagerOpensTheFolder) {
  // "Checkpoints" had opened the folder with the desktop's file manager and, without one, only
  // named the folder in the status bar. It now lists them, with the folder to copy.
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("lab.db"));
  const int64_t id = addRun(s, "lns", 4, 1, 1.9, true);
  store::WriteBatch val;
  val.scalar(100, metrics::kLossVal, 2.25);
  s.write(id, val);
  QDir().mkpath(QString::fromStdString(dir.file("run")));
  test::writeFile(dir.file("run/step-100.ckpt"), std::string(3000, 'x'));
  s.addCheckpoint(id, {150, dir.file("run/step-150.ckpt"), "", 1796517417.0});  // file gone
  s.addCheckpoint(id, {100, dir.file("run/step-100.ckpt"), "", 1796517400.0});
  ui::CheckpointsDialog dialog(s, id);
  auto* t = dialog.table();
  ASSERT_EQ(t->rowCount(), 2);
  EXPECT_EQ(t->item(0, 0)->text(), QStringLiteral("100"));  // by step
  EXPECT_EQ(t->item(0, 1)->text(), QStringLiteral("2.2500"));
  EXPECT_EQ(t->item(0, 2)->text(), QStringLiteral("step-100.ckpt"));
  EXPECT_EQ(t->item(0, 3)->text(), QStringLiteral("3 kB"));
  EXPECT_EQ(t->item(1, 1)->text(), QStringLiteral("–"));  // no validation at step 150
  EXPECT_EQ(t->item(1, 3)->text(), QStringLiteral("missing"));
  EXPECT_EQ(dialog.folder(), QString::fromStdString(dir.file("run")));
  EXPECT_EQ(dialog.pathToCopy(), dialog.folder());
  t->selectRow(0);
  EXPECT_EQ(dialog.pathToCopy(), QString::fromStdString(dir.file("run/step-100.ckpt")));
  // Offscreen no file manager opens anything: the dialog says so (it had failed silently).
  if (!dialog.openFolder()) {
    EXPECT_TRUE(dialog.openNote().contains(QStringLiteral("No file manager"))) << dialog.openNote().toStdString();
  }
}

TEST(CompareView, DifferentDepthsAndMissingMetricsSayWhatIsMissing) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("lab.db"));
  int64_t deep = addRun(s, "pre_ln", 24, 1, 2.0, true);
  int64_t shallow = addRun(s, "lns", 12, 1, 1.9, true);
  int64_t bare = addRun(s, "post_ln", 8, 1, 2.5, false);
  ui::CompareView v(s, {deep, shallow, bare});
  v.show();
  EXPECT_TRUE(v.missingText().contains(QStringLiteral("run %1 has no").arg(bare)));
  EXPECT_TRUE(v.missingText().contains(QStringLiteral("variance")));
  // The deep run lacks the pruning probe (this store never wrote it; nor the probes the
  // catalogue added since), not its variance.
  EXPECT_TRUE(v.missingText().contains(QStringLiteral("run %1 has no prune_delta").arg(deep)))
      << v.missingText().toStdString();
  EXPECT_FALSE(v.missingText().contains(QStringLiteral("run %1 has no variance").arg(deep)))
      << v.missingText().toStdString();
  EXPECT_EQ(v.plots().at(QStringLiteral("variance"))->graphCount(), 2);
  // Side-by-side heatmaps share one colour scale; a run without the metric gets an empty panel.
  auto mapRange = [&](int64_t id) {
    auto* p = v.plots().at(QStringLiteral("variance_map:%1").arg(id));
    for (int i = 0; i < p->plottableCount(); ++i) {
      if (auto* m = qobject_cast<QCPColorMap*>(p->plottable(i))) return m->dataRange();
    }
    return QCPRange(-1, -1);
  };
  EXPECT_EQ(mapRange(deep), mapRange(shallow));
  EXPECT_EQ(mapRange(bare), QCPRange(-1, -1));
  // Different depths: the difference heatmap aligns them by relative depth.
  EXPECT_TRUE(v.differenceTitle().contains(QStringLiteral("relative depth"))) << v.differenceTitle().toStdString();
  EXPECT_GT(v.configDiffTable()->rowCount(), 0);
  bool depthKey = false;
  for (int r = 0; r < v.configDiffTable()->rowCount(); ++r) {
    depthKey = depthKey || v.configDiffTable()->item(r, 0)->text() == QStringLiteral("model.nLayers");
  }
  EXPECT_TRUE(depthKey);
  EXPECT_TRUE(v.statsText().contains(QStringLiteral("needs two seed groups")));
  // One seed a group: its loss, and no band of zero width passed off as a spread.
  EXPECT_TRUE(v.statsText().contains(QStringLiteral("2.0000, one seed (no std)")))
      << v.statsText().toStdString();
  EXPECT_FALSE(v.statsText().contains(QStringLiteral("std ["))) << v.statsText().toStdString();
}

TEST(CompareView, SeedGroupsGetAWelchTestAndTheTableMarksTheBest) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("lab.db"));
  std::vector<int64_t> ids;
  for (int64_t seed : {1, 2, 3}) {
    ids.push_back(addRun(s, "pre_ln", 24, seed, 2.00 + 0.01 * seed, true));
    ids.push_back(addRun(s, "lns", 24, seed, 1.90 + 0.01 * seed, true));
  }
  ui::CompareView v(s, ids);
  EXPECT_TRUE(v.statsText().contains(QStringLiteral("Welch t-test"))) << v.statsText().toStdString();
  EXPECT_TRUE(v.statsText().contains(QStringLiteral("n=3")));
  // The schemes by the names the rest of the view uses, not their ids.
  EXPECT_TRUE(v.statsText().contains(QStringLiteral("Pre-LN vs LNS")) ||
              v.statsText().contains(QStringLiteral("LNS vs Pre-LN")))
      << v.statsText().toStdString();
  EXPECT_FALSE(v.statsText().contains(QStringLiteral("pre_ln"))) << v.statsText().toStdString();
  const auto& t = v.resultsTable();
  ASSERT_EQ(t.rows.size(), 2u);
  auto* view = v.resultsView();  // every column header readable whole
  const QFontMetrics header(view->horizontalHeader()->font());
  for (int c = 0; c < view->columnCount(); ++c) {
    const QString text = view->horizontalHeaderItem(c)->text();
    EXPECT_GE(view->horizontalHeader()->sectionSize(c), header.horizontalAdvance(text))
        << text.toStdString();
  }
  EXPECT_NE(t.toLatex().find("\\textbf"), std::string::npos);
  EXPECT_EQ(t.n[0][0], 3);
  EXPECT_EQ(v.plots().at(QStringLiteral("seed_groups"))->graphCount(), 2);
  // Mean validation curves with a band for each seed group of 2+ runs, n in the legend.
  auto* loss = v.plots().at(QStringLiteral("loss"));
  int bands = 0;
  for (int i = 0; i < loss->graphCount(); ++i) {
    if (loss->graph(i)->name().contains(QStringLiteral("(n=3)"))) ++bands;
  }
  EXPECT_EQ(bands, 2);
}

TEST(CompareView, CurvesCanBeColouredByADifferingConfigKey) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("lab.db"));
  int64_t a = addRun(s, "lns", 12, 1, 2.0, true);
  int64_t b = addRun(s, "lns", 24, 1, 1.9, true);
  ui::CompareView v(s, {a, b});
  auto* profile = v.plots().at(QStringLiteral("variance"));
  ASSERT_EQ(profile->graphCount(), 2);
  // By scheme: the scheme's colour, and for its second run a shade of it (the paper's rule).
  EXPECT_EQ(profile->graph(0)->pen().color(), ui::schemeColor(QStringLiteral("lns")));
  EXPECT_EQ(profile->graph(1)->pen().color(), ui::dashboard::runShade(ui::schemeColor(QStringLiteral("lns")), 1));
  v.setColorBy(QStringLiteral("model.nLayers"));
  EXPECT_NE(profile->graph(0)->pen().color(), profile->graph(1)->pen().color());
}
