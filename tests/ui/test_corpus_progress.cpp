// A launch on a corpus that is not yet tokenized shows the tokenizing progress (percent,
// throughput, ETA) of its real depthlab-cli process in the runs table, and closing the window
// stops it cleanly: the finished shards are kept for the next launch to resume.
#include <gtest/gtest.h>

#include <QRegularExpression>

#include <QSpinBox>
#include <QTest>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "data/corpus_prepare.h"
#include "data/token_store.h"
#include "data/tokenizer.h"
#include "experiment/presets.h"
#include "main_window.h"
#include "runs/runs_table_model.h"
#include "setup/setup_panel.h"
#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;

TEST(CorpusProgress, TheRunsTableShowsTheTokenizingProgressOfALaunch) {
  if (!data::SpmTokenizer::toolsAvailable()) GTEST_SKIP() << "sentencepiece tools not installed";
  test::TempDir dir;
  {  // ~24 MB of varied lines: SentencePiece takes a few seconds to encode it
    std::ofstream out(dir.file("big.txt"));
    for (int i = 0; i < 400000; ++i) {
      out << "line " << i << " of the deep layers, where variance grows with depth "
          << (static_cast<long>(i) * 7919 % 1000) << "\n";
    }
  }
  auto w = std::make_unique<ui::MainWindow>(
      store::RunStore::open(dir.file("lab.db")),
      ui::MainWindowOptions{{},
                            {},
                            QString::fromStdString(depthlab::test::cliPath()),
                            QString::fromStdString(dir.file("window.ini"))});
  w->setClosePolicy(ui::MainWindow::ClosePolicy::StopRuns);
  w->resize(1400, 900);
  w->show();
  auto c = *experiment::presetConfig("tiny");
  c.data.corpus = dir.file("big.txt");
  c.data.tokenizer = "spm:300";
  c.data.tokenizerSampleMB = 2;
  w->setupPanel()->setConfig(c);
  w->setupPanel()->launch();
  auto* m = w->runsModel();
  auto statusOfPending = [&] {
    for (int r = 0; r < m->rowCount(); ++r) {
      if (m->runAt(r)->id <= 0) return m->index(r, ui::RunsTableModel::Status).data().toString();
    }
    return QString();
  };
  QTRY_VERIFY_WITH_TIMEOUT(statusOfPending().contains(QStringLiteral("%")), 60000);
  const QString status = statusOfPending();
  EXPECT_TRUE(status.contains(QStringLiteral("tokenizing"))) << status.toStdString();
  // The rate in kB/s or MB/s, whichever the machine's load gives (a loaded CI machine: 774 kB/s).
  EXPECT_TRUE(status.contains(QRegularExpression(QStringLiteral("[0-9.]+ [kM]B/s"))))
      << status.toStdString();
  if (const char* shots = std::getenv("DEPTHLAB_TEST_SHOTS")) {
    w->grab().save(QString::fromUtf8(shots) + QStringLiteral("/corpus-progress.png"));
  }
  w->close();  // StopRuns: SIGTERM; the process stops tokenizing and keeps its finished shards
  w.reset();
  auto index = data::readStoreIndex(data::storeDirFor(dir.file("big.txt"), "spm:300"));
  ASSERT_NE(index, nullptr);
  EXPECT_FALSE(index->complete);
}

TEST(CorpusProgress, TheTokenizerSampleIsSetBesideTheTokenizerThatTrainsOnIt) {
  ui::SetupPanel p;
  auto c = *experiment::presetConfig("tiny");
  c.data.tokenizer = "byte";
  c.data.tokenizerSampleMB = 250;
  p.setConfig(c);
  auto* sample = p.findChild<QSpinBox*>(QStringLiteral("data.tokenizerSampleMB"));
  ASSERT_NE(sample, nullptr);
  EXPECT_EQ(sample->value(), 250);
  EXPECT_FALSE(sample->isEnabled());  // the byte tokenizer trains on nothing
  c.data.tokenizer = "spm:8000";
  p.setConfig(c);
  EXPECT_TRUE(sample->isEnabled());
  sample->setValue(40);
  EXPECT_EQ(p.config().data.tokenizerSampleMB, 40);
  c.data.tokenizer = "spm:/models/given.model";  // a given model is used as it is
  p.setConfig(c);
  EXPECT_FALSE(sample->isEnabled());
}
