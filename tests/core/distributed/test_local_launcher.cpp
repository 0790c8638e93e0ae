// The `--nproc` launcher against a port that another process takes between the launcher's
// choice and rank 0's bind: rank 0 of a real group says so with its own error, the launcher
// stops the ranks at once and starts them again on another port (only a port it chose, and
// only while attempts remain). The ranks here are small shell scripts that act as rank 0 does.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "distributed/local_launcher.h"
#include "distributed/process_group.h"
#include "support/held_port.h"
#include "support/temp_dir.h"

using namespace depthlab;

namespace {

// Ports handed out in order by the launcher's pickPort hook.
struct PortSequence {
  std::vector<int> ports;
  int calls = 0;
  int operator()() { return ports.at(static_cast<size_t>(calls++)); }
};

// A rank that plays rank 0's part: exit 75 on `takenPort` when the launcher may retry (1 when it
// may not: a plain failure); rank 1 waits there for a rendezvous that never comes. A rank on
// any other port writes "RANK PORT" to `log`.
distributed::LocalLaunch scriptedLaunch(const std::string& log, int takenPort) {
  const std::string port = std::to_string(takenPort);
  distributed::LocalLaunch l;
  l.executable = "/bin/sh";
  l.args = {"-c",
            "if [ \"$MASTER_PORT\" = " + port + " ]; then "
            "  if [ \"$RANK\" = 0 ]; then [ \"$DEPTHLAB_PORT_RETRY\" = 1 ] && exit 75; exit 1; fi; "
            "  exec sleep 30; "
            "fi; echo \"$RANK $MASTER_PORT\" >> " + log + "; exit 0"};
  l.processes = 2;
  l.graceSeconds = 60;  // a port taken must not wait for it
  return l;
}

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST(LocalLauncher, RanksWhosePortWasTakenStartAgainAtOnceOnAnother) {
  test::TempDir dir;
  auto l = scriptedLaunch(dir.file("log"), 40001);
  PortSequence seq{{40001, 40002}};
  l.pickPort = [&] { return seq(); };
  std::vector<std::string> notices;
  l.onNotice = [&](const std::string& n) { notices.push_back(n); };
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(distributed::runLocalRanks(l), 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(seconds, 10.0);  // rank 1 was stopped at once, not after the grace period
  EXPECT_EQ(seq.calls, 2);
  const std::string log = readAll(dir.file("log"));
  EXPECT_NE(log.find("0 40002"), std::string::npos) << log;
  EXPECT_NE(log.find("1 40002"), std::string::npos) << log;
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].find("port 40001 was taken"), std::string::npos) << notices[0];
}

TEST(LocalLauncher, APortTheUserChoseIsNeverSwappedAndTheLastAttemptFailsPlainly) {
  test::TempDir dir;
  auto mine = scriptedLaunch(dir.file("log"), 40003);
  mine.masterPort = 40003;  // the user's: its failure is theirs to see (exit 1, not a retry)
  mine.graceSeconds = 1;
  EXPECT_EQ(distributed::runLocalRanks(mine), 1);

  auto l = scriptedLaunch(dir.file("log"), 40004);
  PortSequence seq{{40004, 40004}};  // taken every time
  l.pickPort = [&] { return seq(); };
  l.portAttempts = 2;
  l.graceSeconds = 1;
  EXPECT_EQ(distributed::runLocalRanks(l), 1);  // the last attempt may not retry: rank 0 says why
  EXPECT_EQ(seq.calls, 2);
}

TEST(LocalLauncher, RankZeroOnATakenPortSaysThePortIsTaken) {
  const test::HeldPort held;
  distributed::LaunchEnv env;
  env.rank = 0;
  env.worldSize = 2;
  env.masterPort = held.port();
  try {
    distributed::DistContext::create(env, "gloo", torch::kCPU, 5);
    ADD_FAILURE() << "rank 0 served a port another socket holds";
  } catch (const distributed::PortTakenError& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(env.masterPort)), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a PortTakenError: " << e.what();
  }
  EXPECT_TRUE(distributed::saysAddressInUse("bind: errno: 98 - Address already in use"));
  EXPECT_TRUE(distributed::saysAddressInUse("uv_listen: address already in use (EADDRINUSE)"));
  EXPECT_FALSE(distributed::saysAddressInUse("connection refused"));
}
