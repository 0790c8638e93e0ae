// Daily use of the set-up panel, the window and the runs browser (issue: launches merge, the
// wheel edits the set-up, validation misses the disk, feedback and discoverability): unique
// group names, launches in the table from the moment they are queued with their phase, the
// wheel that scrolls, changed fields marked, pre-flight checks as you type, menus, shortcuts
// and tooltips, a window that remembers, delete that lists, a table that stays put, numeric
// filters, resume.
#include <gtest/gtest.h>

#include <qcustomplot.h>

#include <QAbstractButton>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QProgressBar>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QWheelEvent>

#include <filesystem>
#include <fstream>

#include "daily_use_fixtures.h"
#include "dashboard/group_dashboard.h"
#include "experiment/run_config.h"
#include "main_window.h"
#include "runs/runs_browser.h"
#include "runs/runs_table_model.h"
#include "setup/setup_panel.h"
#include "store_poller.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

std::unique_ptr<ui::MainWindow> openWindow(const test::TempDir& dir, const QString& cli = QString()) {
  auto w = std::make_unique<ui::MainWindow>(
      store::RunStore::open(dir.file("lab.db")),
      ui::MainWindowOptions{{}, {}, cli, QString::fromStdString(dir.file("window.ini"))});
  w->setClosePolicy(ui::MainWindow::ClosePolicy::KeepRunning);
  w->show();
  return w;
}

// The run ids in the order the runs table shows them.
std::vector<int64_t> shownOrder(ui::MainWindow& w) {
  auto* view = w.findChild<QTableView*>(QStringLiteral("runsView"));
  std::vector<int64_t> ids;
  for (int r = 0; r < view->model()->rowCount(); ++r) {
    ids.push_back(view->model()->index(r, ui::RunsTableModel::Id).data(Qt::EditRole).toLongLong());
  }
  return ids;
}

}  // namespace

TEST(DailyUse, EveryLaunchGetsAGroupNameNobodyUses) {
  test::TempDir dir;
  {
    auto s = store::RunStore::open(dir.file("lab.db"));
    test::addFakeRun(s, {"cpu-demo 1", "pre_ln"});
    test::addFakeRun(s, {"cpu-demo 1", "lns"});
  }
  // A fake depthlab-cli: reports a phase, then takes its time.
  const std::string cli = dir.file("fake-cli.sh");
  test::writeFile(cli, "#!/bin/sh\necho 'phase     0.2 s  reading corpus /data/kjv.txt'\nsleep 3\n");
  std::filesystem::permissions(cli, std::filesystem::perms::owner_all);
  auto w = openWindow(dir, QString::fromStdString(cli));
  auto* setup = w->setupPanel();
  EXPECT_EQ(setup->groupName(), QStringLiteral("cpu-demo 2"));
  // A name in use is refused, naming the field.
  setup->setGroupName(QStringLiteral("cpu-demo 1"));
  EXPECT_FALSE(setup->launchEnabled());
  ASSERT_FALSE(setup->issues().empty());
  EXPECT_EQ(setup->issues().front().field, "name");
  setup->setGroupName(QStringLiteral("depth study"));
  EXPECT_TRUE(setup->launchEnabled());
  setup->setGroupName(QString());  // back to the automatic name
  EXPECT_EQ(setup->groupName(), QStringLiteral("cpu-demo 2"));
  setup->launch();
  // The launch is in the runs table at once, one row per scheme, and the next name moves on.
  auto* m = w->runsModel();
  ASSERT_EQ(m->rowCount(), 4);
  int pending = 0;
  for (int r = 0; r < m->rowCount(); ++r) {
    if (m->runAt(r)->id > 0) continue;
    ++pending;
    EXPECT_EQ(m->runAt(r)->groupName, "cpu-demo 2");
  }
  EXPECT_EQ(pending, 2);
  EXPECT_EQ(setup->groupName(), QStringLiteral("cpu-demo 3"));
  // Its process's phase shows in the Status column.
  auto statusOfPending = [&] {
    for (int r = 0; r < m->rowCount(); ++r) {
      if (m->runAt(r)->id <= 0) return m->index(r, ui::RunsTableModel::Status).data().toString();
    }
    return QString();
  };
  QTRY_VERIFY_WITH_TIMEOUT(statusOfPending().contains(QStringLiteral("reading corpus /data/kjv.txt")), 3000);
  EXPECT_TRUE(statusOfPending().startsWith(QStringLiteral("starting")));
}

