// The views against the metric catalogue: a stored run holding every catalogued metric is read
// by the dashboard's data layer for each row the catalogue shows on the dashboard, and every
// row marked exportable ends up in the paper figure set, with no "missing" warning.
#include <gtest/gtest.h>

#include <QDir>
#include <QFile>

#include <cmath>
#include <set>

#include "dashboard/group_dashboard.h"
#include "dashboard/group_data.h"
#include "dashboard/panel_specs.h"
#include "export/figure_catalogue.h"
#include "export/figure_export.h"
#include "store/metric_catalogue.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

constexpr int kLayers = 4;

// Two runs (pre_ln, lns) of group "all" with every catalogue row at steps 0, 10, ..., 100.
std::vector<int64_t> writeEveryMetric(store::RunStore& s) {
  std::vector<int64_t> ids;
  for (const char* scheme : {"pre_ln", "lns"}) {
    store::NewRun nr;
    nr.name = scheme;
    nr.groupName = "all";
    nr.scheme = scheme;
    nr.configJson = R"({"model":{"nLayers":4},"optim":{"steps":101}})";
    const int64_t id = s.createRun(nr);
    store::WriteBatch b;
    for (int step = 0; step <= 100; step += 10) {
      for (const auto& m : metrics::catalogue()) {
        const std::string key(m.key);
        switch (m.kind) {
          case metrics::Kind::Scalar: b.scalar(step, key, 1.0 + step * 0.01); break;
          case metrics::Kind::PerLayer: b.layer(step, key, {0.5f, 1.0f, 1.5f, 2.0f + step}); break;
          case metrics::Kind::Matrix: {
            std::vector<float> v(kLayers * kLayers, NAN);
            for (int l = 0; l < kLayers; ++l)
              for (int n = 1; l + n <= kLayers; ++n) v[l * kLayers + n - 1] = 0.1f * n;
            b.matrix(step, key, kLayers, kLayers, v);
            break;
          }
        }
      }
    }
    s.write(id, b);
    ids.push_back(id);
  }
  return ids;
}

}  // namespace

TEST(MetricViews, TheDashboardReadsEveryRowItShows) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("all.db"));
  writeEveryMetric(s);
  ui::GroupData g(QStringLiteral("all"));
  ASSERT_TRUE(g.reload(s, {}));
  ASSERT_EQ(g.runs().size(), 2u);
  for (const auto& r : g.runs()) {
    EXPECT_EQ(r.nLayers, kLayers);
    EXPECT_EQ(r.totalSteps, 101);
    for (const auto& k : metrics::keysFor(metrics::Kind::Scalar, metrics::kDashboard)) {
      ASSERT_TRUE(r.scalars.count(k)) << k;
      EXPECT_EQ(r.scalars.at(k).size(), 11u) << k;
    }
    for (const auto& k : metrics::keysFor(metrics::Kind::PerLayer, metrics::kDashboard)) {
      ASSERT_TRUE(r.layers.count(k)) << k;
      EXPECT_EQ(r.layers.at(k).steps.size(), 11u) << k;
    }
    const auto matrices = metrics::keysFor(metrics::Kind::Matrix, metrics::kDashboard);
    EXPECT_EQ(matrices, (std::vector<std::string>{metrics::kAngular, metrics::kBlockPrune,
                                                  metrics::kSkipEffect}));
    EXPECT_EQ(r.angular.size(), 11u);
    EXPECT_TRUE(r.blockPrune.has_value());
    EXPECT_TRUE(r.skipEffect.has_value());
  }
}

TEST(MetricViews, TheScrubbersStopsAreEveryProbedStepOfEveryRunOnce) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("steps.db"));
  std::set<int64_t> want;
  for (int run = 0; run < 2; ++run) {
    store::NewRun nr;
    nr.name = run == 0 ? "pre_ln" : "lns";
    nr.groupName = "steps";
    nr.scheme = nr.name;
    const int64_t id = s.createRun(nr);
    store::WriteBatch b;
    for (int step = 0; step <= 300; ++step) {
      b.layer(step, metrics::kLayerGradNorm, {1.0f});  // every step: not a stop
      if (step % (25 + 10 * run) == 0) {
        b.layer(step, metrics::kVariance, {1.0f});
        want.insert(step);
      }
      if (step % 100 == 7) {
        b.layer(step, metrics::kPruneDelta, {1.0f});
        want.insert(step);
      }
    }
    s.write(id, b);
  }
  ui::GroupData g(QStringLiteral("steps"));
  ASSERT_TRUE(g.reload(s, {}));
  EXPECT_EQ(g.probeSteps(), std::vector<int64_t>(want.begin(), want.end()));
}

