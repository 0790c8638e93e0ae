// The lab window, offscreen, against a temporary database: it follows runs written by another
// process, launches a run through the set-up panel exactly as a user does (a depthlab-cli
// process), rejects an invalid config naming the field, stops a run (stopped), survives a
// killed training process (crashed), and renders a dashboard with its panels.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QCheckBox>
#include <QDoubleSpinBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabWidget>
#include <QTest>
#include <QWheelEvent>

#include <cmath>
#include <csignal>
#include <set>

#include <nlohmann/json.hpp>

#include "dashboard/group_dashboard.h"
#include "experiment/config_fields.h"
#include "experiment/presets.h"
#include "experiment/resource_estimate.h"
#include "launch/run_launcher.h"
#include "main_window.h"
#include "plot/series_adapter.h"
#include "runs/runs_table_model.h"
#include "setup/setup_panel.h"
#include "store_poller.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

std::string writeCorpus(const test::TempDir& dir) {
  std::string text;
  const char* words[] = {"deep ", "layers ", "norm ", "scaling ", "curse ", "of ", "depth ", "\n"};
  for (size_t i = 0; text.size() < 80000; ++i) text += words[(i * 5 + i / 7) % 8];
  test::writeFile(dir.file("corpus.txt"), text);
  return dir.file("corpus.txt");
}

std::unique_ptr<ui::MainWindow> openWindow(const test::TempDir& dir) {
  auto w = std::make_unique<ui::MainWindow>(
      store::RunStore::open(dir.file("lab.db")),
      ui::MainWindowOptions{{},
                            {},
                            QString::fromStdString(depthlab::test::cliPath()),
                            QString::fromStdString(dir.file("window.ini"))});
  w->setClosePolicy(ui::MainWindow::ClosePolicy::StopRuns);
  w->show();
  return w;
}

// A config the set-up panel launches: tiny, on a generated corpus, `steps` long.
experiment::ExperimentConfig tinyConfig(const test::TempDir& dir, int steps) {
  auto c = *experiment::presetConfig("tiny");
  c.data.corpus = writeCorpus(dir);
  c.optim.steps = steps;
  c.optim.warmupSteps = 5;
  c.probes.forwardEvery = 5;
  c.probes.angularMatrixEvery = 10;
  c.probes.pruningEvery = 20;
  return c;
}

store::RunStatus statusOf(ui::MainWindow& w, int64_t id) {
  return w.poller()->store().run(id)->status;
}

int64_t firstRunId(ui::MainWindow& w) {
  auto runs = w.poller()->store().listRuns();
  return runs.empty() ? 0 : runs.front().id;
}

}  // namespace

TEST(MainWindow, FollowsRunsWrittenByAnotherConnection) {
  test::TempDir dir;
  auto w = openWindow(dir);
  EXPECT_EQ(w->runsModel()->rowCount(), 0);
  auto writer = store::RunStore::open(dir.file("lab.db"));
  store::NewRun nr;
  nr.name = "external pre_ln";
  nr.groupName = "external";
  nr.scheme = "pre_ln";
  int64_t id = writer.createRun(nr);
  writer.markRunning(id);
  store::WriteBatch b;
  for (int s = 0; s < 50; ++s) b.scalar(s, "loss_train", 5.0 - 0.01 * s);
  writer.write(id, b);
  QTRY_COMPARE_WITH_TIMEOUT(w->runsModel()->rowCount(), 1, 2000);
  auto* d = w->dashboard(QStringLiteral("external"), false);
  ASSERT_NE(d, nullptr) << "a running group opens its dashboard";
  QTRY_VERIFY_WITH_TIMEOUT(d->isLoaded(), 5000);  // read on the loader thread
  auto* loss = d->plots().at(QStringLiteral("loss"));
  QTRY_VERIFY_WITH_TIMEOUT(loss->graphCount() >= 1 && loss->graph(1)->dataCount() == 50, 2000);
  // A metric written now is on screen within the 0.5 s budget.
  b.clear();
  for (int s = 50; s < 80; ++s) b.scalar(s, "loss_train", 4.0);
  writer.write(id, b);
  QElapsedTimer t;
  t.start();
  QTRY_VERIFY_WITH_TIMEOUT(loss->graph(1)->dataCount() == 80, 2000);
  EXPECT_LT(t.elapsed(), 500);
}

