// See plot_theme.h.
#include "plot/plot_theme.h"

#include <qcustomplot.h>

namespace depthlab::ui {

namespace {

// A colour drawn for a light background: black or a dark grey.
bool nearBlack(const QColor& c) { return c.lightness() < 80; }

// `c` in the palette's text colour when it is near black (its alpha kept).
QColor readable(const QColor& c, const QColor& text) {
  if (!nearBlack(c)) return c;
  QColor out = text;
  out.setAlpha(c.alpha());
  return out;
}

QPen readable(QPen pen, const QColor& text) {
  pen.setColor(readable(pen.color(), text));
  return pen;
}

void recolourAxis(QCPAxis* a, const QColor& text, const QColor& grid) {
  a->setBasePen(readable(a->basePen(), text));
  a->setTickPen(readable(a->tickPen(), text));
  a->setSubTickPen(readable(a->subTickPen(), text));
  a->setLabelColor(readable(a->labelColor(), text));
  a->setTickLabelColor(readable(a->tickLabelColor(), text));
  QPen g = a->grid()->pen();
  if (g.color().lightness() > 150) {  // QCustomPlot's light grey grid: dim on a dark base
    g.setColor(grid);
    a->grid()->setPen(g);
  }
  QPen z = a->grid()->zeroLinePen();
  if (z.color().lightness() > 150) {
    z.setColor(grid);
    a->grid()->setZeroLinePen(z);
  }
}

void recolourLayout(QCPLayoutGrid* grid, const QColor& base, const QColor& text,
                    const QColor& gridColour) {
  for (int i = 0; i < grid->elementCount(); ++i) {
    QCPLayoutElement* e = grid->elementAt(i);
    if (!e) continue;
    if (auto* rect = qobject_cast<QCPAxisRect*>(e)) {
      for (QCPAxis* a : rect->axes()) recolourAxis(a, text, gridColour);
      if (rect->insetLayout()) {
        for (int k = 0; k < rect->insetLayout()->elementCount(); ++k) {
          if (auto* legend = qobject_cast<QCPLegend*>(rect->insetLayout()->elementAt(k))) {
            legend->setBrush(base);
            legend->setBorderPen(readable(legend->borderPen(), text));
            legend->setTextColor(readable(legend->textColor(), text));
          }
        }
      }
    } else if (auto* title = qobject_cast<QCPTextElement*>(e)) {
      title->setTextColor(readable(title->textColor(), text));
    } else if (auto* legend = qobject_cast<QCPLegend*>(e)) {
      legend->setBrush(base);
      legend->setTextColor(readable(legend->textColor(), text));
    } else if (auto* sub = qobject_cast<QCPLayoutGrid*>(e)) {
      recolourLayout(sub, base, text, gridColour);
    } else if (auto* scale = qobject_cast<QCPColorScale*>(e)) {
      recolourAxis(scale->axis(), text, gridColour);
    }
  }
}

}  // namespace

bool paletteIsDark(const QPalette& palette) {
  return palette.color(QPalette::Window).lightness() < 128;
}

void applyDarkPalette(QCustomPlot* plot, const QPalette& palette) {
  if (!paletteIsDark(palette)) return;
  const QColor base = palette.color(QPalette::Base);
  const QColor text = palette.color(QPalette::Text);
  QColor grid = text;
  grid.setAlpha(60);
  plot->setBackground(base);
  recolourLayout(plot->plotLayout(), base, text, grid);
  for (int i = 0; i < plot->itemCount(); ++i) {
    QCPAbstractItem* item = plot->item(i);
    if (auto* t = qobject_cast<QCPItemText*>(item)) {
      t->setColor(readable(t->color(), text));
      if (t->brush().style() != Qt::NoBrush && t->brush().color().lightness() > 200) {
        QColor b = base;
        b.setAlpha(t->brush().color().alpha());
        t->setBrush(b);  // a white plate behind a value label
      }
    } else if (auto* l = qobject_cast<QCPItemLine*>(item)) {
      l->setPen(readable(l->pen(), text));
    } else if (auto* s = qobject_cast<QCPItemStraightLine*>(item)) {
      s->setPen(readable(s->pen(), text));
    }
  }
  for (int i = 0; i < plot->plottableCount(); ++i) {
    if (auto* bars = qobject_cast<QCPErrorBars*>(plot->plottable(i))) {
      bars->setPen(readable(bars->pen(), text));
    }
  }
}

QString mutedTextStyle(const QPalette& palette) {
  const QColor c = palette.color(QPalette::WindowText);
  return QStringLiteral("color: rgba(%1, %2, %3, 0.65);").arg(c.red()).arg(c.green()).arg(c.blue());
}

QPalette darkFusionPalette() {
  QPalette p;
  const QColor window(45, 45, 48), base(30, 30, 32), text(220, 220, 220), button(53, 53, 56);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, window);
  p.setColor(QPalette::ToolTipBase, base);
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, QColor(140, 140, 140));
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, button);
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, QColor(255, 90, 90));
  p.setColor(QPalette::Link, QColor(90, 160, 240));
  p.setColor(QPalette::Highlight, QColor(60, 120, 200));
  p.setColor(QPalette::HighlightedText, Qt::white);
  p.setColor(QPalette::Light, QColor(75, 75, 78));
  p.setColor(QPalette::Midlight, QColor(62, 62, 65));
  p.setColor(QPalette::Mid, QColor(90, 90, 94));
  p.setColor(QPalette::Dark, QColor(25, 25, 27));
  p.setColor(QPalette::Shadow, Qt::black);
  p.setColor(QPalette::Disabled, QPalette::Text, QColor(120, 120, 120));
  p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(120, 120, 120));
  p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(120, 120, 120));
  return p;
}

}  // namespace depthlab::ui
