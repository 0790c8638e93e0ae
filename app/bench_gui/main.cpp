// depthlab-bench-gui: the GUI benchmark behind `depthlab-cli bench gui` (a separate binary so
// the CLI stays free of Qt). Offscreen, it loads a synthetic run group of 2 runs x 24 layers x
// 20,000 steps with every dashboard metric, then reports the full-dashboard replot time
// (median, 90th percentile, worst) and the metric-to-screen latency of new rows written by
// another connection. DEPTHLAB_BENCH_GUI_SCREENSHOT=file.png saves the dashboard as measured.
#include <qcustomplot.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QProcess>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <thread>

#include <unistd.h>

#include "compare/compare_profiles.h"
#include "compare/compare_view.h"
#include "dashboard/group_dashboard.h"
#include "export/figure_export.h"
#include "store/metric_catalogue.h"
#include "store/run_store.h"
#include "util/remove_tree.h"

using namespace depthlab;

namespace {

void writeSyntheticRun(store::RunStore& s, const std::string& scheme, int layers, int steps) {
  store::NewRun nr;
  nr.name = "bench " + scheme;
  nr.groupName = "bench";
  nr.scheme = scheme;
  nr.configJson = R"({"optim":{"steps":)" + std::to_string(steps) +
                  R"(,"batchSize":16,"gradAccum":1},"model":{"nLayers":)" + std::to_string(layers) +
                  R"(,"seqLen":64}})";
  int64_t id = s.createRun(nr);
  std::mt19937 rng(scheme == "lns" ? 2 : 1);
  std::normal_distribution<float> noise(0, 0.02f);
  store::WriteBatch b;
  std::vector<float> v(static_cast<size_t>(layers));
  for (int step = 0; step < steps; ++step) {
    const double t = static_cast<double>(step) / steps;
    b.scalar(step, metrics::kLossTrain, 5.5 * std::exp(-3 * t) + 1.5 + noise(rng));
    b.scalar(step, metrics::kLr, 1e-3 * std::min(1.0, step / 1000.0));
    b.scalar(step, metrics::kTokensPerSecond, 6000 + 100 * noise(rng));
    if (step % 100 == 0) b.scalar(step, metrics::kLossVal, 5.5 * std::exp(-3 * t) + 1.6);
    for (const auto& metric : metrics::keysFor(metrics::Kind::PerLayer, metrics::kDashboard)) {
      for (int l = 0; l < layers; ++l) v[static_cast<size_t>(l)] = static_cast<float>((1 + l) * t) + noise(rng);
      b.layer(step, metric, v);
    }
    if (step % 100 == 0) {
      std::vector<float> m(static_cast<size_t>(layers * layers), NAN);
      for (int l = 0; l < layers; ++l)
        for (int n = 1; l + n <= layers; ++n) m[static_cast<size_t>(l * layers + n - 1)] = 0.1f * n;
      b.matrix(step, metrics::kAngular, layers, layers, m);
    }
    if (step % 500 == 499) {
      s.write(id, b);
      b.clear();
    }
  }
  s.write(id, b);
  s.markRunning(id);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs the posted events as the window's event loop would between polls: queued replots, then
// the paints they ask for; nested layouts settle over more rounds.
void drainEvents(int rounds = 3) {
  for (int i = 0; i < rounds; ++i) QApplication::processEvents();
}

// The value at fraction q of the sorted samples (nearest rank).
double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

// The dashboard over 2 synthetic runs: first load, replot and rebuild times, and the latency
// from another connection's write to the screen.
void benchDashboard(int layers, int steps) {
  const std::string path = "/tmp/depthlab-bench-gui-" + std::to_string(getpid()) + ".db";
  QElapsedTimer timer;
  timer.start();
  {
    auto s = store::RunStore::open(path);
    writeSyntheticRun(s, "pre_ln", layers, steps);
    writeSyntheticRun(s, "lns", layers, steps);
  }
  const double writeSeconds = timer.elapsed() / 1000.0;
  auto store = store::RunStore::open(path);
  ui::GroupDashboard dash(QStringLiteral("bench"));
  dash.resize(1500, 950);
  dash.show();
  timer.restart();
  dash.refresh(store, {});
  const double firstLoadMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
  // Lay the dashboard out as the window shows it (panels at full size in the scroll area, most
  // of them below the fold): nested layouts settle over a few rounds of posted events, and one
  // round left the panels squeezed over one another in 1,500 x 950.
  drainEvents(10);
  if (const char* shot = std::getenv("DEPTHLAB_BENCH_GUI_SCREENSHOT"))
    dash.grab().save(QString::fromLocal8Bit(shot));

  // Full-dashboard replot: redraw from the snapshot and repaint every plot.
  // Two numbers: the replot proper (every panel repainted from its plot data, what a zoom,
  // pan or cursor move costs) and the rebuild (decimating the stored series into plot data,
  // done when new rows arrive). 120 rounds over ~5 s rather than 25 in one: this machine's
  // speed drifts over seconds (see docs/performance.md, bench gui).
  constexpr int kRounds = 120;
  std::vector<double> replot, rebuild;
  std::map<QString, std::vector<double>> perPanel;  // each panel's own replot times
  QElapsedTimer span;
  span.start();
  for (int i = 0; i < kRounds; ++i) {
    QElapsedTimer t;
    t.start();
    dash.redraw();
    rebuild.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
    t.restart();
    for (auto& [name, p] : dash.plots()) {
      QElapsedTimer one;
      one.start();
      p->replot(QCustomPlot::rpImmediateRefresh);
      perPanel[name].push_back(static_cast<double>(one.nsecsElapsed()) / 1e6);
    }
    replot.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
  }
  const double replotSpanSeconds = static_cast<double>(span.elapsed()) / 1000.0;
  // What the window does when rows arrive: the dashboard redraws and asks its panels to replot;
  // those in view replot and paint, the others when they are scrolled to (or grabbed).
  std::vector<double> inView;
  drainEvents();  // the queued replots the rounds above left (each replotted its panels itself)
  for (int i = 0; i < 40; ++i) {
    dash.redraw();
    QElapsedTimer t;
    t.start();
    drainEvents();
    inView.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
  }
  int shown = 0;
  for (auto& [name, p] : dash.plots()) shown += !p->visibleRegion().isEmpty();
  std::vector<std::pair<double, QString>> slowest;
  for (const auto& [name, times] : perPanel) slowest.emplace_back(median(times), name);
  std::sort(slowest.rbegin(), slowest.rend());
  // Metric-to-screen latency: another connection writes a step; the GUI polls every 200 ms
  // (as the lab window does), reloads incrementally and replots.
  std::vector<double> latency, pollWork;
  auto writer = store::RunStore::open(path);
  const int64_t runId = 1;
  int64_t seen = store.changeCounter();
  for (int i = 0; i < 10; ++i) {
    const int step = steps + i;
    store::WriteBatch b;
    b.scalar(step, metrics::kLossTrain, 1.0);
    b.layer(step, metrics::kVariance, std::vector<float>(layers, 1.0f));
    QElapsedTimer t;
    t.start();
    writer.write(runId, b);
    auto* loss = dash.plots().at(QStringLiteral("loss"));
    bool shown = false;
    while (!shown && t.elapsed() < 3000) {
      QThread::msleep(200);  // the poll interval
      QElapsedTimer w;
      w.start();
      const int64_t now = store.changeCounter();
      if (now != seen) {
        dash.refresh(store, store.runsChangedSince(seen));
        seen = now;
        drainEvents();  // the panels in view replot and paint, as in the window
      }
      pollWork.push_back(static_cast<double>(w.nsecsElapsed()) / 1e6);
      for (int g = 0; g < loss->graphCount(); ++g) {
        auto d = loss->graph(g)->data();
        if (!d->isEmpty() && (d->constEnd() - 1)->key >= step) shown = true;
      }
    }
    latency.push_back(static_cast<double>(t.nsecsElapsed()) / 1e6);
  }
  std::printf("bench gui: 2 runs x %d layers x %d steps, all dashboard metrics (offscreen, %zu plots)\n",
              layers, steps, dash.plots().size());
  std::printf("  synthetic store written in %.1f s; first load of the dashboard %.0f ms\n", writeSeconds, firstLoadMs);
  std::printf(
      "  full-dashboard replot (%zu rounds over %.1f s): median %.1f ms, 90th percentile %.1f ms, "
      "worst %.1f ms (targets <= 16 / <= 33 ms: a frame at 60 / 30 Hz) %s\n",
      replot.size(), replotSpanSeconds, median(replot), percentile(replot, 0.9),
      *std::max_element(replot.begin(), replot.end()),
      median(replot) <= 16 && *std::max_element(replot.begin(), replot.end()) <= 33 ? "ok"
                                                                                    : "MISSED");
  std::printf("  slowest panels (median replot):");
  for (size_t i = 0; i < std::min<size_t>(5, slowest.size()); ++i) {
    std::printf(" %s %.1f ms%s", slowest[i].second.toLocal8Bit().constData(), slowest[i].first,
                i + 1 < std::min<size_t>(5, slowest.size()) ? "," : "\n");
  }
  std::printf(
      "  replot of the panels in view after a redraw (%d of %zu in view at 1500 x 950; the others "
      "replot when scrolled to): median %.1f ms, worst %.1f ms\n",
      shown, dash.plots().size(), median(inView), *std::max_element(inView.begin(), inView.end()));
  std::printf("  rebuild of all plot data from the stored series: median %.1f ms, worst %.1f ms\n",
              median(rebuild), *std::max_element(rebuild.begin(), rebuild.end()));
  std::printf("  metric-to-screen latency: median %.0f ms, worst %.0f ms (target <= 500 ms) %s\n",
              median(latency), *std::max_element(latency.begin(), latency.end()),
              *std::max_element(latency.begin(), latency.end()) <= 500 ? "ok" : "MISSED");
  std::printf("  GUI-thread work per poll with new data: worst %.1f ms (event-loop stall budget 100 ms)\n",
              *std::max_element(pollWork.begin(), pollWork.end()));
  std::printf("  %s\n", dash.decimationNote().toLocal8Bit().constData());
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(path + suffix);
}

// Compare over 8 synthetic runs (first frame), and the paper figure set for a pair, in process
// and through the headless CLI.
void benchCompareAndExport(int layers, int steps) {
  QElapsedTimer timer;
  // Comparison of 8 runs (24 layers x 20,000 steps each): time to the first frame.
  const std::string cpath = "/tmp/depthlab-bench-compare-" + std::to_string(getpid()) + ".db";
  {
    auto s = store::RunStore::open(cpath);
    for (int i = 0; i < 8; ++i) writeSyntheticRun(s, i % 2 ? "lns" : "pre_ln", layers, steps);
  }
  auto cstore = store::RunStore::open(cpath);
  timer.restart();
  {
    ui::CompareView view(cstore, {1, 2, 3, 4, 5, 6, 7, 8});
    view.resize(1500, 950);
    view.show();
    for (auto& [name, p] : view.plots()) p->replot(QCustomPlot::rpImmediateRefresh);
    QApplication::processEvents();
    const double compareMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    std::printf("  comparison of 8 runs (24 layers x %d steps): first frame in %.0f ms (target <= 500 ms) %s\n",
                steps, compareMs, compareMs <= 500 ? "ok" : "MISSED");
  }
  // Of that, the variance rows Compare reads (its heatmaps' columns), against reading every row.
  {
    timer.restart();
    size_t sampledRows = 0, allRows = 0;
    for (int64_t id = 1; id <= 8; ++id) {
      sampledRows += cstore.layerSeriesSampled(id, metrics::kVariance, ui::compare::kHeatmapColumns).steps.size();
    }
    const double sampledMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    timer.restart();
    for (int64_t id = 1; id <= 8; ++id) allRows += cstore.layerSeries(id, metrics::kVariance).steps.size();
    const double allMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    std::printf("  Compare's variance reads: %zu rows in %.1f ms (every row: %zu in %.1f ms)\n",
                sampledRows, sampledMs, allRows, allMs);
  }
  // The paper figure set for a pair, as `depthlab-cli export --figure set` makes it.
  const std::string outDir = "/tmp/depthlab-bench-figures-" + std::to_string(getpid());
  timer.restart();
  auto exported = ui::exportFigureSet(cstore, {1, 2}, QStringLiteral("pdf"), QString::fromStdString(outDir), ui::FigureStyle{});
  const double exportMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
  std::printf("  figure set for a pair (%lld files, PDF): %.0f ms in process\n",
              static_cast<long long>(exported.files.size()), exportMs);
  depthlab::util::removeTree(outDir);
  // The same through the headless CLI, process start included.
  QProcess cli;
  timer.restart();
  cli.start(QCoreApplication::applicationDirPath() + QStringLiteral("/depthlab-cli"),
            {QStringLiteral("--db"), QString::fromStdString(cpath), QStringLiteral("export"), QStringLiteral("--runs"),
             QStringLiteral("1,2"), QStringLiteral("--figure"), QStringLiteral("set"), QStringLiteral("--format"),
             QStringLiteral("pdf"), QStringLiteral("--width"), QStringLiteral("8.5cm"), QStringLiteral("--out"),
             QString::fromStdString(outDir)});
  const bool finished = cli.waitForFinished(60000);
  const double cliMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
  std::printf("  depthlab-cli export --figure set for a pair: %.0f ms end to end, exit %d (target <= 1500 ms) %s\n",
              cliMs, finished ? cli.exitCode() : -1, finished && cli.exitCode() == 0 && cliMs <= 1500 ? "ok" : "MISSED");
  depthlab::util::removeTree(outDir);
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(cpath + suffix);
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  const int layers = 24, steps = 20000;
  benchDashboard(layers, steps);
  benchCompareAndExport(layers, steps);
  return 0;
}
