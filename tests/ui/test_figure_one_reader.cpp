// The paper-figure export and the dashboard read a run's series through one reader
// (dashboard/run_series.h: readRunSeries): the exported variance, angular and pruning figures'
// CSV rows are what GroupData holds for the runs (steps chosen as before: runs planned for
// different lengths compared at the fewest planned steps), and the figure dialog reads its runs
// once when it opens: redrawing its preview reads no store (the runs deleted from the database
// after it opened still draw, until it reloads them).
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QFile>

#include <climits>
#include <cmath>
#include <string>
#include <vector>

#include "dashboard/group_data.h"
#include "export/figure_csv.h"
#include "export/figure_dialog.h"
#include "export/figure_export.h"
#include "store/metric_catalogue.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

constexpr int kLayers = 4;

// Group "one": run "short" planned for 100 steps, run "long" for 200; losses every step, probes
// (variance, pruning with errors, angular) every 50.
std::vector<int64_t> writeRuns(store::RunStore& s) {
  std::vector<int64_t> ids;
  for (int planned : {100, 200}) {
    store::NewRun nr;
    nr.name = planned == 100 ? "short" : "long";
    nr.groupName = "one";
    nr.scheme = planned == 100 ? "pre_ln" : "lns";
    nr.configJson = R"({"model":{"nLayers":4},"optim":{"steps":)" + std::to_string(planned) + "}}";
    const int64_t id = s.createRun(nr);
    store::WriteBatch b;
    for (int step = 0; step < planned; ++step) {
      b.scalar(step, metrics::kLossTrain, 4.0 - step * 0.01 * planned / 100);
      if (step % 50 != 0) continue;
      b.scalar(step, metrics::kLossVal, 4.2 - step * 0.01);
      std::vector<float> v(kLayers), d(kLayers), e(kLayers), m(kLayers * kLayers, NAN);
      for (int l = 0; l < kLayers; ++l) {
        v[l] = (l + 1) * (1.0f + step) * planned / 100;
        d[l] = 0.1f * (kLayers - l) + 0.001f * step;
        e[l] = 0.01f * (l + 1);
        for (int n = 1; l + n <= kLayers; ++n)
          m[l * kLayers + n - 1] = 0.1f * n + 0.01f * l + 0.001f * step;
      }
      b.layer(step, metrics::kVariance, v);
      b.layer(step, metrics::kPruneDelta, d);
      b.layer(step, metrics::kPruneDeltaError, e);
      b.matrix(step, metrics::kAngular, kLayers, kLayers, m);
    }
    s.write(id, b);
    ids.push_back(id);
  }
  return ids;
}

// writeRuns' two runs in a database, and the dashboard's group read from it.
struct TwoRuns {
  test::TempDir dir;
  store::RunStore s = store::RunStore::open(dir.file("one.db"));
  std::vector<int64_t> ids = writeRuns(s);
  ui::GroupData group{QStringLiteral("one")};
  TwoRuns() { group.reload(s, {}); }
};

// The figure `figure`, drawn from runs read once, and its CSV.
QByteArray figureCsv(const ui::FigureRuns& read, const std::vector<int64_t>& ids,
                     const QString& figure) {
  ui::ExportRequest req;
  req.runs = ids;
  req.figure = figure;
  QCustomPlot plot;
  ui::FigureCsv csv;
  ui::drawFigure(&plot, read, req, &csv);
  return csv.bytes();
}

}  // namespace

