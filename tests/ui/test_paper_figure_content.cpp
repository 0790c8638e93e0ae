// What paper figures say: the names set in the figure window reach `depthlab-cli export` (kept
// in the run database); the loss figure's key says which line is train and which validation,
// its optional smoothing is the dashboard's EMA with the weight in the key, and two runs'
// validation lines differ in dash and marker; the angular (l, n) matrix shows row l = 1 whole.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QFile>

#include <string>

#include "daily_use_fixtures.h"
#include "export/figure_dialog.h"
#include "export/figure_export.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

// Pre-LN and LNS of seed 1 with validation every 25 steps.
std::vector<int64_t> twoRuns(store::RunStore& s) {
  std::vector<int64_t> ids;
  for (const char* scheme : {"pre_ln", "lns"}) {
    const int64_t id = test::addFakeRun(s, test::FakeRun{"g", scheme, 1});
    store::WriteBatch b;
    for (int step = 25; step < 200; step += 25)
      b.scalar(step, metrics::kLossVal, 3.0 - step * 0.004);
    s.write(id, b);
    ids.push_back(id);
  }
  return ids;
}

QStringList legendNames(QCustomPlot& plot) {
  QStringList names;
  for (int i = 0; i < plot.legend->itemCount(); ++i) {
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot.legend->item(i)))
      names << item->plottable()->name();
  }
  return names;
}

}  // namespace

TEST(PaperFigureContent, NamesSetInTheWindowReachTheCliExport) {
  test::TempDir dir;
  const std::string db = dir.file("n.db");
  std::vector<int64_t> ids;
  {
    auto s = store::RunStore::open(db);
    ids = twoRuns(s);
    ui::FigureDialog dialog(s, ids, QStringLiteral("loss"), ui::FigureStyle{});
    dialog.setDisplayName(QStringLiteral("lns"), QStringLiteral("LNS (ours)"));
    dialog.setDisplayName(QString::number(ids[0]), QStringLiteral("baseline"));
    dialog.setFormat(QStringLiteral("svg"));
    ASSERT_EQ(dialog.saveTo(QString::fromStdString(dir.file("window/loss.svg"))).size(), 3);
  }
  std::string out;
  ASSERT_EQ(test::runCommand(depthlab::test::cliPath() + " --db " + db + " export --runs " +
                                 std::to_string(ids[0]) + "," + std::to_string(ids[1]) +
                                 " --figure loss --format svg --out " + dir.file("cli/loss.svg"),
                             &out),
            0)
      << out;
  const std::string svg = test::readFile(dir.file("cli/loss.svg"));
  EXPECT_NE(svg.find("LNS (ours)"), std::string::npos);
  EXPECT_NE(svg.find("baseline"), std::string::npos);
  // A --label beats the stored name.
  ASSERT_EQ(
      test::runCommand(
          depthlab::test::cliPath() + " --db " + db + " export --runs " + std::to_string(ids[1]) +
              " --label lns=Mine --figure loss --format svg --out " + dir.file("cli/label.svg"),
          &out),
      0)
      << out;
  const std::string labelled = test::readFile(dir.file("cli/label.svg"));
  EXPECT_NE(labelled.find("Mine"), std::string::npos);
  EXPECT_EQ(labelled.find("LNS (ours)"), std::string::npos);
}

TEST(PaperFigureContent, TheLossKeySaysTrainAndValidationAndTheSmoothing) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("l.db"));
  const auto ids = twoRuns(s);
  ui::ExportRequest req;
  req.runs = ids;
  req.figure = QStringLiteral("loss");
  QCustomPlot raw;
  ui::drawFigure(&raw, s, req);
  EXPECT_TRUE(legendNames(raw).contains(QStringLiteral("train")));
  EXPECT_TRUE(legendNames(raw).contains(QStringLiteral("validation")));
  req.style.smoothing = 0.6;
  QCustomPlot smoothed;
  ui::drawFigure(&smoothed, s, req);
  EXPECT_TRUE(legendNames(smoothed).contains(QStringLiteral("train (EMA 0.60)")))
      << legendNames(smoothed).join(QLatin1Char('|')).toStdString();
  // The Pre-LN train curve drawn is smoothed: its noisy points moved.
  auto curve = [](QCustomPlot& p, const QString& name) -> QCPGraph* {
    for (int i = 0; i < p.graphCount(); ++i) {
      if (p.graph(i)->name() == name && p.graph(i)->visible() &&
          p.graph(i)->pen().color().alpha() > 100)
        return p.graph(i);
    }
    return nullptr;
  };
  auto* a = curve(raw, QStringLiteral("Pre-LN"));
  auto* b = curve(smoothed, QStringLiteral("Pre-LN"));
  ASSERT_TRUE(a && b);
  ASSERT_EQ(a->dataCount(), b->dataCount());
  EXPECT_NE(a->data()->at(50)->value, b->data()->at(50)->value);
}

TEST(PaperFigureContent, TwoRunsValidationLinesDifferInDashAndMarker) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  const auto ids = twoRuns(s);
  ui::ExportRequest req;
  req.runs = ids;
  req.figure = QStringLiteral("loss");
  QCustomPlot plot;
  ui::drawFigure(&plot, s, req);
  std::vector<QCPGraph*> validations;  // the runs' dashed lines with data
  for (int i = 0; i < plot.graphCount(); ++i) {
    auto* g = plot.graph(i);
    if (g->dataCount() > 0 && g->pen().style() == Qt::CustomDashLine) validations.push_back(g);
  }
  ASSERT_EQ(validations.size(), 2u);
  EXPECT_NE(validations[0]->pen().dashPattern(), validations[1]->pen().dashPattern());
  EXPECT_NE(validations[0]->scatterStyle().shape(), validations[1]->scatterStyle().shape());
  EXPECT_EQ(validations[0]->layer()->name(), QStringLiteral("validation"));  // over the train lines
}

TEST(PaperFigureContent, TheAngularMatrixShowsRowOneWhole) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("a.db"));
  const auto ids = twoRuns(s);
  ui::ExportRequest req;
  req.runs = ids;
  req.figure = QStringLiteral("angular");
  QCustomPlot plot;
  ui::drawFigure(&plot, s, req);
  for (auto* rect : plot.axisRects()) {
    auto* y = rect->axis(QCPAxis::atLeft);
    // Row l is the cell from l - 0.5 to l + 0.5: rows 1 and L at full height.
    EXPECT_LE(y->range().lower, 0.5);
    EXPECT_GE(y->range().upper, 6.5);
    const double row1 =
        std::abs(y->coordToPixel(1.5) - y->coordToPixel(std::max(0.5, y->range().lower)));
    const double row3 = std::abs(y->coordToPixel(3.5) - y->coordToPixel(2.5));
    EXPECT_NEAR(row1, row3, 0.5);
  }
}