TEST(DailyUse, TheWheelScrollsTheSetupInsteadOfEditingIt) {
  ui::SetupPanel p;
  p.resize(420, 500);
  p.show();
  auto* lr = p.findChild<QDoubleSpinBox*>(QStringLiteral("optim.lr"));
  ASSERT_NE(lr, nullptr);
  auto* scroll = p.findChild<QScrollArea*>();
  ASSERT_NE(scroll, nullptr);
  const double before = lr->value();
  const int scrolledBefore = scroll->verticalScrollBar()->value();
  ASSERT_FALSE(lr->hasFocus());
  QWheelEvent wheel(QPointF(5, 5), lr->mapToGlobal(QPoint(5, 5)), QPoint(), QPoint(0, -120), Qt::NoButton,
                    Qt::NoModifier, Qt::NoScrollPhase, false);
  QApplication::sendEvent(lr, &wheel);
  EXPECT_EQ(lr->value(), before);  // not edited
  EXPECT_GT(scroll->verticalScrollBar()->value(), scrolledBefore);  // the panel scrolled
  EXPECT_EQ(lr->focusPolicy(), Qt::StrongFocus);
  auto* device = p.findChild<QComboBox*>(QStringLiteral("run.device"));
  ASSERT_NE(device, nullptr);
  const int index = device->currentIndex();
  QApplication::sendEvent(device, &wheel);
  EXPECT_EQ(device->currentIndex(), index);
}

TEST(DailyUse, ValuesChangedFromThePresetAreMarked) {
  ui::SetupPanel p;
  EXPECT_TRUE(p.changedFromPreset().isEmpty()) << p.changedFromPreset().join(QLatin1Char(',')).toStdString();
  auto* lr = p.findChild<QDoubleSpinBox*>(QStringLiteral("optim.lr"));
  EXPECT_FALSE(lr->font().bold());
  p.setField(QStringLiteral("optim.lr"), 0.0054);
  EXPECT_EQ(p.changedFromPreset(), QStringList{QStringLiteral("optim.lr")});
  EXPECT_TRUE(lr->font().bold());
  EXPECT_TRUE(lr->toolTip().contains(QStringLiteral("changed from the preset cpu-demo")));
  p.setSchemes({"pre_ln", "lns", "mix_ln"});
  EXPECT_TRUE(p.changedFromPreset().contains(QStringLiteral("scheme.mix_ln")));
  p.setField(QStringLiteral("optim.lr"), 0.006);
  EXPECT_FALSE(p.changedFromPreset().contains(QStringLiteral("optim.lr")));
  EXPECT_FALSE(lr->font().bold());
  EXPECT_FALSE(lr->toolTip().contains(QStringLiteral("changed from the preset")));
}

TEST(DailyUse, CorpusAndTokenizerPathsAreCheckedAsYouType) {
  test::TempDir dir;
  ui::SetupPanel p;
  auto* corpus = p.findChild<QLineEdit*>(QStringLiteral("data.corpus"));
  ASSERT_NE(corpus, nullptr);
  EXPECT_TRUE(p.launchEnabled());
  corpus->setText(QString::fromStdString(dir.file("no-such-corpus.txt")));
  EXPECT_FALSE(p.launchEnabled());
  ASSERT_FALSE(p.issues().empty());
  EXPECT_EQ(p.issues().front().field, "data.corpus");
  EXPECT_NE(p.issues().front().message.find("does not exist"), std::string::npos);
  EXPECT_TRUE(corpus->styleSheet().contains(QStringLiteral("#c0392b")));  // the field is framed red
  test::writeFile(dir.file("empty.txt"), "");
  corpus->setText(QString::fromStdString(dir.file("empty.txt")));
  EXPECT_FALSE(p.launchEnabled());
  corpus->setText(QString::fromStdString(test::writeTextCorpus(dir)));
  EXPECT_TRUE(p.launchEnabled());
  auto* tokenizer = p.findChild<QComboBox*>(QStringLiteral("data.tokenizer"));
  tokenizer->setCurrentText(QString::fromStdString("spm:" + dir.file("none.model")));
  EXPECT_FALSE(p.launchEnabled());
  EXPECT_EQ(p.issues().front().field, "data.tokenizer");
}

