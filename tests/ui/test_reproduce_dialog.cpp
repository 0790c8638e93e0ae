// The window's "Reproduce the paper…" (launch/reproduce_dialog): every paper recipe is listed
// with its choices; a paper-size recipe on the CPU is refused in red with Launch disabled until
// Force is ticked; the cost names the token slots and the runs already finished; Launch hands
// over exactly the depthlab-cli reproduce arguments; the Run menu opens it; a failing command
// comes back as a message box naming its last error line.
#include <gtest/gtest.h>

#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>
#include <QTextBrowser>

#include <nlohmann/json.hpp>

#include "experiment/paper_recipes.h"
#include "experiment/presets.h"
#include "experiment/reproduction_report.h"
#include "launch/reproduce_dialog.h"
#include "launch/reproduce_job.h"
#include "main_window.h"
#include "store_poller.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

template <class T>
T* child(QWidget* w, const char* name) {
  auto* c = w->findChild<T*>(QString::fromLatin1(name));
  EXPECT_NE(c, nullptr) << name;
  return c;
}

// A JSON Lines corpus of 600 short documents: more than tiny-check reads (480, one a row).
QString writeCorpus(const test::TempDir& dir) {
  const char* words[] = {"the",   "curse", "of",      "depth",   "in",
                         "layer", "norm",  "scaling", "variance"};
  std::string text;
  for (int i = 0; i < 600; ++i) {
    text += "{\"text\": \"";
    for (int k = 0; k < 12; ++k)
      text += std::string(k ? " " : "") + words[(i * 7 + k * 5 + i / 9) % 9];
    text += "\"}\n";
  }
  test::writeFile(dir.file("corpus.jsonl"), text);
  return QString::fromStdString(dir.file("corpus.jsonl"));
}

void chooseDevice(ui::ReproduceDialog& d, const QString& id) {
  auto* device = child<QComboBox>(&d, "device");
  device->setCurrentIndex(device->findData(id));
}

}  // namespace

TEST(ReproduceDialog, ListsEveryRecipeWithItsChoices) {
  test::TempDir dir;
  auto store = store::RunStore::open(dir.file("lab.db"));
  ui::ReproduceDialog d(store, QString());
  auto* list = child<QListWidget>(&d, "recipes");
  auto* details = child<QTextBrowser>(&d, "recipeDetails");
  const auto& recipes = experiment::paperRecipes();
  ASSERT_EQ(list->count(), static_cast<int>(recipes.size()));
  for (const auto& r : recipes) {
    ASSERT_TRUE(d.selectRecipe(QString::fromStdString(r.name))) << r.name;
    const QString text = details->toPlainText();
    EXPECT_TRUE(text.contains(QString::fromStdString(r.title))) << r.name;
    EXPECT_TRUE(text.contains(QString::fromStdString(r.source))) << r.name;
    for (const auto& c : r.choices) EXPECT_TRUE(text.contains(QString::fromStdString(c))) << c;
    for (const auto& n : r.paper) {
      EXPECT_TRUE(text.contains(QString::number(n.perplexity, 'f', 2)))
          << r.name << " " << n.scheme;
    }
    // Every scheme of the recipe has a ticked box.
    for (const auto& arm : r.arms) {
      for (const auto& s : arm.schemes) {
        auto* box = d.findChild<QCheckBox*>(QStringLiteral("scheme_") + QString::fromStdString(s));
        ASSERT_NE(box, nullptr) << r.name << " " << s;
        EXPECT_TRUE(box->isChecked());
      }
    }
  }
}

TEST(ReproduceDialog, PaperSizeOnTheCpuIsRefusedUntilForced) {
  test::TempDir dir;
  auto store = store::RunStore::open(dir.file("lab.db"));
  ui::ReproduceDialog d(store, writeCorpus(dir));
  d.show();
  ASSERT_TRUE(d.selectRecipe(QStringLiteral("table1-130m")));
  chooseDevice(d, QStringLiteral("cpu"));
  auto* launch = child<QPushButton>(&d, "launch");
  auto* refusal = child<QLabel>(&d, "refusal");
  EXPECT_FALSE(launch->isEnabled());
  EXPECT_TRUE(refusal->isVisible());
  EXPECT_TRUE(refusal->text().contains(QStringLiteral("paper-size")))
      << refusal->text().toStdString();
  EXPECT_TRUE(refusal->text().contains(QStringLiteral("tick Force")))
      << refusal->text().toStdString();
  // The cost is shown beside the refusal: what it would take when forced.
  EXPECT_TRUE(d.costText().contains(QStringLiteral("token slots"))) << d.costText().toStdString();

  child<QCheckBox>(&d, "force")->setChecked(true);
  EXPECT_TRUE(launch->isEnabled());
  EXPECT_TRUE(d.refusal().isEmpty()) << d.refusal().toStdString();
  EXPECT_FALSE(refusal->isVisible());
  EXPECT_TRUE(d.costText().contains(QStringLiteral("5 run(s) to train")))
      << d.costText().toStdString();
  EXPECT_TRUE(d.costText().contains(QStringLiteral("token slots")));

  // A CPU-sized recipe needs no force.
  child<QCheckBox>(&d, "force")->setChecked(false);
  ASSERT_TRUE(d.selectRecipe(QStringLiteral("tiny-check")));
  EXPECT_TRUE(launch->isEnabled()) << d.refusal().toStdString();
}

