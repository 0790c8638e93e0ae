// Figure export from a fixed stored run: a valid vector PDF with embedded fonts and the axis
// labels, an SVG with paths, a PNG of exactly the pixel size the physical size and DPI imply,
// and a CSV equal to the stored values. Runs of different depths and missing metrics export
// what exists and say what is missing.
#include <gtest/gtest.h>

#include <QFile>
#include <QImage>
#include <QXmlStreamReader>

#include <cmath>
#include <iterator>
#include <set>
#include <sstream>

#include "experiment/experiment_config.h"
#include "export/figure_export.h"
#include "plot/colormaps.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

// Two runs (pre_ln, lns) with variance, angular, pruning and losses; a third, 3-layer run
// with losses only.
std::string makeStore(const test::TempDir& dir) {
  auto path = dir.file("fig.db");
  auto s = store::RunStore::open(path);
  for (const char* scheme : {"pre_ln", "lns"}) {
    store::NewRun nr;
    nr.name = scheme;
    nr.groupName = "g";
    nr.scheme = scheme;
    nr.configJson = R"({"model":{"nLayers":4}})";
    int64_t id = s.createRun(nr);
    store::WriteBatch b;
    for (int step = 0; step <= 100; ++step) {
      b.scalar(step, "loss_train", 4.0 - step * 0.01);
      if (step % 50 == 0) {
        b.scalar(step, "loss_val", 4.1 - step * 0.01);
        std::vector<float> v = {0.5f + step, 1.0f + step, 1.5f + step, 2.25f + step};
        b.layer(step, "variance", v);
        b.layer(step, "prune_delta", {0.4f, 0.3f, 0.2f, 0.125f});
        std::vector<float> m(16, NAN);
        for (int l = 0; l < 4; ++l)
          for (int n = 1; l + n <= 4; ++n) m[l * 4 + n - 1] = 0.1f * n + 0.01f * l;
        b.matrix(step, "angular", 4, 4, m);
      }
    }
    s.write(id, b);
  }
  store::NewRun other;
  other.name = "shallow";
  other.scheme = "post_ln";
  int64_t id = s.createRun(other);
  store::WriteBatch b;
  b.scalar(0, "loss_train", 5.0);
  s.write(id, b);
  return path;
}

std::string run(const std::string& cmd) {
  std::string out;
  test::runCommand(cmd, &out);
  return out;
}

}  // namespace

TEST(FigureExport, PdfIsVectorWithEmbeddedFontsAndLabels) {
  test::TempDir dir;
  auto db = makeStore(dir);
  auto store = store::RunStore::open(db, store::RunStore::Mode::ReadOnly);
  ui::ExportRequest req;
  req.runs = {1, 2};
  req.figure = QStringLiteral("variance");
  req.path = QString::fromStdString(dir.file("out/variance.pdf"));
  auto r = ui::exportFigure(store, req);
  ASSERT_EQ(r.files.size(), 3);
  const std::string pdf = test::readFile(dir.file("out/variance.pdf"));
  ASSERT_EQ(pdf.rfind("%PDF-", 0), 0u);
  if (test::runCommand("command -v pdffonts >/dev/null") != 0)
    GTEST_SKIP() << "poppler-utils not installed";
  // Vector content: the only raster image is the layer colour bar's gradient strip (a few
  // pixels across), and line-drawing operators are present.
  const auto images = run("pdfimages -list " + dir.file("out/variance.pdf"));
  EXPECT_LE(std::count(images.begin(), images.end(), '\n'), 3) << images;
  {
    std::istringstream rows(images);
    std::string row;
    int n = 0;
    while (std::getline(rows, row)) {
      if (++n <= 2 || row.empty()) continue;  // the header
      std::istringstream f(row);
      std::string page, num, type;
      int width = 0, height = 0;
      f >> page >> num >> type >> width >> height;
      EXPECT_LE(std::min(width, height), 8)
          << "a raster image that is not a colour-bar strip: " << row;
    }
  }
  const auto fonts = run("pdffonts " + dir.file("out/variance.pdf"));
  EXPECT_NE(fonts.find("LMRoman"), std::string::npos) << fonts;  // Latin Modern, as asked
  // Every font embedded: the `emb` column (5th from the end) says yes on each font line.
  std::istringstream lines(fonts);
  std::string line;
  int fontLines = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("name", 0) == 0 || line.rfind("---", 0) == 0 || line.empty()) continue;
    std::istringstream words(line);
    std::vector<std::string> w{std::istream_iterator<std::string>(words), {}};
    ASSERT_GE(w.size(), 6u) << line;
    EXPECT_EQ(w[w.size() - 5], "yes") << line;
    ++fontLines;
  }
  EXPECT_GE(fontLines, 1);
  const auto text = run("pdftotext " + dir.file("out/variance.pdf") + " -");
  for (const char* label : {"output variance", "step", "pre_ln", "lns"}) {
    EXPECT_NE(text.find(label), std::string::npos) << label << " in:\n" << text;
  }
}

