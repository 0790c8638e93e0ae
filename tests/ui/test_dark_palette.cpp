// The window follows a dark palette: the dashboard's plots take its base as their background
// and its text colour for axes and tick labels, scheme colours stay, and secondary text reads
// on it. A light palette leaves a plot's own colours as they are.
#include <gtest/gtest.h>

#include <QApplication>
#include <QLabel>
#include <QTest>

#include "daily_use_fixtures.h"
#include "dashboard/group_dashboard.h"
#include "plot/live_plot.h"
#include "plot/plot_theme.h"

using namespace depthlab;

namespace {

// Restores the application's palette when a test ends.
struct PaletteScope {
  QPalette saved = QApplication::palette();
  explicit PaletteScope(const QPalette& p) { QApplication::setPalette(p); }
  ~PaletteScope() { QApplication::setPalette(saved); }
};

}  // namespace

TEST(DarkPalette, TheDashboardsPlotsTakeTheDarkPalettesColours) {
  PaletteScope dark(ui::darkFusionPalette());
  ASSERT_TRUE(ui::paletteIsDark(QApplication::palette()));
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("v.db"));
  test::addFakeRun(s, test::FakeRun{"g", "pre_ln", 1});
  test::addFakeRun(s, test::FakeRun{"g", "lns", 1});
  ui::GroupDashboard d(QStringLiteral("g"));
  d.resize(1400, 900);
  d.show();
  d.refresh(s, {});
  const QColor base = QApplication::palette().color(QPalette::Base);
  const auto plots = d.findChildren<ui::LivePlot*>();
  ASSERT_FALSE(plots.empty());
  int checked = 0;
  for (auto* p : plots) {
    p->replot();
    EXPECT_EQ(p->bufferClearColour(), base);
    for (auto* rect : p->axisRects()) {
      for (auto* a : rect->axes()) {
        EXPECT_GT(a->tickLabelColor().lightness(), 150) << p->objectName().toStdString();
        EXPECT_GT(a->basePen().color().lightness(), 150);
        ++checked;
      }
    }
    for (int i = 0; i < p->graphCount(); ++i) {  // scheme colours are not text colours
      EXPECT_NE(p->graph(i)->pen().color().rgb(), QApplication::palette().color(QPalette::Text).rgb());
    }
  }
  EXPECT_GT(checked, 8);
  // Secondary text: the palette's text, not a dark grey meant for a white window.
  EXPECT_TRUE(ui::mutedTextStyle(QApplication::palette()).contains(QStringLiteral("220, 220, 220")));
}

TEST(DarkPalette, ALightPaletteLeavesAPlotsOwnColours) {
  QPalette light;
  light.setColor(QPalette::Window, QColor(239, 239, 239));
  ui::LivePlot p;
  p.xAxis->setTickLabelColor(QColor(10, 10, 10));
  p.setBackground(QColor(250, 250, 250));
  ui::applyDarkPalette(&p, light);
  EXPECT_EQ(p.xAxis->tickLabelColor(), QColor(10, 10, 10));
  EXPECT_EQ(p.bufferClearColour(), QColor(250, 250, 250));
  ui::applyDarkPalette(&p, ui::darkFusionPalette());
  EXPECT_GT(p.xAxis->tickLabelColor().lightness(), 150);
}