TEST(MainWindow, SetupPanelRejectsAnInvalidConfigNamingTheField) {
  test::TempDir dir;
  auto w = openWindow(dir);
  auto* setup = w->setupPanel();
  EXPECT_TRUE(setup->launchEnabled());
  setup->setField(QStringLiteral("model.nHeads"), 5);  // 64 is not divisible by 5
  EXPECT_FALSE(setup->launchEnabled());
  auto issues = setup->issues();
  ASSERT_FALSE(issues.empty());
  EXPECT_EQ(issues.front().field, "model.nHeads");
  auto* label = setup->findChild<QLabel*>(QStringLiteral("issues"));
  ASSERT_NE(label, nullptr);
  EXPECT_TRUE(label->text().contains(QStringLiteral("Heads:")))
      << label->text().toStdString();  // the form's word
  setup->setField(QStringLiteral("model.nHeads"), 4);
  EXPECT_TRUE(setup->launchEnabled());
  setup->setSchemes({});
  setup->setField(QStringLiteral("model.nLayers"), 4);
  EXPECT_FALSE(setup->launchEnabled());
  EXPECT_FALSE(setup->estimateText().contains(QStringLiteral("params")));
  setup->setSchemes({"pre_ln", "lns"});
  EXPECT_TRUE(setup->estimateText().contains(QStringLiteral("params")));
}

TEST(MainWindow, ARunLaunchedFromTheSetupPanelReachesTheDashboard) {
  test::TempDir dir;
  auto w = openWindow(dir);
  w->setupPanel()->setConfig(tinyConfig(dir, 40));
  QSignalSpy finished(w->launcher(), &ui::RunLauncher::groupFinished);
  w->setupPanel()->findChild<QPushButton*>(QStringLiteral("launch"))->click();
  ASSERT_TRUE(finished.wait(60000)) << "the training process did not finish";
  EXPECT_EQ(finished.first().at(1).toInt(), 0) << finished.first().at(2).toString().toStdString();
  QTRY_COMPARE_WITH_TIMEOUT(w->runsModel()->rowCount(), 2, 3000);
  auto runs = w->poller()->store().listRuns();
  for (const auto& r : runs) EXPECT_EQ(r.status, store::RunStatus::Finished);
  auto* d = w->dashboard(QString::fromStdString(runs.front().groupName));
  ASSERT_NE(d, nullptr);
  QTRY_VERIFY_WITH_TIMEOUT(d->isLoaded(), 5000);
  EXPECT_EQ(qobject_cast<QTabWidget*>(w->centralWidget())->currentWidget(),
            d);  // Launch brought its tab forward
  EXPECT_TRUE(w->statusBar()->currentMessage().contains(QStringLiteral("finished")))
      << w->statusBar()->currentMessage().toStdString();
  QTRY_VERIFY_WITH_TIMEOUT(
      d->data().runs().size() == 2 && d->data().runs()[0].info.status == store::RunStatus::Finished,
      3000);
  d->redraw();
  for (const char* name :
       {"loss", "variance:pre_ln", "variance:lns", "variance_map:lns", "angular_map:pre_ln",
        "angular_ln:lns", "prune_map:lns", "prune_bars", "effectiveness", "grad_norm"}) {
    ASSERT_TRUE(d->plots().count(QString::fromLatin1(name))) << name;
    EXPECT_GT(d->plots().at(QString::fromLatin1(name))->plottableCount(), 0) << name;
  }
  EXPECT_EQ(d->plots().at(QStringLiteral("variance:lns"))->graphCount(), 4);  // one per layer
}

TEST(MainWindow, StoppingARunMarksItStopped) {
  test::TempDir dir;
  auto w = openWindow(dir);
  w->launcher()->enqueue(tinyConfig(dir, 1000000), 1);
  QTRY_VERIFY_WITH_TIMEOUT(
      firstRunId(*w) != 0 && statusOf(*w, firstRunId(*w)) == store::RunStatus::Running, 20000);
  const int64_t id = firstRunId(*w);
  QTRY_VERIFY_WITH_TIMEOUT(w->poller()->store().scalarSeries(id, "loss_train").size() > 5, 20000);
  QSignalSpy finished(w->launcher(), &ui::RunLauncher::groupFinished);
  for (const auto& r : w->poller()->store().listRuns()) w->stopRun(r.id);
  ASSERT_TRUE(finished.wait(30000));
  QTRY_COMPARE_WITH_TIMEOUT(statusOf(*w, id), store::RunStatus::Stopped, 5000);
  EXPECT_FALSE(w->poller()->store().checkpoints(id).empty());
  // The status bar says what became of the group: stopped, not "finished".
  EXPECT_TRUE(w->statusBar()->currentMessage().contains(QStringLiteral("stopped")))
      << w->statusBar()->currentMessage().toStdString();
  EXPECT_FALSE(w->statusBar()->currentMessage().contains(QStringLiteral("finished")));
}

