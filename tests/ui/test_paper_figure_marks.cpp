// Paper figures at 6, 8.5 and 17 cm put no label on another mark: the values written for bars
// run off the range, the loss figure's notes and the legend inside a panel each clear every
// bar, error bar, marker and line, and each other; a legend below lies whole on the figure. The
// boxes are measured here from the drawn plot (not with the layout's own geometry,
// export/figure_marks.h). Runs whose layer 1 bars run off the range while layer 2's reach the top,
// as real runs do ("2.27" had lain on layer 2).
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <cmath>
#include <string>
#include <vector>

#include "daily_use_fixtures.h"
#include "export/figure_catalogue.h"
#include "export/figure_export.h"
#include "store/metric_catalogue.h"

using namespace depthlab;

namespace {

// Pre-LN and LNS, seeds 1 and 2, with pruning at step 160 as a trained model's (layer 1 costs
// nats, layer 2 most of the rest (12 layers), standard errors on every bar) and validation every 20
// steps.
std::vector<int64_t> realisticRuns(store::RunStore& s) {
  std::vector<int64_t> ids;
  for (int seed : {1, 2}) {
    for (const char* scheme : {"pre_ln", "lns"}) {
      test::FakeRun f{"s" + std::to_string(seed), scheme, seed};
      f.layers = 12;  // layer 1's bars: a twelfth of all, few enough to run off the range
      const int64_t id = test::addFakeRun(s, f);
      const bool lns = std::string(scheme) == "lns";
      store::WriteBatch b;
      std::vector<float> prune = {lns ? 1.91f : 2.27f, 0.16f}, errors = {0.06f, 0.03f};
      for (int l = 2; l < f.layers; ++l) {
        prune.push_back(0.15f - 0.012f * static_cast<float>(l));
        errors.push_back(0.015f);
      }
      b.layer(160, metrics::kPruneDelta, prune);
      b.layer(160, metrics::kPruneDeltaError, errors);
      for (int step = 20; step < 200; step += 20) {
        b.scalar(step, metrics::kLossVal, 4.1 - step * 0.01 + (lns ? -0.02 : 0.0));
      }
      s.write(id, b);
      ids.push_back(id);
    }
  }
  return ids;
}

struct Box {
  QRectF r;
  std::string what;
};

// Bars, error bars, graph lines (as points 1 px apart) and markers, inside their panels.
std::vector<Box> marksOf(QCustomPlot* plot) {
  std::vector<Box> out;
  for (int i = 0; i < plot->plottableCount(); ++i) {
    auto* p = plot->plottable(i);
    if (!p->visible() || !p->keyAxis()) continue;
    const QRectF clip(p->keyAxis()->axisRect()->rect());
    auto* kx = p->keyAxis();
    auto* vy = p->valueAxis();
    auto add = [&](QRectF r, const std::string& what) {
      r = r.normalized() & clip;
      if (!r.isEmpty()) out.push_back({r, what + " " + p->name().toStdString()});
    };
    if (auto* b = qobject_cast<QCPBars*>(p)) {
      for (auto it = b->data()->constBegin(); it != b->data()->constEnd(); ++it) {
        add(QRectF(
                QPointF(kx->coordToPixel(it->key - b->width() / 2), vy->coordToPixel(0)),
                QPointF(kx->coordToPixel(it->key + b->width() / 2), vy->coordToPixel(it->value))),
            "bar");
      }
    } else if (auto* e = qobject_cast<QCPErrorBars*>(p)) {
      const auto* d = e->dataPlottable()->interface1D();
      for (int k = 0; k < e->dataCount(); ++k) {
        const double x = kx->coordToPixel(d->dataMainKey(k)), v = d->dataMainValue(k);
        add(QRectF(QPointF(x - 0.5, vy->coordToPixel(v - e->data()->at(k).errorMinus)),
                   QPointF(x + 0.5, vy->coordToPixel(v + e->data()->at(k).errorPlus))),
            "error bar");
      }
    } else if (auto* g = qobject_cast<QCPGraph*>(p)) {
      QPointF last;
      bool have = false;
      const double m = g->scatterStyle().isNone() ? 0 : g->scatterStyle().size() / 2;
      for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it) {
        const QPointF px(kx->coordToPixel(it->key), vy->coordToPixel(it->value));
        if (m > 0) add(QRectF(px, px).adjusted(-m, -m, m, m), "marker");
        if (have && g->pen().style() != Qt::NoPen) {
          const int n = std::max(1, static_cast<int>(QLineF(last, px).length()));
          for (int k = 0; k <= n; ++k) {
            const QPointF q = last + (px - last) * (static_cast<double>(k) / n);
            add(QRectF(q, q).adjusted(-0.5, -0.5, 0.5, 0.5), "line");
          }
        }
        last = px;
        have = true;
      }
    }
  }
  return out;
}