TEST(FigureExport, SvgHasPathsAndPngHasTheImpliedPixelSize) {
  test::TempDir dir;
  auto store = store::RunStore::open(makeStore(dir), store::RunStore::Mode::ReadOnly);
  ui::ExportRequest req;
  req.runs = {1, 2};
  req.figure = QStringLiteral("loss");
  req.format = QStringLiteral("svg");
  req.path = QString::fromStdString(dir.file("loss.svg"));
  ui::exportFigure(store, req);
  QFile f(req.path);
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  QXmlStreamReader xml(&f);
  int paths = 0;
  while (!xml.atEnd()) {
    xml.readNext();
    // Curves and axes as vector primitives (Qt writes polylines as <polyline>, fills as <path>).
    if (xml.isStartElement() &&
        (xml.name() == QLatin1String("path") || xml.name() == QLatin1String("polyline")))
      ++paths;
  }
  EXPECT_FALSE(xml.hasError()) << xml.errorString().toStdString();
  EXPECT_GT(paths, 4);

  req.format = QStringLiteral("png");
  req.figure = QStringLiteral("pruning");
  req.path = QString::fromStdString(dir.file("pruning.png"));
  req.style.widthPt = ui::parseLengthToPoints(QStringLiteral("8.5cm"));
  req.style.heightPt = ui::parseLengthToPoints(QStringLiteral("2in"));
  req.style.dpi = 300;
  ui::exportFigure(store, req);
  QImage img(req.path);
  EXPECT_EQ(img.width(), static_cast<int>(std::lround(std::lround(8.5 / 2.54 * 72) * 300 / 72.0)));
  EXPECT_EQ(img.height(), 600);  // 2 in at 300 dpi
}

TEST(FigureExport, CsvHoldsExactlyTheStoredValues) {
  test::TempDir dir;
  auto store = store::RunStore::open(makeStore(dir), store::RunStore::Mode::ReadOnly);
  ui::ExportRequest req;
  req.runs = {2};
  req.figure = QStringLiteral("variance");
  req.path = QString::fromStdString(dir.file("v.pdf"));
  ui::exportFigure(store, req);
  QFile f(QString::fromStdString(dir.file("v.csv")));
  ASSERT_TRUE(f.open(QIODevice::ReadOnly));
  auto lines = QString::fromUtf8(f.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  ASSERT_EQ(lines.front(), QStringLiteral("run,layer,step,variance"));
  auto series = store.layerSeries(2, "variance");
  ASSERT_EQ(lines.size() - 1, static_cast<int>(series.values.size()));
  for (int i = 1; i < lines.size(); ++i) {
    auto c = lines[i].split(QLatin1Char(','));
    const int layer = c[1].toInt(), step = c[2].toInt();
    const size_t k = static_cast<size_t>(std::find(series.steps.begin(), series.steps.end(), step) -
                                         series.steps.begin());
    EXPECT_EQ(c[3].toFloat(), series.values[k * 4 + static_cast<size_t>(layer - 1)])
        << lines[i].toStdString();
  }
  QFile meta(QString::fromStdString(dir.file("v.json")));
  ASSERT_TRUE(meta.open(QIODevice::ReadOnly));
  const QString json = QString::fromUtf8(meta.readAll());
  EXPECT_TRUE(json.contains(QStringLiteral("app_version")));
  EXPECT_TRUE(json.contains(QStringLiteral("\"nLayers\": 4")));
  EXPECT_TRUE(json.contains(QStringLiteral("Latin Modern Roman")));
}

TEST(FigureExport, MissingMetricsAndOtherDepthsAreReportedNotFatal) {
  test::TempDir dir;
  auto store = store::RunStore::open(makeStore(dir), store::RunStore::Mode::ReadOnly);
  auto r = ui::exportFigureSet(store, {1, 3}, QStringLiteral("svg"),
                               QString::fromStdString(dir.file("set")), ui::FigureStyle{});
  EXPECT_EQ(r.files.size(), 12);  // four figures x (svg, csv, json)
  EXPECT_TRUE(r.warnings.join(QLatin1Char(' ')).contains(QStringLiteral("run 3 has no variance")));
  ui::ExportRequest req;
  req.runs = {3};
  req.figure = QStringLiteral("angular");
  req.path = QString::fromStdString(dir.file("a.pdf"));
  EXPECT_THROW(ui::exportFigure(store, req), std::runtime_error);
  req.runs = {99};
  EXPECT_THROW(ui::exportFigure(store, req), std::runtime_error);
  EXPECT_THROW(ui::parseLengthToPoints(QStringLiteral("wide")), std::invalid_argument);
  EXPECT_NEAR(ui::parseLengthToPoints(QStringLiteral("8.5cm")), 240.94, 0.01);
}

TEST(FigureExport, HeadlessCliExport) {
  test::TempDir dir;
  auto db = makeStore(dir);
  std::string out;
  int rc = test::runCommand(
      "env -u DISPLAY -u QT_QPA_PLATFORM " + depthlab::test::cliPath() + " --db " + db +
          " export --runs 1,2 --figure set --format png --width 8.5cm --dpi 100 --out " +
          dir.file("headless"),
      &out);
  ASSERT_EQ(rc, 0) << out;
  for (const char* f :
       {"loss.png", "variance.png", "angular.png", "pruning.png", "variance.csv", "angular.json"}) {
    EXPECT_TRUE(QFile::exists(QString::fromStdString(dir.file(std::string("headless/") + f)))) << f;
  }
}

TEST(FigureExport, EverySchemeHasOneColourInEveryView) {
  // Dashboard, comparison and exports all call schemeColor: one distinct colour per scheme.
  std::set<QRgb> seen;
  for (const auto& s : experiment::kSchemes) {
    const QColor c = ui::schemeColor(QString::fromStdString(s));
    EXPECT_TRUE(seen.insert(c.rgb()).second) << s;
    EXPECT_EQ(ui::schemeColor(QString::fromStdString(s), QStringLiteral("okabe-ito")), c);
  }
  EXPECT_NE(ui::schemeColor(QStringLiteral("lns"), QStringLiteral("tol-bright")),
            ui::schemeColor(QStringLiteral("lns")));
}
