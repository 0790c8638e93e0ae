// The window's Hugging Face commands: "Open Hugging Face model…" imports a folder and probes it on
// the lab's corpus in the background (progress in the status bar), then shows its dashboard;
// "Export HF…" in the Runs tab refuses a scheme Llama cannot express with the reason, without
// blocking the window.
#include <gtest/gtest.h>

#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QTabWidget>
#include <QTest>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "experiment/experiment_config.h"
#include "hf/hf_export.h"
#include "hf_actions.h"
#include "main_window.h"
#include "runs/runs_browser.h"
#include "store/metric_catalogue.h"
#include "store_poller.h"
#include "support/build_paths.h"
#include "support/hf_fixtures.h"
#include "support/model_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;
namespace fs = std::filesystem;

namespace {

std::unique_ptr<ui::MainWindow> openWindow(const test::TempDir& dir, const QString& corpus) {
  auto w = std::make_unique<ui::MainWindow>(
      store::RunStore::open(dir.file("lab.db")),
      ui::MainWindowOptions{corpus,
                            {},
                            QString::fromStdString(depthlab::test::cliPath()),
                            QString::fromStdString(dir.file("window.ini"))});
  w->setClosePolicy(ui::MainWindow::ClosePolicy::KeepRunning);
  w->show();
  return w;
}

}  // namespace

TEST(HfActions, OpenModelImportsProbesAndShowsItsDashboard) {
  if (auto why = test::transformersMissingReason(); !why.empty()) GTEST_SKIP() << why;
  test::TempDir dir;
  // A Llama with a 256-token vocabulary and a byte-level tokenizer.json: the corpus is text.
  const fs::path model = dir.file("tiny-llama");
  fs::create_directories(model);
  for (const auto& e : fs::directory_iterator(test::hfModelSet() + "/llama-bytes")) {
    fs::copy_file(e.path(), model / e.path().filename());
  }
  test::writeFile((model / "tokenizer.json").string(), hf::byteLevelTokenizerJson());
  std::string text;
  while (text.size() < 4000) text += "To be, or not to be, that is the question. ";
  test::writeFile(dir.file("corpus.txt"), text);
  auto w = openWindow(dir, QString::fromStdString(dir.file("corpus.txt")));
  bool sawProgress = false;
  QObject::connect(w->hfActions(), &ui::HfActions::message, [&](const QString& m) {
    sawProgress = sawProgress || m.contains(QStringLiteral("ETA"));
  });
  w->hfActions()->openModel(QString::fromStdString(model.string()));
  QTRY_VERIFY_WITH_TIMEOUT(!w->hfActions()->busy(), 120000);
  EXPECT_EQ(w->findChild<QMessageBox*>(QStringLiteral("hfFailure")), nullptr);
  auto& s = w->poller()->store();
  const auto runs = s.listRuns();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].tags, std::vector<std::string>{"imported"});
  EXPECT_EQ(runs[0].groupName, "hf-tiny-llama");
  EXPECT_EQ(s.layerSeries(runs[0].id, metrics::kVariance).nLayers, 3);
  EXPECT_TRUE(s.matrix(runs[0].id, metrics::kBlockPrune, 0));
  EXPECT_EQ(s.layerSeries(runs[0].id, metrics::kJacobianIdentity).steps.size(), 1u);
  EXPECT_EQ(s.layerSeries(runs[0].id, metrics::kAngularAdjacentLast).steps.size(), 1u);
  EXPECT_TRUE(sawProgress);
  auto* tabs = w->findChild<QTabWidget*>();
  ASSERT_NE(tabs, nullptr);
  EXPECT_EQ(tabs->count(), 2);  // the runs browser and the model's dashboard, shown
  EXPECT_EQ(tabs->currentIndex(), 1);
  EXPECT_TRUE(w->statusBar()->currentMessage().contains(QStringLiteral("Probed tiny-llama")))
      << w->statusBar()->currentMessage().toStdString();
  if (const char* shot = std::getenv("DEPTHLAB_HF_SCREENSHOT"))
    w->grab().save(QString::fromUtf8(shot));
}

TEST(HfActions, ExportRefusalIsShownWithoutBlockingTheWindow) {
  test::TempDir dir;
  auto w = openWindow(dir, QString());
  auto& s = w->poller()->store();
  auto c = test::smallConfig(3);
  store::NewRun run;
  run.name = "post";
  run.scheme = "post_ln";
  run.configJson = experiment::toJson(c).dump();
  const auto id = s.createRun(run);
  auto* button =
      w->findChild<ui::RunsBrowser*>()->findChild<QPushButton*>(QStringLiteral("export"));
  ASSERT_NE(button, nullptr);
  EXPECT_TRUE(button->toolTip().contains(QStringLiteral("LlamaForCausalLM")));
  bool menuHasOpen = false;
  for (auto* a : w->menuBar()->actions().front()->menu()->actions()) {
    menuHasOpen = menuHasOpen || a->text().contains(QStringLiteral("Hugging Face"));
  }
  EXPECT_TRUE(menuHasOpen);
  w->hfActions()->exportRun(id, QString::fromStdString(dir.file("out")));
  QTRY_VERIFY_WITH_TIMEOUT(w->findChild<QMessageBox*>(QStringLiteral("hfFailure")) != nullptr,
                           30000);
  const auto* box = w->findChild<QMessageBox*>(QStringLiteral("hfFailure"));
  EXPECT_TRUE(box->text().contains(QStringLiteral("normalizes after the residual add")))
      << box->text().toStdString();
  EXPECT_FALSE(box->isModal());
  EXPECT_FALSE(fs::exists(dir.file("out")));
}