TEST(ReproduceDialog, PlansFastEnoughToFollowTheChoices) {
  test::TempDir dir;
  auto store = store::RunStore::open(dir.file("lab.db"));
  // A lab with history: 200 runs, a few of them the recipe's.
  auto c = *experiment::presetConfig("tiny");
  for (int i = 0; i < 200; ++i) {
    store::NewRun nr;
    nr.name = "run " + std::to_string(i);
    nr.groupName = "g" + std::to_string(i / 2);
    nr.scheme = i % 2 ? "lns" : "pre_ln";
    nr.configJson = experiment::toJson(c).dump();
    store.createRun(nr);
  }
  ui::ReproduceDialog d(store, writeCorpus(dir));
  ASSERT_TRUE(d.selectRecipe(QStringLiteral("table1-1b")));
  QElapsedTimer t;
  t.start();
  for (int i = 0; i < 10; ++i) d.replan();
  const double ms = t.elapsed() / 10.0;
  std::printf("[          ] one plan: %.1f ms over 200 runs\n", ms);
  EXPECT_LT(ms, 100.0) << "planning is slow enough to stall the window as the user types";
}

TEST(ReproduceDialog, CostNamesTheRunsAlreadyFinished) {
  test::TempDir dir;
  auto store = store::RunStore::open(dir.file("lab.db"));
  const auto& recipe = experiment::requireRecipe("tiny-check");
  store::NewRun nr;
  nr.name = "tiny pre_ln";
  nr.groupName = "reproduce tiny-check";
  nr.scheme = "pre_ln";
  nr.configJson = experiment::toJson(recipe.config(0)).dump();
  const int64_t id = store.createRun(nr);
  store.addTag(id, experiment::recipeTag(recipe, 0));
  store.finishRun(id, store::RunStatus::Finished);
  ui::ReproduceDialog d(store, writeCorpus(dir));
  ASSERT_TRUE(d.selectRecipe(QStringLiteral("tiny-check")));
  EXPECT_TRUE(d.costText().contains(QStringLiteral("1 run(s) to train")))
      << d.costText().toStdString();
  EXPECT_TRUE(d.costText().contains(QStringLiteral("already finished here: run(s) %1").arg(id)));
  child<QCheckBox>(&d, "scheme_lns")->setChecked(false);
  EXPECT_TRUE(d.costText().contains(QStringLiteral("Nothing left to train")))
      << d.costText().toStdString();
  EXPECT_TRUE(d.refusal().isEmpty());
}

TEST(ReproduceDialog, LaunchHandsOverTheCommandsArguments) {
  test::TempDir dir;
  auto store = store::RunStore::open(dir.file("lab.db"));
  const QString corpus = writeCorpus(dir);
  ui::ReproduceDialog d(store, corpus);
  d.show();
  ASSERT_TRUE(d.selectRecipe(QStringLiteral("table1-130m")));
  chooseDevice(d, QStringLiteral("cpu"));
  child<QCheckBox>(&d, "force")->setChecked(true);
  child<QCheckBox>(&d, "scheme_post_ln")->setChecked(false);
  auto* tokenizer = child<QLineEdit>(&d, "tokenizer");
  tokenizer->setText(
      QString::fromStdString(dir.file("no-such.model")).prepend(QStringLiteral("spm:")));
  d.replan();  // what the typing timer does
  EXPECT_TRUE(d.refusal().contains(QStringLiteral("tokenizer model"))) << d.refusal().toStdString();
  EXPECT_FALSE(child<QPushButton>(&d, "launch")->isEnabled());
  tokenizer->setText(QStringLiteral("spm:32000"));
  d.replan();
  ASSERT_TRUE(d.refusal().isEmpty()) << d.refusal().toStdString();

  const QStringList expected = {
      QStringLiteral("reproduce"),   QStringLiteral("table1-130m"),
      QStringLiteral("--corpus"),    corpus,
      QStringLiteral("--tokenizer"), QStringLiteral("spm:32000"),
      QStringLiteral("--device"),    QStringLiteral("cpu"),
      QStringLiteral("--schemes"),   QStringLiteral("pre_ln,lns,deepnorm_official,mix_ln"),
      QStringLiteral("--force")};
  EXPECT_EQ(d.arguments(), expected) << d.arguments().join(QLatin1Char(' ')).toStdString();
  EXPECT_TRUE(child<QLabel>(&d, "command")->text().contains(expected.join(QLatin1Char(' '))));
  QSignalSpy spy(&d, &ui::ReproduceDialog::launchRequested);
  QTest::mouseClick(child<QPushButton>(&d, "launch"), Qt::LeftButton);
  ASSERT_EQ(spy.count(), 1);
  EXPECT_EQ(spy.at(0).at(0).toString(), QStringLiteral("table1-130m"));
  EXPECT_EQ(spy.at(0).at(1).toStringList(), expected);
  EXPECT_FALSE(d.isVisible());  // Launch closes the dialog
}