TEST(MainWindow, AKilledTrainingProcessShowsCrashedAndTheWindowStaysUp) {
  test::TempDir dir;
  auto w = openWindow(dir);
  w->launcher()->enqueue(tinyConfig(dir, 1000000), 1);
  QTRY_VERIFY_WITH_TIMEOUT(
      firstRunId(*w) != 0 && statusOf(*w, firstRunId(*w)) == store::RunStatus::Running, 20000);
  const int64_t id = firstRunId(*w);
  const qint64 pid = w->launcher()->runningPid();
  ASSERT_GT(pid, 0);
  ::kill(static_cast<pid_t>(pid), SIGKILL);
  QTRY_COMPARE_WITH_TIMEOUT(statusOf(*w, id), store::RunStatus::Crashed, 15000);
  int row = w->runsModel()->rowOfRun(id);
  QTRY_COMPARE_WITH_TIMEOUT(
      w->runsModel()
          ->data(w->runsModel()->index(row, ui::RunsTableModel::Status), Qt::DisplayRole)
          .toString(),
      QStringLiteral("crashed"), 5000);
  EXPECT_TRUE(w->isVisible());
}

TEST(MainWindow, CloneLoadsARunsConfigIntoTheSetupPanel) {
  test::TempDir dir;
  auto w = openWindow(dir);
  auto writer = store::RunStore::open(dir.file("lab.db"));
  auto c = *experiment::presetConfig("cpu-demo");
  c.model.nLayers = 12;
  c.schemes = {"mix_ln"};
  store::NewRun nr;
  nr.name = "old";
  nr.groupName = "g";
  nr.scheme = "mix_ln";
  nr.configJson = experiment::toJson(c).dump();
  int64_t id = writer.createRun(nr);
  w->poller()->poll();
  w->cloneRun(id);
  EXPECT_EQ(w->setupPanel()->config().model.nLayers, 12);
  EXPECT_EQ(w->setupPanel()->config().schemes, std::vector<std::string>{"mix_ln"});
}

TEST(MainWindow, ZoomingInRedecimatesForTheView) {
  test::TempDir dir;
  {
    auto s = store::RunStore::open(dir.file("lab.db"));
    store::NewRun nr;
    nr.name = "long";
    nr.groupName = "long";
    nr.scheme = "lns";
    nr.configJson = R"({"optim":{"steps":20000},"model":{"nLayers":2}})";
    int64_t id = s.createRun(nr);
    store::WriteBatch b;
    for (int step = 0; step < 20000; ++step)
      b.scalar(step, "loss_train", 3.0 + std::sin(step * 0.01));
    s.write(id, b);
    s.finishRun(id, store::RunStatus::Finished);
  }
  auto w = openWindow(dir);
  auto* d = w->dashboard(QStringLiteral("long"));
  ASSERT_NE(d, nullptr);
  QTRY_VERIFY_WITH_TIMEOUT(d->isLoaded() && !d->loading(), 5000);
  d->redraw();
  auto* loss = d->plots().at(QStringLiteral("loss"));
  auto pointsIn = [&](double lo, double hi) {
    int n = 0;
    for (int g = 0; g < loss->graphCount(); ++g) {
      for (auto it = loss->graph(g)->data()->constBegin(); it != loss->graph(g)->data()->constEnd();
           ++it) {
        n += it->key >= lo && it->key <= hi;
      }
    }
    return n;
  };
  const int before = pointsIn(1000, 1100);
  EXPECT_TRUE(d->decimationNote().contains(QStringLiteral("of 20000 points")));
  // The user zooms to steps 1000-1100 (Ctrl+wheel): the view is rebuilt from the full data.
  QWheelEvent wheel(QPointF(100, 100), loss->mapToGlobal(QPoint(100, 100)), QPoint(),
                    QPoint(0, 120), Qt::NoButton, Qt::ControlModifier, Qt::NoScrollPhase,
                    false);  // Ctrl: zoom
  QApplication::sendEvent(loss, &wheel);
  loss->xAxis->setRange(1000, 1100);
  QTRY_VERIFY_WITH_TIMEOUT(pointsIn(1000, 1100) >= 2 * 100, 2000);  // every raw + smoothed point
  EXPECT_GT(pointsIn(1000, 1100), before);
}