TEST(DailyUse, EstimatesSayMinutesOrSecondsAndWhetherTheyAreCalibrated) {
  ui::SetupPanel p;
  auto* preset = p.findChild<QComboBox*>(QStringLiteral("preset"));
  preset->setCurrentIndex(preset->findData(QStringLiteral("tiny")));
  EXPECT_FALSE(p.estimateText().contains(QStringLiteral("~0.0 min")));
  EXPECT_TRUE(p.estimateText().contains(QStringLiteral("FLOP-rate guess"))) << p.estimateText().toStdString();
  experiment::TimeCalibration cpu;
  cpu.factor = 3.0;
  cpu.groups = 4;
  p.setTimeCalibration(cpu, {});
  EXPECT_TRUE(p.estimateText().contains(QStringLiteral("calibrated on 4 earlier group(s)"))) << p.estimateText().toStdString();
}

TEST(DailyUse, TheSetupNamesItsPresetAndKeepsSchemesApartFromOptions) {
  ui::SetupPanel p;
  EXPECT_TRUE(p.presetDescription().contains(QStringLiteral("Pre-LN vs LNS"))) << p.presetDescription().toStdString();
  auto* scheme = p.findChild<QWidget*>(QStringLiteral("scheme.pre_ln"));
  auto* option = p.findChild<QWidget*>(QStringLiteral("options.scaledInit"));
  ASSERT_TRUE(scheme && option);
  auto boxOf = [](QWidget* w) {
    while (w && !qobject_cast<QGroupBox*>(w)) w = w->parentWidget();
    return w;
  };
  EXPECT_NE(boxOf(scheme), boxOf(option));
  EXPECT_TRUE(static_cast<QGroupBox*>(boxOf(option))->title().contains(QStringLiteral("options")));
}

TEST(DailyUse, MenusShortcutsAndTooltipsMakeTheLabDiscoverable) {
  test::TempDir dir;
  auto w = openWindow(dir);
  std::map<QString, QString> shortcuts;
  for (auto* menu : w->menuBar()->findChildren<QMenu*>()) {
    for (auto* a : menu->actions()) shortcuts[a->text().remove(QLatin1Char('&'))] = a->shortcut().toString();
  }
  EXPECT_EQ(shortcuts[QStringLiteral("Launch set-up")], QStringLiteral("Ctrl+Return"));
  EXPECT_EQ(shortcuts[QStringLiteral("Resume selected")], QStringLiteral("Ctrl+R"));
  EXPECT_EQ(shortcuts[QStringLiteral("Compare selected")], QStringLiteral("Ctrl+D"));
  EXPECT_EQ(shortcuts[QStringLiteral("Close tab")], QStringLiteral("Ctrl+W"));
  EXPECT_TRUE(shortcuts.count(QStringLiteral("Paper figures…")));
  EXPECT_TRUE(shortcuts.count(QStringLiteral("Keyboard shortcuts")));
  // Every button and editor of the set-up panel and the runs browser says what it does.
  QStringList bare;
  for (QWidget* root : {static_cast<QWidget*>(w->setupPanel()), static_cast<QWidget*>(w->findChild<ui::RunsBrowser*>())}) {
    for (auto* c : root->findChildren<QWidget*>()) {
      const bool control = qobject_cast<QAbstractButton*>(c) || qobject_cast<QComboBox*>(c) ||
                           qobject_cast<QAbstractSpinBox*>(c) || qobject_cast<QLineEdit*>(c);
      bool inner = false;  // parts of a spin box, combo box or table (not controls of their own)
      for (auto* p = c->parentWidget(); p && p != root; p = p->parentWidget()) {
        inner = inner || qobject_cast<QAbstractSpinBox*>(p) || qobject_cast<QComboBox*>(p) ||
                qobject_cast<QAbstractItemView*>(p) || qobject_cast<QLineEdit*>(p);
      }
      if (control && !inner && c->toolTip().isEmpty()) bare << QString::fromLatin1(c->metaObject()->className()) + QStringLiteral(" ") + c->objectName();
    }
  }
  EXPECT_TRUE(bare.isEmpty()) << bare.join(QStringLiteral(", ")).toStdString();
}

