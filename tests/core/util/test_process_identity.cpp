// Process identity: this process is alive, a reaped child and a foreign host are not.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include "util/process_identity.h"

using namespace depthlab::util;

TEST(ProcessIdentity, SelfIsAlive) {
  auto me = currentProcess();
  EXPECT_GT(me.startTicks, 0);
  EXPECT_TRUE(isAlive(me));
}

TEST(ProcessIdentity, ExitedChildAndReusedPidAreDead) {
  pid_t child = fork();
  if (child == 0) _exit(0);
  ProcessIdentity id{hostName(), bootId(), child, processStartTicks(child)};
  int status;
  waitpid(child, &status, 0);
  EXPECT_FALSE(isAlive(id));
  auto me = currentProcess();
  me.startTicks += 1;  // same pid, different start: a reused pid
  EXPECT_FALSE(isAlive(me));
}

TEST(ProcessIdentity, OtherHostIsNotJudgedAlive) {
  auto me = currentProcess();
  me.host += "-elsewhere";
  EXPECT_FALSE(isAlive(me));
}
