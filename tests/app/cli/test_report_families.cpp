// `depthlab-cli report --families`: the family table printed, as JSON and written as CSV,
// LaTeX and per-layer profiles; its file options refused without --families.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include "experiment/experiment_config.h"
#include "store/metric_catalogue.h"
#include "store/run_store.h"
#include "support/build_paths.h"
#include "support/imported_run.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

int64_t addImported(store::RunStore& s, const std::string& name, const std::string& architecture) {
  const int64_t id = test::addImportedRun(s, name, architecture, 4);
  test::writeImportedProbes(
      s, id,
      {{0.6f, 0.3f, 0.03f, 0.01f}, {1.5f, 0.4f, 0.02f, 0.001f}, {}, {0.4f, 0.3f, 0.2f, 0.1f}, 4.0});
  return id;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(ReportFamilies, PrintsWritesAndRefusesItsOptionsAlone) {
  test::TempDir dir;
  {
    auto s = store::RunStore::open(dir.file("runs.db"));
    addImported(s, "Llama-3.2-1B", "LlamaForCausalLM");
    addImported(s, "OLMo-2-1B", "Olmo2ForCausalLM");
  }
  const std::string cli = depthlab::test::cliPath() + " --db " + dir.file("runs.db") + " ";
  std::string out;
  ASSERT_EQ(test::runCommand(cli + "report --runs all --families --csv " + dir.file("t.csv") +
                                 " --latex " + dir.file("t.tex") + " --profiles " +
                                 dir.file("p.csv") + " 2>&1",
                             &out),
            0)
      << out;
  EXPECT_NE(out.find("OLMo 2"), std::string::npos) << out;
  EXPECT_NE(out.find("2 (50%)"), std::string::npos) << out;  // lazy by E_l and by pruning
  EXPECT_NE(slurp(dir.file("t.csv")).find("Llama-3.2-1B,Llama,LlamaForCausalLM,4,0,2,0,2"),
            std::string::npos)
      << slurp(dir.file("t.csv"));
  EXPECT_NE(slurp(dir.file("t.tex")).find("\\begin{tabular}"), std::string::npos);
  EXPECT_NE(slurp(dir.file("p.csv")).find("OLMo-2-1B,OLMo 2,4,1.0000,0.001,,0.1,0.01"),
            std::string::npos)
      << slurp(dir.file("p.csv"));
  ASSERT_EQ(test::runCommand(cli + "--json report --runs all --families 2>&1", &out), 0) << out;
  const auto j = nlohmann::json::parse(out);
  ASSERT_EQ(j["models"].size(), 2u);
  EXPECT_EQ(j["models"][1]["family"], "OLMo 2");
  EXPECT_EQ(j["models"][1]["lazy_pruning"], 2);
  EXPECT_EQ(test::runCommand(cli + "report --runs all --csv " + dir.file("x.csv") + " 2>&1", &out),
            1)
      << out;
  EXPECT_NE(out.find("--csv goes with --families"), std::string::npos) << out;
  EXPECT_EQ(test::runCommand(cli + "report --runs all --families --prune-share 2 2>&1", &out), 1)
      << out;
  EXPECT_NE(out.find("--prune-share"), std::string::npos) << out;
}