TEST(DailyUse, TheWindowRemembersItsSizeAndTheLastSetup) {
  test::TempDir dir;
  QSize size;
  {
    auto w = openWindow(dir);
    w->resize(1634, 777);
    size = w->size();
    EXPECT_NE(size, QSize(1500, 950));  // not the default
    w->setupPanel()->setField(QStringLiteral("optim.lr"), 0.0042);
    w->close();
  }
  auto w = openWindow(dir);
  EXPECT_EQ(w->size(), size);
  EXPECT_DOUBLE_EQ(w->setupPanel()->config().optim.lr, 0.0042);
  EXPECT_EQ(w->setupPanel()->groupName(), QStringLiteral("cpu-demo 1"));  // a new name, not the old one
}

TEST(DailyUse, AFreshWindowShowsTheSetupFieldsWhole) {
  // No saved layout: the set-up dock opens wide enough for its fields, with no horizontal
  // scroll bar and nothing cut at its right edge. It had opened ~70 px too narrow: the runs
  // browser's row of twelve buttons held the central area at 1,128 px or more.
  test::TempDir dir;
  auto w = openWindow(dir);
  EXPECT_EQ(w->size(), QSize(1500, 950));  // the default
  auto* scroll = w->setupPanel()->findChild<QScrollArea*>();
  ASSERT_NE(scroll, nullptr);
  QTRY_VERIFY_WITH_TIMEOUT(scroll->viewport()->width() > 100, 2000);
  QTest::qWait(200);  // the dock's layout settles
  EXPECT_GE(scroll->viewport()->width(), scroll->widget()->minimumSizeHint().width());
  EXPECT_FALSE(scroll->horizontalScrollBar()->isVisible());
  EXPECT_GT(w->centralWidget()->width(), 1000);  // the dashboards keep most of the window
}

TEST(DailyUse, DeletingAGroupClosesItsTabAndTheDialogListsTheRuns) {
  test::TempDir dir;
  int64_t a = 0, b = 0, running = 0;
  {
    auto s = store::RunStore::open(dir.file("lab.db"));
    a = test::addFakeRun(s, {"gone", "pre_ln"});
    b = test::addFakeRun(s, {"gone", "lns"});
    test::FakeRun r{"live", "lns"};
    r.finished = false;
    running = test::addFakeRun(s, r);
  }
  auto w = openWindow(dir);
  auto* browser = w->findChild<ui::RunsBrowser*>();
  const QString question = browser->deleteQuestion({a, running});
  EXPECT_TRUE(question.contains(QStringLiteral("#%1  gone pre_ln s1").arg(a))) << question.toStdString();
  EXPECT_TRUE(question.contains(QStringLiteral("still training"))) << question.toStdString();
  ASSERT_NE(w->dashboard(QStringLiteral("gone")), nullptr);
  const int tabs = w->findChild<QTabWidget*>(QStringLiteral("tabs"))->count();
  w->deleteRuns({a, b}, true);
  w->poller()->poll();
  EXPECT_EQ(w->dashboard(QStringLiteral("gone"), false), nullptr);
  EXPECT_EQ(w->findChild<QTabWidget*>(QStringLiteral("tabs"))->count(), tabs - 1);
}