TEST(ReproduceDialog, AllSchemesAndTheDefaultsLeaveTheirOptionsOut) {
  test::TempDir dir;
  ui::ReproduceChoices c;
  c.recipe = QStringLiteral("tiny-check");
  c.corpus = writeCorpus(dir);
  c.schemes = {QStringLiteral("pre_ln"), QStringLiteral("lns")};
  EXPECT_EQ(ui::reproduceArguments(c),
            (QStringList{QStringLiteral("reproduce"), QStringLiteral("tiny-check"),
                         QStringLiteral("--corpus"), c.corpus, QStringLiteral("--device"),
                         QStringLiteral("cpu")}));
  EXPECT_TRUE(ui::reproduceInputProblem(c).isEmpty());
  c.schemes.clear();
  c.allSchemes = false;
  EXPECT_TRUE(ui::reproduceInputProblem(c).contains(QStringLiteral("at least one scheme")));
}

TEST(ReproduceDialog, CorpusMustHoldManyDocuments) {
  test::TempDir dir;
  // None: the lab's default corpus is one text file, one document a recipe cannot batch.
  EXPECT_TRUE(ui::reproduceCorpusProblem(QString()).contains(QStringLiteral("Choose a corpus")));
  EXPECT_TRUE(ui::reproduceCorpusProblem(QStringLiteral("/no/such/c.jsonl"))
                  .contains(QStringLiteral("does not exist")));
  test::writeFile(dir.file("book.txt"), "one long text\n");
  EXPECT_TRUE(ui::reproduceCorpusProblem(QString::fromStdString(dir.file("book.txt")))
                  .contains(QStringLiteral("one text file")));
  EXPECT_TRUE(
      ui::reproduceCorpusProblem(QString::fromStdString(dir.path())).isEmpty());  // a folder
  EXPECT_TRUE(ui::reproduceCorpusProblem(writeCorpus(dir)).isEmpty());
  test::writeFile(dir.file("c4-train.00000-of-01024.json.gz"), "");
  EXPECT_TRUE(ui::reproduceCorpusProblem(
                  QString::fromStdString(dir.file("c4-train.00000-of-01024.json.gz")))
                  .isEmpty());
}

TEST(ReproduceDialog, MissingCorpusIsRefusedByName) {
  test::TempDir dir;
  auto store = store::RunStore::open(dir.file("lab.db"));
  ui::ReproduceDialog d(store, QString::fromStdString(dir.file("gone.jsonl")));
  ASSERT_TRUE(d.selectRecipe(QStringLiteral("tiny-check")));
  EXPECT_TRUE(d.refusal().contains(QStringLiteral("gone.jsonl"))) << d.refusal().toStdString();
  EXPECT_FALSE(child<QPushButton>(&d, "launch")->isEnabled());
}

