// Every scheme of the catalogue has a colour of its own, far enough from every other scheme's to
// tell apart on a plot (DyT + LNS had taken Pre-LN's blue, darkened).
#include <gtest/gtest.h>

#include "experiment/experiment_config.h"
#include "plot/colormaps.h"

using namespace depthlab;

TEST(SchemeColours, EverySchemeOfTheCatalogueStandsApartFromEveryOther) {
  const auto& schemes = experiment::kSchemes;
  ASSERT_GE(schemes.size(), 13u);
  for (size_t i = 0; i < schemes.size(); ++i) {
    for (size_t j = i + 1; j < schemes.size(); ++j) {
      const QColor a = ui::schemeColor(QString::fromStdString(schemes[i]));
      const QColor b = ui::schemeColor(QString::fromStdString(schemes[j]));
      EXPECT_GT(ui::colourDistance(a, b), ui::kDistinctColours)
          << schemes[i] << " " << a.name().toStdString() << " vs " << schemes[j] << " " << b.name().toStdString();
    }
  }
  // The paper's pair keeps the palette's first two colours.
  EXPECT_EQ(ui::schemeColor(QStringLiteral("pre_ln")), QColor(0, 114, 178));
  EXPECT_EQ(ui::schemeColor(QStringLiteral("lns")), QColor(213, 94, 0));
}
