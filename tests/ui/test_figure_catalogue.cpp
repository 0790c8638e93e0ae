// The figure catalogue (export/figure_catalogue.h) is the one place a figure is written: every
// row is complete and reads catalogued metrics, every figure a dashboard panel offers is a row,
// the figure dialog and depthlab-export's --help list exactly the rows, an unknown id is refused
// naming the known ones, and the figure added through it (block-pruning: one row, one builder)
// draws each run's (l, n) matrix with a CSV of exactly its cells; the logit-lens figure (one
// row, one builder) draws each run's layer x step KL map.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QComboBox>

#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "daily_use_fixtures.h"
#include "dashboard/panel_specs.h"
#include "export/figure_catalogue.h"
#include "export/figure_csv.h"
#include "export/figure_dialog.h"
#include "export/figure_export.h"
#include "store/metric_catalogue.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

constexpr int kLayers = 5;

// A Pre-LN and an LNS run with a block-pruning matrix (and its errors) at step 150, and a third
// run without one. Cell (l, n) = loss increase with n blocks from l removed; NaN past the end.
std::vector<int64_t> blockPruningRuns(store::RunStore& s) {
  std::vector<int64_t> ids;
  for (const char* scheme : {"pre_ln", "lns", "mix_ln"}) {
    test::FakeRun f{"bp", scheme, 1};
    f.layers = kLayers;
    const int64_t id = test::addFakeRun(s, f);
    ids.push_back(id);
    if (std::string(scheme) == "mix_ln") continue;
    const float k = std::string(scheme) == "lns" ? 0.5f : 1.0f;
    std::vector<float> m(kLayers * kLayers, NAN), e(kLayers * kLayers, NAN);
    for (int l = 0; l < kLayers; ++l) {
      for (int n = 1; l + n <= kLayers; ++n) {
        m[l * kLayers + n - 1] = k * (0.1f * static_cast<float>(n) + (l == 0 ? 2.0f : 0.0f));
        e[l * kLayers + n - 1] = 0.01f * static_cast<float>(n);
      }
    }
    store::WriteBatch b;
    b.matrix(150, metrics::kBlockPrune, kLayers, kLayers, m);
    b.matrix(150, metrics::kBlockPruneError, kLayers, kLayers, e);
    s.write(id, b);
  }
  return ids;
}

}  // namespace

TEST(FigureCatalogue, EveryRowIsCompleteAndReadsCataloguedMetrics) {
  std::set<std::string> ids;
  for (const auto& row : ui::figureCatalogue()) {
    SCOPED_TRACE(row.id);
    EXPECT_TRUE(ids.insert(row.id).second) << "an id twice";
    EXPECT_NE(row.build, nullptr);
    EXPECT_FALSE(std::string(row.title).empty());
    EXPECT_TRUE(row.familyTable != !row.reads.empty()) << "a row reads metrics or the family table";
    for (const auto& key : row.reads) {
      EXPECT_TRUE(metrics::find(key, metrics::Kind::Scalar) ||
                  metrics::find(key, metrics::Kind::PerLayer) ||
                  metrics::find(key, metrics::Kind::Matrix))
          << key;
    }
  }
  EXPECT_EQ(ids.count("set") + ids.count("study"), 0u) << "the composite exports are not rows";
  // Every figure a dashboard panel offers, and every figure of the set, is a row.
  for (const auto& section : ui::dashboard::dashboardSections()) {
    for (const auto& p : section.panels) {
      if (!p.figure.isEmpty())
        EXPECT_NE(ui::findFigure(p.figure), nullptr) << p.figure.toStdString();
    }
  }
  for (const auto& id : ui::dashboard::exportedFigures()) EXPECT_NE(ui::findFigure(id), nullptr);
  try {
    ui::requireFigure(QStringLiteral("nonsense"));
    ADD_FAILURE() << "an unknown figure was accepted";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const auto& id : ui::figureIds())
      EXPECT_NE(what.find(id.toStdString()), std::string::npos) << what;
  }
}