TEST(ReproduceWindow, RunMenuLaunchesTinyCheckAndItsRunsAppear) {
  test::TempDir dir;
  // The command's checkpoints go to the data folder: this test's, not the user's.
  const QByteArray dataHome = qgetenv("XDG_DATA_HOME");
  qputenv("XDG_DATA_HOME", QByteArray::fromStdString(dir.file("data")));
  test::writeFile(dir.file("book.txt"), "a lab corpus of one text file\n");
  ui::MainWindow w(store::RunStore::open(dir.file("lab.db")),
                   ui::MainWindowOptions{QString::fromStdString(dir.file("book.txt")),
                                         {},
                                         QString::fromStdString(depthlab::test::cliPath()),
                                         QString::fromStdString(dir.file("window.ini"))});
  w.setClosePolicy(ui::MainWindow::ClosePolicy::StopRuns);
  w.show();
  QAction* action = nullptr;
  for (auto* menu : w.menuBar()->findChildren<QMenu*>()) {
    for (auto* a : menu->actions()) {
      if (a->text().remove(QLatin1Char('&')) == QStringLiteral("Reproduce the paper…")) action = a;
    }
  }
  ASSERT_NE(action, nullptr);
  action->trigger();
  auto* d = w.findChild<ui::ReproduceDialog*>();
  ASSERT_NE(d, nullptr);
  EXPECT_TRUE(d->isVisible());
  // The lab's one-text-file corpus is not offered: a recipe reads one document a row.
  EXPECT_TRUE(child<QLineEdit>(d, "corpus")->text().isEmpty());
  EXPECT_FALSE(child<QPushButton>(d, "launch")->isEnabled());
  const QString corpus = writeCorpus(dir);
  child<QLineEdit>(d, "corpus")->setText(corpus);
  ASSERT_TRUE(d->selectRecipe(QStringLiteral("tiny-check")));
  chooseDevice(*d, QStringLiteral("cpu"));
  ASSERT_TRUE(d->refusal().isEmpty()) << d->refusal().toStdString();
  QTest::mouseClick(child<QPushButton>(d, "launch"), Qt::LeftButton);
  EXPECT_TRUE(w.reproduceJob()->busy());
  QTRY_VERIFY_WITH_TIMEOUT(
      w.findChild<QMessageBox*>(QStringLiteral("reproduceReport")) != nullptr ||
          w.findChild<QMessageBox*>(QStringLiteral("reproduceFailure")) != nullptr,
      60000);
  auto* failure = w.findChild<QMessageBox*>(QStringLiteral("reproduceFailure"));
  ASSERT_EQ(failure, nullptr) << failure->text().toStdString();
  auto* report = w.findChild<QMessageBox*>(QStringLiteral("reproduceReport"));
  EXPECT_FALSE(report->isModal());
  EXPECT_TRUE(report->detailedText().contains(QStringLiteral("LNS over Pre-LN")))
      << report->detailedText().toStdString();
  // Its runs are in the window's table, through the store, tagged as the recipe's.
  QTRY_COMPARE_WITH_TIMEOUT(w.visibleRunCount(), 2, 5000);
  for (const auto& r : w.poller()->store().listRuns()) {
    EXPECT_EQ(r.tags, std::vector<std::string>{"reproduce:tiny-check"}) << r.id;
    EXPECT_EQ(r.status, store::RunStatus::Finished) << r.id;
  }
  // Opened again, the dialog starts from the last reproduction's corpus, and has nothing to train.
  action->trigger();
  auto dialogs = w.findChildren<ui::ReproduceDialog*>();
  ui::ReproduceDialog* again = nullptr;
  for (auto* x : dialogs) {
    if (x->isVisible()) again = x;
  }
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(child<QLineEdit>(again, "corpus")->text(), corpus);
  again->selectRecipe(QStringLiteral("tiny-check"));
  EXPECT_TRUE(again->costText().contains(QStringLiteral("Nothing left to train")))
      << again->costText().toStdString();
  qputenv("XDG_DATA_HOME", dataHome);
}

TEST(ReproduceWindow, AFailingCommandNamesItsLastErrorLine) {
  test::TempDir dir;
  ui::MainWindow w(store::RunStore::open(dir.file("lab.db")),
                   ui::MainWindowOptions{{},
                                         {},
                                         QString::fromStdString(depthlab::test::cliPath()),
                                         QString::fromStdString(dir.file("window.ini"))});
  w.setClosePolicy(ui::MainWindow::ClosePolicy::StopRuns);
  w.show();
  ASSERT_TRUE(
      w.reproduceJob()->start(QStringLiteral("no-such-recipe"),
                              {QStringLiteral("reproduce"), QStringLiteral("no-such-recipe")}));
  EXPECT_FALSE(
      w.reproduceJob()->start(QStringLiteral("tiny-check"), {QStringLiteral("reproduce")}));
  QTRY_VERIFY_WITH_TIMEOUT(w.findChild<QMessageBox*>(QStringLiteral("reproduceFailure")) != nullptr,
                           30000);
  auto* box = w.findChild<QMessageBox*>(QStringLiteral("reproduceFailure"));
  EXPECT_TRUE(box->windowTitle().contains(QStringLiteral("no-such-recipe")));
  const QString error = box->text().section(QLatin1Char('\n'), 0, 0);
  EXPECT_TRUE(error.contains(QStringLiteral("no-such-recipe"))) << error.toStdString();
  EXPECT_FALSE(box->isModal());
  EXPECT_FALSE(w.reproduceJob()->busy());
}
