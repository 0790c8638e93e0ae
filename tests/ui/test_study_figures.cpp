// The depth study's figure set over a stored study of every scheme: the three files and their
// CSVs (exactly the plotted values, ranked), scheme names on the ranked axis without colliding,
// the variance key off the data, a dozen schemes told apart (no two alike in colour, marker and
// line), a scheme without a probe left out with a warning.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QFile>
#include <QFileInfo>

#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "experiment/experiment_config.h"
#include "export/figure_csv.h"
#include "export/study_figures.h"
#include "plot/figure_layout.h"
#include "store/metric_catalogue.h"
#include "support/model_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

// One run of every scheme of the catalogue, 8 layers, the last one without any probe.
std::vector<int64_t> storeStudy(store::RunStore& s) {
  std::vector<int64_t> ids;
  const auto& schemes = experiment::kSchemes;
  for (size_t i = 0; i < schemes.size(); ++i) {
    auto c = test::smallConfig(8);
    c.schemes = {schemes[i]};
    store::NewRun nr;
    nr.name = "study " + schemes[i];
    nr.groupName = "study";
    nr.scheme = schemes[i];
    nr.configJson = experiment::toJson(c).dump();
    const int64_t id = s.createRun(nr);
    store::WriteBatch b;
    b.scalar(20, metrics::kLossVal, 3.0 + 0.05 * double((i * 7) % schemes.size()));
    if (i + 1 < schemes.size()) {
      std::vector<float> var, prune;
      for (int l = 0; l < 8; ++l) {
        var.push_back(float(1.0 + l * (0.2 + 0.3 * double(i))));
        prune.push_back(float(0.01 * double(i + 1) * (l + 1)));
      }
      b.layer(20, metrics::kVariance, var);
      b.layer(20, metrics::kPruneDelta, prune);
    }
    s.write(id, b);
    ids.push_back(id);
  }
  return ids;
}

}  // namespace

TEST(StudyFigures, WritesTheThreeFiguresWithRankedCsvsAndLeavesOutWhatIsMissing) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("s.db"));
  const auto ids = storeStudy(s);
  const QString out = QString::fromStdString(dir.file("figs"));
  const auto r = ui::exportStudyFigures(s, ids, QStringLiteral("pdf"), out, ui::FigureStyle{});
  for (const auto& name : ui::kStudyFigureNames) {
    EXPECT_GT(QFileInfo(out + QLatin1Char('/') + name + QStringLiteral(".pdf")).size(), 1000)
        << name.toStdString();
  }
  EXPECT_TRUE(QFileInfo::exists(out + QStringLiteral("/study.json")));
  const QString lastScheme = QString::fromStdString(experiment::kSchemes.back());
  EXPECT_TRUE(r.warnings.join(QLatin1Char('\n')).contains(QStringLiteral("has no pruning probe")))
      << r.warnings.join(QLatin1Char('\n')).toStdString();
  QFile csv(out + QStringLiteral("/study-loss.csv"));
  ASSERT_TRUE(csv.open(QIODevice::ReadOnly));
  const auto lines = QString::fromUtf8(csv.readAll()).trimmed().split(QLatin1Char('\n'));
  ASSERT_EQ(lines.size(), 1 + static_cast<int>(ids.size()));  // every scheme has a loss
  double previous = -1;
  for (int i = 1; i < lines.size(); ++i) {  // ranked: rank i, loss rising
    const auto cells = lines[i].split(QLatin1Char(','));
    EXPECT_EQ(cells[0].toInt(), i);
    EXPECT_GE(cells[2].toDouble(), previous);
    previous = cells[2].toDouble();
  }
  QFile pruning(out + QStringLiteral("/study-pruning.csv"));
  ASSERT_TRUE(pruning.open(QIODevice::ReadOnly));
  const QString p = QString::fromUtf8(pruning.readAll());
  EXPECT_EQ(p.trimmed().count(QLatin1Char('\n')),
            static_cast<int>(ids.size()) - 1);  // one left out
  EXPECT_FALSE(p.contains(QLatin1Char(',') + lastScheme + QLatin1Char(',')));
}

TEST(StudyFigures, NamesDoNotCollideTheKeyCoversNoDataAndSchemesLookApart) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("s.db"));
  const auto study = analysis::makeDepthStudy(s, storeStudy(s));
  for (auto kind : {ui::StudyFigure::Loss, ui::StudyFigure::Pruning}) {
    QCustomPlot plot;
    ui::FigureCsv csv;
    ui::drawStudyFigure(&plot, study, kind, ui::FigureStyle{}, csv);
    const auto boxes = ui::figures::tickLabelBoxes(plot.yAxis);
    EXPECT_GE(boxes.size(), study.rows.size() - 1);  // every scheme named
    EXPECT_FALSE(ui::figures::labelsCollide(boxes, 0)) << int(kind);
  }
  QCustomPlot plot;
  ui::FigureCsv csv;
  ui::drawStudyFigure(&plot, study, ui::StudyFigure::Variance, ui::FigureStyle{}, csv);
  EXPECT_EQ(ui::figures::pointsUnderLegend(&plot, plot.axisRect()), 0);
  std::set<std::tuple<QRgb, int, int>> looks;
  for (int i = 0; i < plot.graphCount(); ++i) {
    auto* g = plot.graph(i);
    looks.insert({g->pen().color().rgb(), int(g->scatterStyle().shape()), int(g->pen().style())});
  }
  EXPECT_EQ(static_cast<int>(looks.size()), plot.graphCount());
  EXPECT_EQ(plot.graphCount(), static_cast<int>(study.rows.size()) - 1);
}

TEST(StudyFigures, OneSchemeFarPastTheOthersSitsAtTheFrameWithItsValue) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("s.db"));
  const std::vector<std::pair<std::string, float>> deep = {
      {"pre_ln", 0.001f}, {"lns", 0.002f}, {"post_ln", 0.003f}, {"deepnorm", 0.8f}};
  std::vector<int64_t> ids;
  for (const auto& [scheme, delta] : deep) {
    store::NewRun nr;
    nr.name = nr.scheme = scheme;
    nr.configJson = experiment::toJson(test::smallConfig(4)).dump();
    ids.push_back(s.createRun(nr));
    store::WriteBatch b;
    b.scalar(20, metrics::kLossVal, 3.0);
    b.layer(20, metrics::kPruneDelta, {0, 0, 0, delta});
    s.write(ids.back(), b);
  }
  QCustomPlot plot;
  ui::FigureCsv csv;
  ui::drawStudyFigure(&plot, analysis::makeDepthStudy(s, ids), ui::StudyFigure::Pruning,
                      ui::FigureStyle{}, csv);
  EXPECT_LT(plot.xAxis->range().upper, 0.1);  // the others keep the axis
  ASSERT_EQ(plot.itemCount(), 1);
  auto* label = qobject_cast<QCPItemText*>(plot.item(0));
  ASSERT_NE(label, nullptr);
  EXPECT_TRUE(label->text().startsWith(QStringLiteral("0.8"))) << label->text().toStdString();
  EXPECT_TRUE(QString::fromUtf8(csv.bytes()).contains(QStringLiteral("1,deepnorm,0.8")));
}
