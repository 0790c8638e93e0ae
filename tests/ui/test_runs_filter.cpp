// The runs filter finds runs by their notes: free text matches a run's notes as well as its
// cells, "notes WORD" searches the notes alone (also beside other conditions), and a
// comparison on notes is refused saying how to search them.
#include <gtest/gtest.h>

#include "runs/runs_filter_model.h"
#include "runs/runs_table_model.h"

using namespace depthlab;

namespace {

store::RunInfo runWithNotes(int64_t id, const std::string& scheme, const std::string& notes) {
  store::RunInfo r;
  r.id = id;
  r.name = "run-" + std::to_string(id);
  r.groupName = "g";
  r.scheme = scheme;
  r.notes = notes;
  return r;
}

}  // namespace

TEST(RunsFilter, NotesAreSearchedByFreeTextAndByTheirOwnCondition) {
  ui::RunsTableModel runs;
  runs.resetRuns({runWithNotes(1, "pre_ln", "warmup too short: diverged at 300"),
                  runWithNotes(2, "lns", "baseline for the Warmup sweep"),
                  runWithNotes(3, "lns", "")});
  ui::RunsFilterModel f;
  f.setSourceModel(&runs);
  f.setRunFilter(QStringLiteral("warmup"), -1);
  EXPECT_EQ(f.rowCount(), 2);  // no cell says "warmup": only the notes do
  f.setRunFilter(QStringLiteral("notes diverged"), -1);
  EXPECT_FALSE(f.filterInvalid());
  EXPECT_EQ(f.rowCount(), 1);
  EXPECT_TRUE(f.filterDescription().contains(QStringLiteral("Notes ~ diverged")))
      << f.filterDescription().toStdString();
  f.setRunFilter(QStringLiteral("notes warmup, scheme lns"), -1);
  EXPECT_EQ(f.rowCount(), 1);
  f.setRunFilter(QStringLiteral("warmup"), ui::RunsTableModel::Scheme);  // one column chosen
  EXPECT_EQ(f.rowCount(), 0);
  f.setRunFilter(QStringLiteral("notes < 3"), -1);
  EXPECT_TRUE(f.filterInvalid());
  EXPECT_TRUE(f.filterDescription().contains(QStringLiteral("notes warmup")))
      << f.filterDescription().toStdString();
  EXPECT_EQ(f.rowCount(), 3);  // an invalid filter shows every run
}

TEST(RunsFilter, AColumnAndAWordAloneIsAConditionOnAWholeWord) {
  ui::RunsTableModel runs;
  auto tour = runWithNotes(3, "lns", "");
  tour.groupName = "tour";
  runs.resetRuns({runWithNotes(1, "pre_ln", ""), runWithNotes(2, "dyt_lns", ""), tour});
  ui::RunsFilterModel f;
  f.setSourceModel(&runs);
  f.setRunFilter(QStringLiteral("scheme lns"), -1);  // had shown nothing alone
  EXPECT_FALSE(f.filterInvalid());
  EXPECT_EQ(f.rowCount(), 1) << "dyt_lns holds lns only as part of a word";
  EXPECT_TRUE(f.filterDescription().contains(QStringLiteral("has the word lns")))
      << f.filterDescription().toStdString();
  f.setRunFilter(QStringLiteral("group = tour"), -1);  // had answered "try e.g. group = 1.5"
  EXPECT_FALSE(f.filterInvalid()) << f.filterDescription().toStdString();
  EXPECT_EQ(f.rowCount(), 1);
  f.setRunFilter(QStringLiteral("group != tour"), -1);
  EXPECT_EQ(f.rowCount(), 2);
  f.setRunFilter(QStringLiteral("depth > abc"), -1);
  EXPECT_TRUE(f.filterInvalid());
  EXPECT_TRUE(f.filterDescription().contains(QStringLiteral("= NAME"))) << f.filterDescription().toStdString();
}