TEST(FigureCatalogue, TheDialogAndTheExportHelpListExactlyTheRows) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("c.db"));
  const auto ids = blockPruningRuns(s);
  ui::FigureDialog dialog(s, ids, QStringLiteral("block-pruning"), ui::FigureStyle{});
  auto* combo = dialog.findChild<QComboBox*>(QStringLiteral("figure"));
  ASSERT_NE(combo, nullptr);
  QStringList offered;
  for (int i = 0; i < combo->count(); ++i) offered << combo->itemData(i).toString();
  EXPECT_EQ(offered, ui::figureIds() + QStringList{QStringLiteral("set")});
  EXPECT_EQ(dialog.figure(), QStringLiteral("block-pruning"));

  std::string help;
  ASSERT_EQ(test::runCommand(
                "env QT_QPA_PLATFORM=offscreen " + test::cliPath() + " export --help 2>&1", &help),
            0)
      << help;
  for (const auto& row : ui::figureCatalogue()) {
    EXPECT_NE(help.find(row.id), std::string::npos) << row.id << "\n" << help;
    EXPECT_NE(help.find(row.title), std::string::npos) << row.title;
  }
  std::string refused;
  EXPECT_EQ(test::runCommand(test::cliPath() + " --db " + dir.file("c.db") +
                                 " export --runs 1 --figure nonsense --out " + dir.file("x.pdf") +
                                 " 2>&1",
                             &refused),
            1);
  EXPECT_NE(refused.find("unknown figure 'nonsense'"), std::string::npos) << refused;
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.pdf")));
}

TEST(FigureCatalogue, TheBlockPruningFigureDrawsEachRunsMatrixAndItsCellsInTheCsv) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("c.db"));
  const auto ids = blockPruningRuns(s);
  ui::ExportRequest req;
  req.runs = ids;
  req.figure = QStringLiteral("block-pruning");
  const auto read = ui::readFigureRuns(s, ids, /*withFamilyTable=*/false);
  QCustomPlot plot;
  ui::FigureCsv csv;
  const QStringList warnings = ui::drawFigure(&plot, read, req, &csv);
  // One panel per run, two colour maps (the third run has none, and says so).
  int maps = 0;
  for (int i = 0; i < plot.plottableCount(); ++i)
    maps += qobject_cast<QCPColorMap*>(plot.plottable(i)) ? 1 : 0;
  EXPECT_EQ(maps, 2);
  EXPECT_EQ(plot.axisRects().size(), 3);
  ASSERT_EQ(warnings.size(), 1) << warnings.join(QStringLiteral("; ")).toStdString();
  EXPECT_TRUE(
      warnings[0].contains(QStringLiteral("run %1 has no block-pruning matrix").arg(ids[2])));
  // The CSV: every finite cell of the two matrices (L (L + 1) / 2 each), with its error.
  const QString text = QString::fromUtf8(csv.bytes());
  const QStringList lines = text.trimmed().split(QLatin1Char('\n'));
  ASSERT_EQ(lines.size(), 1 + 2 * kLayers * (kLayers + 1) / 2) << text.toStdString();
  EXPECT_EQ(lines[0],
            QStringLiteral("run,step,first_block_l,blocks_removed_n,delta_loss,standard_error"));
  // Pre-LN's (l = 1, n = 2): 2.2 with error 0.02; LNS's is half of it.
  auto cell = [&](int64_t run, const char* ln, int column) {
    for (const auto& line : lines) {
      const QStringList f = line.split(QLatin1Char(','));
      if (f[0] == QString::number(run) && f[1] == QLatin1String("150") &&
          f[2] + QLatin1Char(',') + f[3] == QLatin1String(ln)) {
        return f[column].toDouble();
      }
    }
    return std::nan("");
  };
  EXPECT_NEAR(cell(ids[0], "1,2", 4), 2.2, 1e-6);
  EXPECT_NEAR(cell(ids[0], "1,2", 5), 0.02, 1e-6);
  EXPECT_NEAR(cell(ids[1], "1,2", 4), 1.1, 1e-6);
  EXPECT_NEAR(cell(ids[1], "4,2", 4), 0.1, 1e-6);  // blocks 4 and 5 of 5
  EXPECT_TRUE(std::isnan(cell(ids[0], "5,2", 4))) << "no row past the last block";
  // Exported like every row: figure, CSV and JSON, sized as a panel grid.
  req.path = QString::fromStdString(dir.file("bp.pdf"));
  const auto result = ui::exportFigure(s, req);
  EXPECT_EQ(result.files.size(), 3);
  const QSize size = ui::figureSizePt(req);
  EXPECT_GT(size.height(), 0);
  EXPECT_TRUE(std::filesystem::exists(dir.file("bp.csv")));
}

