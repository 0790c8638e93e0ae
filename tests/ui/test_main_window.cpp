// The lab window opens offscreen against a temporary database and follows runs written by
// another connection (as a training process would) within the poll interval.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QApplication>
#include <QTest>

#include "main_window.h"
#include "plot/series_adapter.h"
#include "runs_table_model.h"
#include "store_poller.h"
#include "support/temp_dir.h"

using namespace depthlab;

TEST(MainWindow, FollowsRunsWrittenByAnotherConnection) {
  test::TempDir dir;
  auto path = dir.file("lab.db");
  ui::MainWindow w(store::RunStore::open(path), {});
  w.show();
  EXPECT_EQ(w.runsModel()->rowCount(), 0);

  auto writer = store::RunStore::open(path);
  store::NewRun nr;
  nr.name = "pre_ln seed 1";
  nr.scheme = "pre_ln";
  int64_t id = writer.createRun(nr);
  writer.markRunning(id);
  store::WriteBatch b;
  for (int s = 0; s < 50; ++s) b.scalar(s, "loss_train", 5.0 - 0.01 * s);
  writer.write(id, b);

  QTRY_COMPARE_WITH_TIMEOUT(w.runsModel()->rowCount(), 1, 2000);
  w.selectRun(id);
  QTRY_VERIFY_WITH_TIMEOUT(w.lossPlot()->graphCount() == 1, 2000);
  EXPECT_EQ(w.lossPlot()->graph(0)->dataCount(), 50);

  // More points arrive: the plot follows without reselecting.
  b.clear();
  for (int s = 50; s < 80; ++s) b.scalar(s, "loss_train", 4.0);
  writer.write(id, b);
  QTRY_VERIFY_WITH_TIMEOUT(w.lossPlot()->graphCount() == 1 &&
                               w.lossPlot()->graph(0)->dataCount() == 80, 2000);
}

TEST(MainWindow, DecimationKeepsSpikes) {
  std::vector<store::ScalarPoint> pts;
  for (int i = 0; i < 20000; ++i) pts.push_back({i, i == 12345 ? 100.0 : 1.0});
  auto d = ui::decimateMinMax(pts, 0, 19999, 500);
  EXPECT_TRUE(d.decimated());
  EXPECT_LE(d.keys.size(), 2000);
  EXPECT_EQ(d.sourcePoints, 20000);
  EXPECT_NE(std::find(d.values.begin(), d.values.end(), 100.0), d.values.end());
}