TEST(MainWindow, DecimationKeepsSpikes) {
  std::vector<store::ScalarPoint> pts;
  for (int i = 0; i < 20000; ++i) pts.push_back({i, i == 12345 ? 100.0 : 1.0});
  auto d = ui::decimateMinMax(pts, 0, 19999, 500);
  EXPECT_TRUE(d.decimated());
  EXPECT_LE(d.keys.size(), 2000);
  EXPECT_EQ(d.sourcePoints, 20000);
  EXPECT_NE(std::find(d.values.begin(), d.values.end(), 100.0), d.values.end());
}

TEST(MainWindow, ASweepLaunchesOnePairedGroupPerGridPoint) {
  test::TempDir dir;
  auto w = openWindow(dir);
  auto c = tinyConfig(dir, 6);
  c.name = "sw";
  w->setupPanel()->setConfig(c);
  w->setupPanel()->setSweep(QStringLiteral("2, 3"), QString(), QString());
  EXPECT_TRUE(w->setupPanel()->estimateText().contains(QStringLiteral("2 paired group")));
  auto groups = w->setupPanel()->groups();
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[1].model.nLayers, 3);
  // Each group's own size, not the 6-layer form's, which neither group has.
  const QString estimate = w->setupPanel()->estimateText();
  for (const auto& g : groups) {
    const auto e = experiment::estimateRun(g, g.schemes.front());
    EXPECT_TRUE(estimate.contains(QStringLiteral("%1: %2M params")
                                      .arg(QString::fromStdString(g.name))
                                      .arg(static_cast<double>(e.params) / 1e6, 0, 'f', 2)))
        << estimate.toStdString();
  }
  for (const auto& s : c.schemes)
    EXPECT_FALSE(estimate.contains(QString::fromStdString(s + ": "))) << estimate.toStdString();
  w->setupPanel()->setSweep(QStringLiteral("2, x"), QString(), QString());
  EXPECT_FALSE(w->setupPanel()->launchEnabled());
  EXPECT_EQ(w->setupPanel()->issues().size(), 0u);  // the config itself is fine...
  auto* label = w->setupPanel()->findChild<QLabel*>(QStringLiteral("issues"));
  EXPECT_TRUE(label->text().contains(QStringLiteral("Depths")))
      << label->text().toStdString();  // ...the sweep is not
  w->setupPanel()->setSweep(QStringLiteral("2, 3"), QString(), QString());
  QSignalSpy finished(w->launcher(), &ui::RunLauncher::groupFinished);
  w->setupPanel()->findChild<QPushButton*>(QStringLiteral("launch"))->click();
  QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 60000);
  QTRY_COMPARE_WITH_TIMEOUT(w->runsModel()->rowCount(), 4, 3000);
  std::set<std::string> names;
  for (const auto& r : w->poller()->store().listRuns()) names.insert(r.groupName);
  EXPECT_EQ(names, (std::set<std::string>{"sw-L2", "sw-L3"}));
}