TEST(DailyUse, RowsStayPutWhileValuesUpdateAndFiltersTakeConditions) {
  test::TempDir dir;
  std::vector<int64_t> ids;
  {
    auto s = store::RunStore::open(dir.file("lab.db"));
    for (int i = 0; i < 4; ++i) {
      test::FakeRun f{"g" + std::to_string(i), i % 2 ? "lns" : "pre_ln", i + 1};
      f.steps = 100 + 10 * i;
      f.valLoss = 1.8 + 0.1 * i;
      f.layers = i < 2 ? 6 : 12;
      f.finished = false;
      ids.push_back(test::addFakeRun(s, f));
    }
  }
  auto w = openWindow(dir);
  auto* view = w->findChild<QTableView*>(QStringLiteral("runsView"));
  view->sortByColumn(ui::RunsTableModel::Steps, Qt::DescendingOrder);
  const auto order = shownOrder(*w);
  EXPECT_EQ(order, (std::vector<int64_t>{ids[3], ids[2], ids[1], ids[0]}));
  {  // the first run overtakes every other one while the user looks at the table
    auto s = store::RunStore::open(dir.file("lab.db"));
    store::WriteBatch b;
    for (int step = 100; step < 300; ++step) b.scalar(step, metrics::kLossTrain, 2.0);
    s.write(ids[0], b);
  }
  w->poller()->poll();
  EXPECT_EQ(w->runsModel()->index(w->runsModel()->rowOfRun(ids[0]), ui::RunsTableModel::Steps).data().toLongLong(), 300);
  EXPECT_EQ(shownOrder(*w), order);  // updated in place, not re-sorted under the cursor
  view->sortByColumn(ui::RunsTableModel::Steps, Qt::DescendingOrder);  // a header click re-sorts
  EXPECT_EQ(shownOrder(*w).front(), ids[0]);
  // Seed and LR columns.
  EXPECT_EQ(ui::RunsTableModel::columnName(ui::RunsTableModel::Seed), QStringLiteral("Seed"));
  EXPECT_EQ(w->runsModel()->index(w->runsModel()->rowOfRun(ids[2]), ui::RunsTableModel::Seed).data().toInt(), 3);
  EXPECT_EQ(w->runsModel()->index(0, ui::RunsTableModel::Lr).data().toString(), QStringLiteral("0.006"));
  // Numeric conditions.
  w->setRunFilter(QStringLiteral("val loss < 1.95"));
  EXPECT_EQ(w->visibleRunCount(), 2);
  w->setRunFilter(QStringLiteral("depth >= 12, scheme lns"));
  EXPECT_EQ(w->visibleRunCount(), 1);
  w->setRunFilter(QStringLiteral("steps > 105 and val loss <= 2.05"));
  EXPECT_EQ(w->visibleRunCount(), 3);
  w->setRunFilter(QStringLiteral("lns"));  // free text still works
  EXPECT_EQ(w->visibleRunCount(), 2);
}