TEST(FigureOneReader, TheFiguresCsvIsWhatTheDashboardHolds) {
  TwoRuns t;
  auto& s = t.s;
  const auto& ids = t.ids;
  const auto& group = t.group;
  ASSERT_EQ(group.runs().size(), 2u);
  const auto read = ui::readFigureRuns(s, ids);

  // Variance: every point of every layer, as the dashboard holds them.
  ui::FigureCsv variance;
  variance.header = {QStringLiteral("run"), QStringLiteral("layer"), QStringLiteral("step"),
                     QStringLiteral("variance")};
  for (const auto& r : group.runs()) {
    const auto& v = r.layers.at(metrics::kVariance);
    for (int l = 0; l < v.nLayers; ++l) {
      for (size_t k = 0; k < v.steps.size(); ++k)
        variance.integer(r.info.id)
            .integer(l + 1)
            .integer(v.steps[k])
            .value(v.values[k * kLayers + l])
            .endRow();
    }
  }
  EXPECT_EQ(figureCsv(read, ids, QStringLiteral("variance")), variance.bytes());

  // Angular: both runs at their last probe by step 100, the fewest steps either was planned for
  // (short's last is 50; long's is 150, shown at 100).
  ui::FigureCsv angular;
  angular.header = {QStringLiteral("run"), QStringLiteral("step"), QStringLiteral("layer_l"),
                    QStringLiteral("offset_n"), QStringLiteral("angular_distance")};
  for (const auto& r : group.runs()) {
    const store::Matrix* m = r.angularAt(100);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->step, r.info.name == "short" ? 50 : 100) << r.info.name;
    for (int row = 0; row < m->rows; ++row) {
      for (int c = 0; c < m->cols; ++c) {
        const double v = m->data[static_cast<size_t>(row) * m->cols + c];
        if (std::isfinite(v))
          angular.integer(r.info.id)
              .integer(m->step)
              .integer(row + 1)
              .integer(c + 1)
              .value(v)
              .endRow();
      }
    }
  }
  EXPECT_EQ(figureCsv(read, ids, QStringLiteral("angular")), angular.bytes());

  // The file the export writes holds the same rows as the figure drawn from the runs read.
  ui::ExportRequest req;
  req.runs = ids;
  req.figure = QStringLiteral("variance");
  req.format = QStringLiteral("svg");
  req.path = QString::fromStdString(t.dir.file("variance.svg"));
  ui::exportFigure(s, req);
  QFile file(QString::fromStdString(t.dir.file("variance.csv")));
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  EXPECT_EQ(file.readAll(), variance.bytes());
}

TEST(FigureOneReader, TheReaderIsTheDashboards) {
  TwoRuns t;
  const auto& ids = t.ids;
  const auto read = ui::readFigureRuns(t.s, ids, /*withFamilyTable=*/false);
  ASSERT_EQ(read.series.size(), 2u);
  EXPECT_EQ(read.family, nullptr);
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto& mine = *read.series[i];
    const auto& dash = t.group.runs()[i];
    ASSERT_EQ(mine.info.id, dash.info.id);
    EXPECT_EQ(mine.totalSteps, dash.totalSteps);
    for (const auto& [key, v] : dash.scalars)
      EXPECT_EQ(mine.scalars.at(key).size(), v.size()) << key;
    for (const auto& [key, v] : dash.layers) {
      EXPECT_EQ(mine.layers.at(key).steps, v.steps) << key;
      EXPECT_EQ(mine.layers.at(key).values, v.values) << key;
    }
    ASSERT_EQ(mine.angular.size(), dash.angular.size());
    for (size_t k = 0; k < mine.angular.size(); ++k)
      EXPECT_EQ(mine.angular[k].step, dash.angular[k].step);
  }
}

TEST(FigureOneReader, TheDialogsPreviewRedrawsWithoutReadingTheStore) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("one.db"));
  const auto ids = writeRuns(s);
  ui::FigureDialog dialog(s, ids, QStringLiteral("variance"), ui::FigureStyle{});
  dialog.updatePreview();
  const QImage before = dialog.previewImage();
  ASSERT_FALSE(before.isNull());
  // The runs gone from the database: the preview draws what the dialog read when it opened.
  for (int64_t id : ids) ASSERT_TRUE(s.deleteRun(id));
  dialog.updatePreview();
  EXPECT_EQ(dialog.previewImage(), before);
  for (const char* figure : {"loss", "angular", "pruning", "family-pruning", "family-angular"}) {
    dialog.setFigure(QString::fromLatin1(figure));
    dialog.updatePreview();
    EXPECT_FALSE(dialog.previewImage().isNull())
        << figure << ": " << dialog.warnings().toStdString();
  }
  // Reloading reads the store again: the runs are gone.
  dialog.reloadRuns();
  EXPECT_TRUE(dialog.previewImage().isNull());
}
