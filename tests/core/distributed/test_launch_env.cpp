// The launcher's environment: torchrun's variables, Slurm's, none, and malformed ones.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "distributed/launch_env.h"

using namespace depthlab::distributed;

namespace {
auto envOf(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}
}  // namespace

TEST(LaunchEnv, NoLauncherMeansOneProcess) {
  EXPECT_FALSE(readLaunchEnv(envOf({})).has_value());
  EXPECT_FALSE(readLaunchEnv(envOf({{"MASTER_PORT", "1234"}})).has_value());
}

TEST(LaunchEnv, ReadsTorchrunVariables) {
  auto e = readLaunchEnv(envOf({{"RANK", "3"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"},
                                {"MASTER_ADDR", "node7"}, {"MASTER_PORT", "29411"}}));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->rank, 3);
  EXPECT_EQ(e->worldSize, 8);
  EXPECT_EQ(e->localRank, 1);
  EXPECT_EQ(e->masterAddr, "node7");
  EXPECT_EQ(e->masterPort, 29411);
  EXPECT_EQ(e->source, "torchrun");
  EXPECT_FALSE(e->agentStore);
  // torchrun's agent serves the rendezvous store itself: rank 0 must connect, not serve
  auto agent = readLaunchEnv(envOf({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"}}));
  ASSERT_TRUE(agent.has_value());
  EXPECT_TRUE(agent->agentStore);
}

TEST(LaunchEnv, ReadsSlurmVariablesWhenTorchrunsAreAbsent) {
  auto e = readLaunchEnv(envOf({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "6"}, {"SLURM_LOCALID", "2"},
                                {"MASTER_ADDR", "10.0.0.4"}}));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->rank, 5);
  EXPECT_EQ(e->worldSize, 6);
  EXPECT_EQ(e->localRank, 2);
  EXPECT_EQ(e->masterAddr, "10.0.0.4");
  EXPECT_EQ(e->masterPort, 29500);  // the default port
  EXPECT_EQ(e->source, "slurm");
  // torchrun inside an allocation: its own variables win
  auto t = readLaunchEnv(envOf({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "6"}, {"RANK", "0"},
                                {"WORLD_SIZE", "2"}}));
  ASSERT_TRUE(t.has_value());
  EXPECT_EQ(t->worldSize, 2);
  EXPECT_EQ(t->source, "torchrun");
}

TEST(LaunchEnv, RefusesMalformedVariablesNamingThem) {
  auto expectThrowNaming = [](std::map<std::string, std::string> vars, const std::string& name) {
    try {
      readLaunchEnv(envOf(vars));
      ADD_FAILURE() << "accepted " << name;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
  };
  expectThrowNaming({{"RANK", "2"}, {"WORLD_SIZE", "2"}}, "RANK");           // rank outside
  expectThrowNaming({{"RANK", "x"}, {"WORLD_SIZE", "2"}}, "RANK");
  expectThrowNaming({{"RANK", "0"}, {"WORLD_SIZE", "0"}}, "WORLD_SIZE");
  expectThrowNaming({{"WORLD_SIZE", "4"}}, "RANK");                          // rank missing
  expectThrowNaming({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}, "MASTER_PORT");
  expectThrowNaming({{"SLURM_PROCID", "1x"}, {"SLURM_NTASKS", "2"}}, "SLURM_PROCID");
}

TEST(LaunchEnv, WorkerVariablesReadBackAsTheSameRank) {
  LaunchEnv e;
  e.rank = 1, e.worldSize = 2, e.localRank = 1, e.masterPort = 40001;
  std::map<std::string, std::string> vars;
  for (const auto& [k, v] : launchVariables(e)) vars[k] = v;
  auto back = readLaunchEnv(envOf(vars));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->rank, 1);
  EXPECT_EQ(back->worldSize, 2);
  EXPECT_EQ(back->masterPort, 40001);
  EXPECT_EQ(back->source, "depthlab");
}