namespace {

// A stand-in for depthlab-cli that writes the arguments it was last called with (recordedArgs).
std::string argsRecordingCli(const test::TempDir& dir) {
  const std::string cli = dir.file("fake-cli.sh");
  test::writeFile(cli, "#!/bin/sh\necho \"$@\" > " + dir.file("args.txt") + "\n");
  std::filesystem::permissions(cli, std::filesystem::perms::owner_all);
  return cli;
}

std::string recordedArgs(const test::TempDir& dir) {
  std::ifstream in(dir.file("args.txt"));
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST(DailyUse, ResumeQueuesOnlyStoppedOrCrashedRuns) {
  test::TempDir dir;
  int64_t stopped = 0, finished = 0;
  {
    auto s = store::RunStore::open(dir.file("lab.db"));
    finished = test::addFakeRun(s, {"a", "pre_ln"});
    test::FakeRun f{"b", "lns"};
    f.finished = false;
    stopped = test::addFakeRun(s, f);
    s.finishRun(stopped, store::RunStatus::Stopped);
  }
  auto w = openWindow(dir, QString::fromStdString(argsRecordingCli(dir)));
  w->resumeRuns({finished, stopped});
  auto* status = w->statusBar();
  EXPECT_TRUE(status->currentMessage().contains(QStringLiteral("Resuming run(s) %1").arg(stopped)));
  EXPECT_TRUE(status->currentMessage().contains(QStringLiteral("from step 0: it wrote no checkpoint")))
      << status->currentMessage().toStdString();
  EXPECT_TRUE(status->currentMessage().contains(QStringLiteral("#%1 is finished").arg(finished)));
  auto args = [&] { return recordedArgs(dir); };
  QTRY_VERIFY_WITH_TIMEOUT(args().find("resume " + std::to_string(stopped)) != std::string::npos, 3000);
}

TEST(DailyUse, TheLauncherOffersDataParallelRanksAndPassesThemToTheTrainer) {
  test::TempDir dir;
  // A fake depthlab-cli that keeps the config it was given.
  const std::string cli = dir.file("fake-cli.sh"), seen = dir.file("seen.json");
  // (copied, then renamed: the test never reads a half-written file)
  test::writeFile(cli, "#!/bin/sh\nwhile [ $# -gt 0 ]; do [ \"$1\" = --config ] && cp \"$2\" '" + seen +
                           ".tmp' && mv '" + seen + ".tmp' '" + seen + "'; shift; done\n");
  std::filesystem::permissions(cli, std::filesystem::perms::owner_all);
  auto w = openWindow(dir, QString::fromStdString(cli));
  auto* ranks = w->setupPanel()->findChild<QSpinBox*>(QStringLiteral("run.processes"));
  ASSERT_NE(ranks, nullptr);
  EXPECT_FALSE(ranks->toolTip().isEmpty());
  EXPECT_EQ(ranks->value(), 1);
  EXPECT_EQ(ranks->suffix(), QStringLiteral(" process(es)"));  // the CPU: Gloo processes
  ranks->setValue(2);
  EXPECT_EQ(w->setupPanel()->config().run.processes, 2);
  w->setupPanel()->launch();
  for (int i = 0; i < 200 && !std::filesystem::exists(seen); ++i) QTest::qWait(25);
  ASSERT_TRUE(std::filesystem::exists(seen));
  EXPECT_EQ(experiment::loadConfigFile(seen).run.processes, 2);
  auto c = w->setupPanel()->config();
  c.run.processes = 3;
  c.optim.batchSize = 5;  // 5 x 1 sequences do not split over 3 ranks: refused before a launch
  c.optim.gradAccum = 1;
  w->setupPanel()->setConfig(c);
  EXPECT_EQ(ranks->value(), 3);
  EXPECT_FALSE(w->setupPanel()->launchEnabled());
  bool named = false;
  for (const auto& issue : w->setupPanel()->issues()) named = named || issue.field == "run.processes";
  EXPECT_TRUE(named);
}

TEST(DailyUse, AnImportedRunShowsNoTrainingFieldsInTheRunsTable) {
  // Its config's seed, learning rate and corpus are the defaults, not facts about the model
  // (it had shown LR 0.001 and corpus "default (KJV)").
  store::RunInfo imported;
  imported.id = 3;
  imported.name = "back";
  imported.scheme = "pre_ln";
  imported.tags = {"imported"};
  auto config = experiment::toJson(*experiment::presetConfig("cpu-demo"));
  store::RunInfo trained = imported;
  trained.id = 4;
  trained.tags = {};
  trained.configJson = config.dump();
  config["import"] = {{"architecture", "LlamaForCausalLM"}};  // what hf::importHfModel records
  imported.configJson = config.dump();
  ui::RunsTableModel m;
  m.resetRuns({imported, trained}, {}, {});
  using M = ui::RunsTableModel;
  for (int column : {M::Seed, M::Lr, M::Corpus, M::Steps, M::Tokens}) {
    EXPECT_EQ(m.index(0, column).data().toString(), QStringLiteral("-"))
        << M::columnName(column).toStdString();
    EXPECT_NE(m.index(1, column).data().toString(), QStringLiteral("-"))
        << M::columnName(column).toStdString();
  }
  EXPECT_EQ(m.index(0, M::Depth).data().toInt(), 24);  // the model's own shape stays
  EXPECT_EQ(m.index(0, M::Params).data().toString(), m.index(1, M::Params).data().toString());
}

TEST(DailyUse, TrainFurtherQueuesAResumeToTheStepAskedForOnlyWhereItCanTrain) {
  test::TempDir dir;
  int64_t finished = 0, running = 0;
  {
    auto s = store::RunStore::open(dir.file("lab.db"));
    finished = test::addFakeRun(s, {"a", "pre_ln"});
    test::FakeRun f{"b", "lns"};
    f.finished = false;
    running = test::addFakeRun(s, f);
    s.markRunning(running);
  }
  auto w = openWindow(dir, QString::fromStdString(argsRecordingCli(dir)));
  auto* button = w->findChild<QPushButton*>(QStringLiteral("train"));
  ASSERT_NE(button, nullptr);
  EXPECT_TRUE(button->toolTip().contains(QStringLiteral("schedule")));
  // Not past what it trained (200 updates): refused, saying so.
  w->trainRunsTo({finished}, 200);
  EXPECT_TRUE(w->statusBar()->currentMessage().contains(
      QStringLiteral("#%1 has trained 200 steps").arg(finished)))
      << w->statusBar()->currentMessage().toStdString();
  w->trainRunsTo({finished, running}, 5000);
  const QString msg = w->statusBar()->currentMessage();
  EXPECT_TRUE(msg.contains(QStringLiteral("Training run(s) %1 to step 5000").arg(finished)))
      << msg.toStdString();
  EXPECT_TRUE(msg.contains(QStringLiteral("#%1 is training").arg(running))) << msg.toStdString();
  auto args = [&] { return recordedArgs(dir); };
  QTRY_VERIFY_WITH_TIMEOUT(
      args().find("resume " + std::to_string(finished) + " --steps 5000") != std::string::npos,
      3000);
}

TEST(DailyUse, AGroupWithOneRunTrainedFurtherIsDoneWhenBothFinished) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("lab.db"));
  test::addFakeRun(s, {"g", "pre_ln"});  // 600 planned steps, finished
  const int64_t further = test::addFakeRun(s, {"g", "lns"});
  auto c = experiment::configOf(*s.run(further));
  c.optim.scheduleSteps = c.optim.steps;
  c.optim.steps = 900;  // trained further (resume --steps 900)
  s.setRunConfig(further, experiment::toJson(c).dump());
  ui::GroupDashboard d(QStringLiteral("g"));
  d.refresh(s, {});
  auto* bar = d.findChild<QProgressBar*>(QStringLiteral("progress"));
  auto* eta = d.findChild<QLabel*>(QStringLiteral("eta"));
  ASSERT_NE(bar, nullptr);
  ASSERT_NE(eta, nullptr);
  // It had said "600 / 900 steps", "not running".
  EXPECT_EQ(bar->format(), QStringLiteral("900 / 900 steps"));
  EXPECT_EQ(eta->text(), QStringLiteral("done"));
  // While the longer run trains on, the bar follows it.
  s.markRunning(further);
  d.refresh(s, {});
  EXPECT_NE(bar->format(), QStringLiteral("900 / 900 steps"));
  EXPECT_NE(eta->text(), QStringLiteral("done"));
}

TEST(DailyUse, TheSetupShowsTheScheduleLengthOfARunTrainedFurther) {
  // A clone of a run trained further keeps its shorter schedule; hidden, a longer Steps would
  // have kept the floor from that point on without a word.
  ui::SetupPanel panel;
  auto* schedule = panel.findChild<QSpinBox*>(QStringLiteral("optim.scheduleSteps"));
  ASSERT_NE(schedule, nullptr);
  EXPECT_EQ(schedule->text(), QStringLiteral("all steps"));  // a fresh config: 0
  EXPECT_FALSE(schedule->toolTip().isEmpty());
  auto c = *experiment::presetConfig("cpu-demo");
  c.optim.scheduleSteps = 300;
  c.optim.steps = 400;
  panel.setConfig(c);
  EXPECT_EQ(schedule->value(), 300);
  EXPECT_EQ(panel.config().optim.scheduleSteps, 300);
  schedule->setValue(0);
  EXPECT_EQ(panel.config().optim.scheduleSteps, 0);
}