TEST(FigureCatalogue, TheLensFigureDrawsEachRunsLayerByStepMapWithItsValuesInTheCsv) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("c.db"));
  std::vector<int64_t> ids;
  for (const char* scheme : {"pre_ln", "lns", "mix_ln"}) {
    test::FakeRun f{"lens", scheme, 1};
    f.layers = kLayers;
    ids.push_back(test::addFakeRun(s, f));
    if (std::string(scheme) == "mix_ln") continue;
    store::WriteBatch b;
    for (int64_t step : {0, 100, 200}) {
      std::vector<float> kl, top1;
      for (int l = 0; l < kLayers; ++l) {  // falls to 0 at the last block
        kl.push_back(static_cast<float>(kLayers - 1 - l) * (1.0f + static_cast<float>(step) / 100));
        top1.push_back(l == kLayers - 1 ? 1.0f : 0.1f * static_cast<float>(l));
      }
      b.layer(step, metrics::kLensKl, kl);
      b.layer(step, metrics::kLensTop1, top1);
    }
    s.write(ids.back(), b);
  }
  ui::ExportRequest req;
  req.runs = ids;
  req.figure = QStringLiteral("lens");
  const auto read = ui::readFigureRuns(s, ids, /*withFamilyTable=*/false);
  QCustomPlot plot;
  ui::FigureCsv csv;
  const QStringList warnings = ui::drawFigure(&plot, read, req, &csv);
  int maps = 0;
  for (int i = 0; i < plot.plottableCount(); ++i) {
    if (auto* m = qobject_cast<QCPColorMap*>(plot.plottable(i))) {
      ++maps;
      EXPECT_EQ(m->data()->keySize(), 3);  // a column per probed step
      EXPECT_EQ(m->data()->valueSize(), kLayers);
      // The axes show the whole map: steps 0..200 and blocks 1..L.
      const auto x = m->keyAxis()->range(), y = m->valueAxis()->range();
      EXPECT_LE(x.lower, 0);
      EXPECT_GE(x.upper, 200);
      EXPECT_LE(y.lower, 1);
      EXPECT_GE(y.upper, kLayers);
      EXPECT_GT(y.lower, 0);
    }
  }
  EXPECT_EQ(maps, 2);
  ASSERT_EQ(warnings.size(), 1) << warnings.join(QStringLiteral("; ")).toStdString();
  EXPECT_TRUE(warnings[0].contains(QStringLiteral("run %1 has no logit-lens probe").arg(ids[2])));
  const QStringList lines = QString::fromUtf8(csv.bytes()).trimmed().split(QLatin1Char('\n'));
  ASSERT_EQ(lines.size(), 1 + 2 * kLayers * 3);
  EXPECT_EQ(lines[0], QStringLiteral("run,layer,step,kl_to_output_nats,top1_agreement"));
  // Pre-LN's block 2 at step 200: KL (5 - 1 - 1) x 3 = 9, top-1 0.1.
  bool found = false;
  for (const auto& line : lines) {
    const QStringList f = line.split(QLatin1Char(','));
    if (f[0] == QString::number(ids[0]) && f[1] == QLatin1String("2") &&
        f[2] == QLatin1String("200")) {
      found = true;
      EXPECT_NEAR(f[3].toDouble(), 9.0, 1e-6);
      EXPECT_NEAR(f[4].toDouble(), 0.1, 1e-6);
    }
  }
  EXPECT_TRUE(found);
}
