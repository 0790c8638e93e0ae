// See study_figures.h.
#include "export/study_figures.h"

#include <qcustomplot.h>

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSvgGenerator>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "experiment/experiment_config.h"
#include "export/figure_csv.h"
#include "export/paper_layout.h"
#include "plot/colormaps.h"

namespace depthlab::ui {

const QStringList kStudyFigureNames = {QStringLiteral("study-loss"),
                                       QStringLiteral("study-variance"),
                                       QStringLiteral("study-pruning")};

namespace {

using analysis::StudyRow;

// A scheme's marker and line: its colour everywhere (colormaps), a marker and, past the
// palette's colours, a dashed line, so that a dozen schemes stay apart in black and white too.
struct SchemeLook {
  QColor colour;
  QCPScatterStyle::ScatterShape shape;
  Qt::PenStyle line;
};

SchemeLook lookOf(const std::string& scheme, const FigureStyle& s) {
  static const QCPScatterStyle::ScatterShape shapes[] = {
      QCPScatterStyle::ssCircle,           QCPScatterStyle::ssSquare,
      QCPScatterStyle::ssTriangle,         QCPScatterStyle::ssDiamond,
      QCPScatterStyle::ssTriangleInverted, QCPScatterStyle::ssCrossSquare,
      QCPScatterStyle::ssPlusCircle};
  const auto& known = experiment::kSchemes;
  const auto at =
      static_cast<size_t>(std::find(known.begin(), known.end(), scheme) - known.begin());
  const size_t colours = std::max<size_t>(1, paletteColors(s.palette).size());
  return {schemeColor(QString::fromStdString(scheme), s.palette), shapes[at % std::size(shapes)],
          at >= colours && at < known.size() ? Qt::DashLine : Qt::SolidLine};
}

QString nameOf(const StudyRow& r, const FigureStyle& s) {
  return schemeDisplayName(s, QString::fromStdString(r.scheme));
}

// The value of a dot drawn at the frame because it lies far past the axis: written to its left.
void offRangeLabel(QCustomPlot* plot, double x, double y, double value, const FigureStyle& s) {
  auto* text = new QCPItemText(plot);
  text->position->setAxes(plot->xAxis, plot->yAxis);
  text->position->setCoords(x, y);
  text->setPositionAlignment(Qt::AlignRight | Qt::AlignVCenter);
  text->setPadding(QMargins(0, 0, static_cast<int>(std::lround(s.fontPt)), 0));
  text->setText(QStringLiteral("%1 \u2192").arg(value, 0, 'g', 3));
  text->setClipToAxisRect(false);
}

// A dot per scheme at its mean, ranked top to bottom, the seeds' min-max as a bar; the scheme
// names are the vertical axis's labels.
void buildRanked(QCustomPlot* plot, const analysis::DepthStudy& st, bool loss, const FigureStyle& s,
                 FigureCsv& csv, QStringList& warnings) {
  csv.header = {QStringLiteral("rank"), QStringLiteral("scheme"), QStringLiteral("mean"),
                QStringLiteral("min"),  QStringLiteral("max"),    QStringLiteral("runs")};
  std::vector<const StudyRow*> rows;
  for (const auto& r : st.rows) {
    const bool has = loss ? r.lossRank > 0 : r.depthRank > 0;
    if (has) {
      rows.push_back(&r);
    } else {
      warnings << QStringLiteral("%1 has no %2 (left out)")
                      .arg(nameOf(r, s), loss ? QStringLiteral("validation loss")
                                              : QStringLiteral("pruning probe"));
    }
  }
  std::sort(rows.begin(), rows.end(), [loss](const StudyRow* a, const StudyRow* b) {
    return loss ? a->lossRank < b->lossRank : a->depthRank < b->depthRank;
  });
  // One scheme far beyond the others (a diverged loss, a single scheme whose deep layers
  // matter) would squash them onto one point: the axis ends past the others, and that scheme's
  // dot sits at the frame with its value written beside it.
  const int n = static_cast<int>(rows.size());
  auto valueOf = [loss](const StudyRow* r) -> const analysis::Summary& {
    return loss ? *r->lossVal : *r->pruneDeepQuarter;
  };
  double lo = INFINITY, hi = -INFINITY, top = -INFINITY;
  const StudyRow* outlier = nullptr;
  for (const auto* r : rows) {
    if (valueOf(r).max > top) top = valueOf(r).max, outlier = r;
  }
  for (const auto* r : rows) {
    if (r == outlier) continue;
    lo = std::min(lo, valueOf(r).min);
    hi = std::max(hi, valueOf(r).max);
  }
  if (!loss) lo = std::min(lo, 0.0);  // a pruning loss is read against zero (removal is free)
  const bool clip = n >= 3 && hi > lo && top - hi > 4 * (hi - lo);
  if (!clip && n > 0) lo = std::min(lo, valueOf(outlier).min), hi = std::max(hi, top);
  const double pad = std::max((hi - lo) * 0.08, 1e-6 * std::max(1.0, std::abs(hi)));
  auto ticker = QSharedPointer<QCPAxisTickerText>::create();
  for (int i = 0; i < n; ++i) {
    const auto& r = *rows[static_cast<size_t>(i)];
    const auto& v = valueOf(&r);
    const double y = n - i;  // rank 1 at the top
    ticker->addTick(y, nameOf(r, s));
    csv.integer(loss ? r.lossRank : r.depthRank)
        .text(r.scheme.c_str())
        .value(v.mean)
        .value(v.min)
        .value(v.max)
        .integer(v.n)
        .endRow();
    const auto look = lookOf(r.scheme, s);
    const bool off = clip && &r == outlier;
    auto* g = plot->addGraph(plot->yAxis, plot->xAxis);  // key vertical, value horizontal
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(QCPScatterStyle(look.shape, look.colour, look.colour, 4 + s.lineWidth));
    g->setData({y}, {off ? hi + pad : v.mean});
    g->removeFromLegend();
    if (off) {
      offRangeLabel(plot, hi + pad, y, v.mean, s);
    } else if (v.n > 1) {
      auto* bars = new QCPErrorBars(plot->yAxis, plot->xAxis);
      bars->setDataPlottable(g);
      bars->setData({v.mean - v.min}, {v.max - v.mean});
      bars->setPen(QPen(look.colour, s.lineWidth));
      bars->removeFromLegend();
    }
  }
  plot->yAxis->setTicker(ticker);
  plot->yAxis->setRange(0.4, n + 0.6);
  plot->yAxis->grid()->setVisible(true);
  plot->legend->setVisible(false);
  if (n == 0) return;
  plot->xAxis->setRange(lo - pad, hi + pad * (clip ? 1.6 : 1.0));
  const bool band =
      std::any_of(rows.begin(), rows.end(), [&](const StudyRow* r) { return valueOf(r).n > 1; });
  plot->xAxis->setLabel(
      loss ? (band ? QStringLiteral("validation loss (bars: seeds' min-max)")
                   : QStringLiteral("validation loss"))
           : QStringLiteral("loss increase, one layer of the deepest quarter removed"));
}

// One line per scheme: its output variance at each layer (mean over its runs), a log axis when
// the schemes span more than a decade.
void buildVarianceProfiles(QCustomPlot* plot, const analysis::DepthStudy& st, const FigureStyle& s,
                           FigureCsv& csv, QStringList& warnings) {
  csv.header = {QStringLiteral("scheme"), QStringLiteral("layer"), QStringLiteral("variance")};
  double lo = INFINITY, hi = -INFINITY;
  int layers = 0;
  for (const auto& r : st.rows) {
    if (r.varianceProfile.empty()) {
      warnings << QStringLiteral("%1 has no variance probe (left out)").arg(nameOf(r, s));
      continue;
    }
    QVector<double> x, y;
    for (size_t l = 0; l < r.varianceProfile.size(); ++l) {
      const double v = r.varianceProfile[l];
      csv.text(r.scheme.c_str()).integer(static_cast<int64_t>(l) + 1).value(v).endRow();
      if (!std::isfinite(v) || v <= 0) continue;
      x << static_cast<double>(l + 1);
      y << v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    layers = std::max(layers, static_cast<int>(r.varianceProfile.size()));
    const auto look = lookOf(r.scheme, s);
    auto* g = plot->addGraph(plot->xAxis, plot->yAxis);
    g->setPen(QPen(look.colour, s.lineWidth, look.line));
    g->setScatterStyle(QCPScatterStyle(look.shape, look.colour, look.colour, 3 + s.lineWidth));
    g->setData(x, y, true);
    g->setName(nameOf(r, s));
  }
  plot->xAxis->setLabel(QStringLiteral("layer l"));
  plot->yAxis->setLabel(QStringLiteral("output variance"));
  plot->legend->setVisible(true);
  plot->xAxis->setRange(0.5, layers + 0.5);
  if (!(hi >= lo)) return;
  if (hi > 10 * lo) {
    plot->yAxis->setScaleType(QCPAxis::stLogarithmic);
    plot->yAxis->setTicker(QSharedPointer<QCPAxisTickerLog>::create());
    plot->yAxis->setRange(lo / 1.5, hi * 1.5);
  } else {
    const double pad = (hi - lo) * 0.08 + 1e-9;
    plot->yAxis->setRange(std::max(0.0, lo - pad), hi + pad);
  }
}

void writeBytes(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(bytes) != bytes.size()) {
    throw std::runtime_error("cannot write " + path.toStdString());
  }
}

void save(QCustomPlot& plot, const QString& path, const QString& format, const QSize& size,
          const FigureStyle& s, const QString& title) {
  bool ok = false;
  if (format == QLatin1String("pdf")) {
    ok = plot.savePdf(path, size.width(), size.height(), QCP::epNoCosmetic,
                      QStringLiteral("DepthLab"), title);
  } else if (format == QLatin1String("svg")) {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setResolution(72);
    svg.setTitle(title);
    QCPPainter painter;
    painter.begin(&svg);
    plot.toPainter(&painter, size.width(), size.height());
    ok = painter.end();
  } else if (format == QLatin1String("png")) {
    ok = plot.savePng(path, size.width(), size.height(), s.dpi / 72.0, -1,
                      static_cast<int>(std::lround(s.dpi)), QCP::ruDotsPerInch);
  } else {
    throw std::runtime_error("unknown format '" + format.toStdString() +
                             "' (known: pdf, svg, png)");
  }
  if (!ok) throw std::runtime_error("cannot write " + path.toStdString());
}

}  // namespace

QSize studyFigureSizePt(StudyFigure kind, int schemes, const FigureStyle& s) {
  const int w = static_cast<int>(std::lround(s.widthPt));
  if (s.heightPt > 0) return {w, static_cast<int>(std::lround(s.heightPt))};
  const double n = std::max(1, schemes);
  if (kind != StudyFigure::Variance) {  // a line per scheme name, plus the axis and its title
    return {w,
            static_cast<int>(std::lround(std::max(s.widthPt * 0.45, (n + 4.0) * 1.5 * s.fontPt)))};
  }
  // The key goes below the panel in rows of about one entry per 2.8 cm.
  const double perRow = std::max(1.0, std::floor(s.widthPt / 80.0));
  const double keyRows = std::ceil(n / perRow);
  return {w, static_cast<int>(std::lround(s.widthPt * 0.62 + (keyRows + 1) * 1.35 * s.fontPt))};
}

QStringList drawStudyFigure(QCustomPlot* plot, const analysis::DepthStudy& study, StudyFigure kind,
                            const FigureStyle& s, FigureCsv& csv) {
  QStringList warnings;
  if (kind == StudyFigure::Variance) {
    buildVarianceProfiles(plot, study, s, csv, warnings);
  } else {
    buildRanked(plot, study, kind == StudyFigure::Loss, s, csv, warnings);
  }
  paper::applyPaperStyle(plot, s);
  for (int i = 0; i < plot->itemCount(); ++i) {  // an off-range value: the figure's font
    if (auto* t = qobject_cast<QCPItemText*>(plot->item(i))) t->setFont(plot->font());
  }
  paper::fitToSize(plot, studyFigureSizePt(kind, static_cast<int>(study.rows.size()), s),
                   /*legendInPanel=*/kind == StudyFigure::Variance);
  return warnings;
}

ExportResult exportStudyFigures(store::RunStore& store, const std::vector<int64_t>& runs,
                                const QString& format, const QString& dir, const FigureStyle& s) {
  if (runs.empty()) throw std::runtime_error("no runs given");
  const auto study = analysis::makeDepthStudy(store, runs);
  if (study.rows.empty()) throw std::runtime_error("no trained run to study among the runs given");
  if (!QDir().mkpath(dir)) throw std::runtime_error("cannot create " + dir.toStdString());
  ExportResult result;
  for (int k = 0; k < kStudyFigureNames.size(); ++k) {
    QCustomPlot plot;
    FigureCsv csv;
    const auto kind = static_cast<StudyFigure>(k);
    const QStringList warnings = drawStudyFigure(&plot, study, kind, s, csv);
    for (const auto& w : warnings)
      result.warnings << kStudyFigureNames[k] + QStringLiteral(": ") + w;
    if (csv.empty()) continue;  // said in the warnings
    const QString base = QDir(dir).filePath(kStudyFigureNames[k]);
    save(plot, base + QLatin1Char('.') + format, format,
         studyFigureSizePt(kind, static_cast<int>(study.rows.size()), s), s, kStudyFigureNames[k]);
    writeBytes(base + QStringLiteral(".csv"), csv.bytes());
    result.files << base + QLatin1Char('.') + format << base + QStringLiteral(".csv");
  }
  if (result.files.isEmpty()) {
    throw std::runtime_error("nothing to plot: " +
                             result.warnings.join(QStringLiteral("; ")).toStdString());
  }
  auto j = analysis::studyJson(study);
  j["format"] = format.toStdString();
  j["app_version"] = DEPTHLAB_VERSION;
  j["database"] = store.path();
  j["style"] = nlohmann::json::parse(styleToJson(s).toStdString(), nullptr, false);
  j["run_ids"] = runs;
  const QString meta = QDir(dir).filePath(QStringLiteral("study.json"));
  writeBytes(meta, QByteArray::fromStdString(j.dump(2)));
  result.files << meta;
  return result;
}

}  // namespace depthlab::ui