TEST(MainWindow, DashboardRendersToAPngWithItsPanels) {
  test::TempDir dir;
  {
    // A known run group written straight to the store: 2 schemes x 6 layers x 300 steps.
    auto s = store::RunStore::open(dir.file("lab.db"));
    for (const char* scheme : {"pre_ln", "lns"}) {
      store::NewRun nr;
      nr.name = scheme;
      nr.groupName = "known";
      nr.scheme = scheme;
      nr.configJson = R"({"optim":{"steps":300},"model":{"nLayers":6}})";
      int64_t id = s.createRun(nr);
      store::WriteBatch b;
      const double k = std::string(scheme) == "lns" ? 0.2 : 1.0;
      for (int step = 0; step < 300; ++step) {
        b.scalar(step, "loss_train", 5.0 * std::exp(-step / 80.0) + 1.0);
        if (step % 25 == 0) {
          std::vector<float> v(6), a(6), m(36, NAN);
          for (int l = 0; l < 6; ++l) {
            v[l] = static_cast<float>(k * (l + 1) * step / 30.0);
            a[l] = 0.1f * (6 - l);
          }
          for (int l = 0; l < 6; ++l)
            for (int n = 1; l + n <= 6; ++n) m[l * 6 + n - 1] = 0.05f * n;
          b.layer(step, "variance", v);
          b.layer(step, "angular_adjacent", a);
          b.layer(step, "prune_delta", a);
          b.layer(step, "effectiveness", a);
          b.matrix(step, "angular", 6, 6, m);
        }
      }
      b.matrix(299, "block_prune", 6, 6, std::vector<float>(36, 0.5f));
      s.write(id, b);
      s.finishRun(id, store::RunStatus::Finished);
    }
  }
  auto w = openWindow(dir);
  auto* d = w->dashboard(QStringLiteral("known"));
  ASSERT_NE(d, nullptr);
  QTRY_VERIFY_WITH_TIMEOUT(d->isLoaded() && !d->loading(), 5000);
  d->resize(1400, 2400);
  QApplication::processEvents();
  d->redraw();
  const QString png = QString::fromStdString(dir.file("dashboard.png"));
  ASSERT_TRUE(d->grab().save(png));
  QImage img(png);
  ASSERT_FALSE(img.isNull());
  EXPECT_GE(img.width(), 1000);
  // Non-empty: many distinct colours (curves, heatmaps), not a blank widget.
  std::set<QRgb> colours;
  for (int y = 0; y < img.height(); y += 7) {
    for (int x = 0; x < img.width(); x += 7) colours.insert(img.pixel(x, y));
  }
  EXPECT_GT(colours.size(), 50u);
  for (const char* name : {"loss", "lr", "variance:pre_ln", "variance:lns", "variance_map:pre_ln",
                           "angular_map:lns", "angular_ln:pre_ln", "prune_map:pre_ln",
                           "block_prune:lns", "prune_bars", "effectiveness", "grad_norm"}) {
    ASSERT_TRUE(d->plots().count(QString::fromLatin1(name))) << name;
  }
  EXPECT_EQ(d->plots().at(QStringLiteral("variance:pre_ln"))->graphCount(), 6);
  // One colour scale across schemes for the variance heatmaps.
  auto range = [&](const char* name) {
    auto* p = d->plots().at(QString::fromLatin1(name));
    for (int i = 0; i < p->plottableCount(); ++i) {
      if (auto* m = qobject_cast<QCPColorMap*>(p->plottable(i))) return m->dataRange();
    }
    return QCPRange();
  };
  EXPECT_EQ(range("variance_map:pre_ln"), range("variance_map:lns"));
  EXPECT_GT(range("variance_map:lns").upper, 5.0);
}

TEST(SetupPanel, CheckpointCadenceAndKeepRoundTrip) {
  ui::SetupPanel panel;
  auto c = *experiment::presetConfig("cpu-demo");
  c.run.checkpointMinutes = 2.5;
  c.run.checkpointKeep = 7;
  panel.setConfig(c);
  EXPECT_DOUBLE_EQ(panel.config().run.checkpointMinutes, 2.5);
  EXPECT_EQ(panel.config().run.checkpointKeep, 7);
  auto* minutes = panel.findChild<QDoubleSpinBox*>(QStringLiteral("run.checkpointMinutes"));
  ASSERT_NE(minutes, nullptr);
  minutes->setValue(0);  // only at the end
  EXPECT_DOUBLE_EQ(panel.config().run.checkpointMinutes, 0.0);
}

TEST(SetupPanel, LabelsAndTooltipsComeFromTheConfigFieldTable) {
  ui::SetupPanel panel;
  int described = 0;
  for (const auto& f : experiment::configFields()) {
    auto* editor = panel.findChild<QWidget*>(QString::fromStdString(f.path()));
    if (!editor) continue;  // not every field is on the form
    ++described;
    EXPECT_EQ(editor->toolTip(), QString::fromUtf8(f.help)) << f.path();
    if (auto* box = qobject_cast<QCheckBox*>(editor)) {
      EXPECT_EQ(box->text(), QString::fromUtf8(f.label)) << f.path();
    }
  }
  EXPECT_GE(described, 20);  // the model, training, data and probe rows
}