// Text items and the legend when it sits inside a panel.
std::vector<Box> labelsOf(QCustomPlot* plot) {
  std::vector<Box> out;
  for (int i = 0; i < plot->itemCount(); ++i) {
    auto* t = qobject_cast<QCPItemText*>(plot->item(i));
    if (!t || !t->visible() || t->text().isEmpty()) continue;
    const QMargins pad = t->padding();  // values stacked at a frame are moved by their padding
    out.push_back({QRectF(t->topLeft->pixelPosition(), t->bottomRight->pixelPosition())
                       .normalized()
                       .adjusted(pad.left(), pad.top(), -pad.right(), -pad.bottom()),
                   "label '" + t->text().toStdString() + "'"});
  }
  if (plot->legend && plot->legend->visible()) {
    for (auto* rect : plot->axisRects()) {
      if (plot->legend->layout() == rect->insetLayout())
        out.push_back({QRectF(plot->legend->outerRect()), "legend"});
    }
  }
  return out;
}

// "label 'X' on bar Y; ..." for every label over a mark or another label ("" when none).
std::string labelsOnMarks(QCustomPlot* plot) {
  std::string out;
  const auto labels = labelsOf(plot);
  const auto marks = marksOf(plot);
  for (size_t i = 0; i < labels.size(); ++i) {
    const QRectF box = labels[i].r.adjusted(0.5, 0.5, -0.5, -0.5);
    int hits = 0;
    for (const auto& m : marks) {
      if (box.intersects(m.r) && hits++ < 2) out += labels[i].what + " on " + m.what + "; ";
    }
    for (size_t j = i + 1; j < labels.size(); ++j) {
      if (box.intersects(labels[j].r)) out += labels[i].what + " on " + labels[j].what + "; ";
    }
  }
  return out;
}

}  // namespace

TEST(PaperFigureMarks, NoLabelLiesOnAnotherMarkAt6And85And17Cm) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("m.db"));
  const auto ids = realisticRuns(s);
  for (const char* width : {"6cm", "8.5cm", "17cm"}) {
    for (const auto& figure : ui::figureIds()) {
      SCOPED_TRACE(std::string(width) + " " + figure.toStdString());
      ui::ExportRequest req;
      req.runs = ids;
      req.figure = figure;
      req.style.widthPt = ui::parseLengthToPoints(QString::fromLatin1(width));
      req.style.schemeNames[QStringLiteral("lns")] = QStringLiteral("LNS (ours)");  // long names
      req.style.smoothing = 0.6;  // the loss key's longest entry
      QCustomPlot plot;
      ui::drawFigure(&plot, s, req);
      EXPECT_EQ(labelsOnMarks(&plot), "");
      if (plot.legend && plot.legend->visible()) {  // the legend whole on the figure
        EXPECT_TRUE(plot.rect().contains(plot.legend->outerRect()))
            << plot.legend->outerRect().bottom();
      }
    }
  }
}

TEST(PaperFigureMarks, TheOffScaleValuesAreStillWrittenAndTheirBarsStillRunOff) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("m.db"));
  const auto ids = realisticRuns(s);
  ui::ExportRequest req;
  req.runs = ids;
  req.figure = QStringLiteral("pruning");
  QCustomPlot plot;
  ui::drawFigure(&plot, s, req);
  QStringList values;
  for (int i = 0; i < plot.itemCount(); ++i) {
    if (auto* t = qobject_cast<QCPItemText*>(plot.item(i))) values << t->text();
  }
  EXPECT_TRUE(values.contains(QStringLiteral("2.27")))
      << values.join(QLatin1Char('|')).toStdString();
  EXPECT_TRUE(values.contains(QStringLiteral("1.91")));
  EXPECT_LT(plot.yAxis->range().upper, 1.0);   // layer 1's bars run off; the others are readable
  EXPECT_GT(plot.yAxis->range().upper, 0.19);  // layer 2's bar and error bar stay in view
}