TEST(MetricViews, EveryExportableRowIsInTheFigureSet) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("all.db"));
  const auto ids = writeEveryMetric(s);
  const QString out = QString::fromStdString(dir.file("figures"));
  auto r = ui::exportFigureSet(s, ids, QStringLiteral("pdf"), out, ui::FigureStyle{});
  EXPECT_TRUE(r.warnings.isEmpty()) << r.warnings.join(QStringLiteral("; ")).toStdString();
  // Each exportable row's values are in one of the set's CSVs (the run id, then its numbers).
  QString csvs;
  for (const auto& f : QDir(out).entryList({QStringLiteral("*.csv")})) {
    QFile file(out + QLatin1Char('/') + f);
    ASSERT_TRUE(file.open(QIODevice::ReadOnly));
    csvs += QString::fromUtf8(file.readAll());
  }
  for (const auto& m : metrics::catalogue()) {
    if (!(m.panels & metrics::kExport)) continue;
    SCOPED_TRACE(std::string(m.key));
    switch (m.kind) {
      case metrics::Kind::Scalar:  // 1 + 100 * 0.01 at the last step
        EXPECT_TRUE(csvs.contains(QLatin1String(m.key.data(), static_cast<int>(m.key.size()))));
        break;
      case metrics::Kind::PerLayer:  // 2 + 100 in the deepest layer at the last step
        EXPECT_TRUE(csvs.contains(QStringLiteral(",102"))) << csvs.left(400).toStdString();
        break;
      case metrics::Kind::Matrix:  // 0.1 * n
        EXPECT_TRUE(csvs.contains(QStringLiteral("0.4"))) << csvs.left(400).toStdString();
        break;
    }
  }
}

TEST(MetricViews, TheDashboardIsBuiltFromItsPanelTable) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("all.db"));
  writeEveryMetric(s);
  ui::GroupDashboard d(QStringLiteral("all"));
  d.refresh(s, {});
  std::set<QString> drawn;
  size_t expected = 0;
  for (const auto& section : ui::dashboard::dashboardSections()) {
    for (const auto& spec : section.panels) {
      drawn.insert(spec.metrics.begin(), spec.metrics.end());
      if (spec.perScheme) {
        for (const char* scheme : {"pre_ln", "lns"}) {
          const QString name = spec.key + QLatin1Char(':') + QLatin1String(scheme);
          EXPECT_TRUE(d.plots().count(name)) << name.toStdString();
          ++expected;
        }
      } else {
        EXPECT_TRUE(d.plots().count(spec.key)) << spec.key.toStdString();
        ++expected;
      }
      // The export a panel offers is the figure built from the same builders.
      if (!spec.figure.isEmpty()) {
        EXPECT_NO_THROW(ui::requireFigure(spec.figure));
      }
      EXPECT_EQ(ui::GroupDashboard::figureForPanel(spec.key), spec.figure);
      // Every panel draws catalogued metrics.
      EXPECT_FALSE(spec.metrics.empty()) << spec.key.toStdString();
      for (const auto& k : spec.metrics) {
        EXPECT_TRUE(metrics::find(k.toStdString(), metrics::Kind::Scalar) ||
                    metrics::find(k.toStdString(), metrics::Kind::PerLayer) ||
                    metrics::find(k.toStdString(), metrics::Kind::Matrix))
            << k.toStdString();
      }
    }
  }
  EXPECT_EQ(d.plots().size(), expected);  // nothing built outside the table
  // Every metric the catalogue puts on the dashboard is drawn by a panel or the status line.
  for (const auto& k : ui::dashboard::statusLineMetrics()) drawn.insert(k);
  for (const auto& m : metrics::catalogue()) {
    if (!(m.panels & metrics::kDashboard)) continue;
    EXPECT_TRUE(drawn.count(QString::fromLatin1(m.key.data(), static_cast<int>(m.key.size()))))
        << std::string(m.key) << " is on the dashboard in the catalogue but no panel draws it";
  }
}

TEST(MetricViews, AProbeWithoutAPanelGetsAHeatmapPerScheme) {
  // block_influence is catalogued per layer but has no dashboard panel of its own.
  const auto panels = ui::dashboard::heatmapPanelsFor(
      {metrics::kBlockInfluence, metrics::kVariance}, {QString::fromLatin1(metrics::kVariance)});
  ASSERT_EQ(panels.size(), 1u);
  EXPECT_EQ(panels[0].key, QStringLiteral("block_influence_map"));
  EXPECT_EQ(panels[0].kind, ui::dashboard::PanelKind::LayerHeatmap);
  EXPECT_TRUE(panels[0].perScheme);
  EXPECT_EQ(panels[0].metrics, std::vector<QString>{QStringLiteral("block_influence")});
  EXPECT_EQ(panels[0].title, QStringLiteral("Block Influence"));
  EXPECT_THROW(ui::dashboard::heatmapPanelsFor({"no_such_metric"}, {}), std::invalid_argument);
}
