// The family figures: imported models of different depths against relative depth l / L, one
// line per model labelled with its family and depth, pruning deltas with their error bars, the
// CSV of exactly the plotted points, a warning (not a failure) for a model without the probe,
// and the figure set still the four training figures; Compare's family table.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QFile>
#include <QTableWidget>

#include <nlohmann/json.hpp>

#include "compare/compare_view.h"
#include "experiment/experiment_config.h"
#include "export/figure_export.h"
#include "store/metric_catalogue.h"
#include "support/imported_run.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

int64_t addImported(store::RunStore& s, const std::string& name, const std::string& architecture,
                    int layers, bool probed) {
  const int64_t id = test::addImportedRun(s, name, architecture, layers);
  if (!probed) return id;
  test::ImportedProbes p;
  for (int l = 0; l < layers; ++l) {
    p.pruneDelta.push_back(1.0f / float(l + 1));
    p.pruneDeltaError.push_back(0.05f);
    p.angularAdjacent.push_back(0.5f - 0.04f * float(l));
    p.effectiveness.push_back(0.3f);
  }
  test::writeImportedProbes(s, id, p);
  return id;
}

}  // namespace

TEST(FamilyFigures, ModelsOfDifferentDepthsShareRelativeDepthWithFamilyLabels) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("f.db"));
  const int64_t llama = addImported(s, "llama", "LlamaForCausalLM", 4, true);
  const int64_t gemma = addImported(s, "gemma", "Gemma2ForCausalLM", 8, true);
  const int64_t bare = addImported(s, "bare", "Qwen2ForCausalLM", 6, false);
  ui::ExportRequest req;
  req.runs = {llama, gemma, bare};
  req.figure = QStringLiteral("family-pruning");
  req.path = QString::fromStdString(dir.file("fp.pdf"));
  const auto r = ui::exportFigure(s, req);
  EXPECT_EQ(r.files.size(), 3);
  EXPECT_TRUE(r.warnings.join(QLatin1Char(' '))
                  .contains(QStringLiteral("run %1 has no pruning probe").arg(bare)));
  QFile csv(QString::fromStdString(dir.file("fp.csv")));
  ASSERT_TRUE(csv.open(QIODevice::ReadOnly));
  const QString text = QString::fromUtf8(csv.readAll());
  EXPECT_EQ(text.count(QLatin1Char('\n')), 1 + 4 + 8) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("%1,4,1,0.25,0.05").arg(llama))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("%1,4,0.5,0.25,0.05").arg(gemma))) << text.toStdString();

  QCustomPlot plot;
  req.figure = QStringLiteral("family-angular");
  ui::drawFigure(&plot, s, req);
  QStringList names;
  for (int i = 0; i < plot.legend->itemCount(); ++i) {
    if (auto* item = qobject_cast<QCPPlottableLegendItem*>(plot.legend->item(i)))
      names << item->plottable()->name();
  }
  EXPECT_EQ(names, (QStringList{QStringLiteral("llama (Llama, L = 4)"),
                                QStringLiteral("gemma (Gemma 2, L = 8)")}));
  EXPECT_EQ(plot.graph(1)->data()->size(), 8);
  EXPECT_DOUBLE_EQ(plot.graph(1)->data()->at(7)->key, 1.0);
  EXPECT_GE(plot.xAxis->range().lower, -1e-9);
  EXPECT_LE(plot.xAxis->range().upper, 1.05);

  const auto set = ui::exportFigureSet(s, {llama}, QStringLiteral("svg"),
                                       QString::fromStdString(dir.file("set")), ui::FigureStyle{});
  for (const auto& f : set.files)
    EXPECT_FALSE(f.contains(QStringLiteral("family"))) << f.toStdString();
}

// Compare shows the family table when it compares imported models, and none for runs trained
// here.
TEST(FamilyFigures, CompareShowsTheFamilyTableOfImportedModels) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("f.db"));
  const int64_t llama = addImported(s, "llama", "LlamaForCausalLM", 4, true);
  const int64_t gemma = addImported(s, "gemma", "Gemma2ForCausalLM", 8, true);
  ui::CompareView view(s, {llama, gemma});
  auto* table = view.findChild<QTableWidget*>(QStringLiteral("familyTable"));
  ASSERT_NE(table, nullptr);
  ASSERT_EQ(table->rowCount(), 2);
  EXPECT_EQ(table->item(1, 1)->text(), QStringLiteral("Gemma 2"));
  EXPECT_EQ(table->item(1, 2)->text(), QStringLiteral("8"));
  EXPECT_EQ(table->item(0, 5)->text(), QStringLiteral("4 (100%)"));  // E_l 0.3: effective
  EXPECT_EQ(table->item(0, 7)->text(), QStringLiteral("0 (0%)"));    // no delta under 1% of 3.0
}

// Comparing imported models only: the training panels (loss over steps, seed groups, depth
// trend, statistics, results, variance over steps) are hidden rather than drawn empty, and no
// "run 1 has no train loss" note (missing probes are still named); the per-layer profiles and
// the family table stay. A trained
// run beside them brings the training panels back.
TEST(FamilyFigures, CompareOfImportedModelsOnlyHidesTheTrainingPanels) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("f.db"));
  const int64_t llama = addImported(s, "llama", "LlamaForCausalLM", 4, true);
  const int64_t gemma = addImported(s, "gemma", "Gemma2ForCausalLM", 8, true);
  ui::CompareView models(s, {llama, gemma});
  models.resize(1200, 900);
  models.show();
  EXPECT_TRUE(models.plots().at(QStringLiteral("loss"))->isHidden());
  EXPECT_TRUE(models.plots().at(QStringLiteral("seed_groups"))->isHidden());
  EXPECT_FALSE(models.plots().at(QStringLiteral("variance"))->isHidden());
  // Probes they lack are said (these have no variance rows); a loss no model has is not.
  EXPECT_TRUE(models.missingText().contains(QStringLiteral("no variance")))
      << models.missingText().toStdString();
  EXPECT_FALSE(models.missingText().contains(QStringLiteral("loss")))
      << models.missingText().toStdString();
  EXPECT_NE(models.findChild<QTableWidget*>(QStringLiteral("familyTable")), nullptr);
  const int64_t trained = test::addImportedRun(s, "trained here", "", 4);  // no import record
  ui::CompareView mixed(s, {llama, trained});
  EXPECT_FALSE(mixed.plots().at(QStringLiteral("loss"))->isHidden());
}
