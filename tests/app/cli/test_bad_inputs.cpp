// Bad input, table-driven, through the real depthlab-cli: every case exits with status 1 (no
// signal, no crash) and a message that names the file, option or field at fault. One database
// with a trained run serves the cases that need one.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "support/build_paths.h"
#include "support/temp_dir.h"

using namespace depthlab;
namespace fs = std::filesystem;

namespace {

struct Case {
  std::string name;
  std::string args;                      // after depthlab-cli
  std::vector<std::string> mustMention;  // substrings of the output
};

std::string cli() { return depthlab::test::cliPath(); }

class BadInputs : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new test::TempDir;
    std::string text;
    for (int i = 0; text.size() < 40000; ++i)
      text += "the curse of depth and layer norm scaling " + std::to_string(i % 97) + "\n";
    test::writeFile(dir_->file("corpus.txt"), text);
    test::writeFile(dir_->file("empty.txt"), "");
    fs::create_directories(dir_->file("binaries"));
    fs::copy_file("/bin/ls", dir_->file("binaries/ls"));
    fs::copy_file("/bin/true", dir_->file("binaries/true"));
    test::writeFile(dir_->file("broken.json"), "{\"model\": {\"dModel\": ");
    test::writeFile(dir_->file("unknown-key.json"), "{\"model\": {\"widht\": 64}}");
    test::writeFile(dir_->file("broken-lines.json"),
                    "{\n  \"model\": {\n    \"dModel\": 64,,\n  }\n}\n");
    test::writeFile(dir_->file("vocab10.json"), "{\"model\": {\"vocabSize\": 10}}");
    test::writeFile(dir_->file("preset-nope.json"), "{\"preset\": \"nope\"}");
    test::writeFile(dir_->file("null.json"), "{\"model\": {\"dModel\": null}}");
    test::writeFile(dir_->file("nul.json"), std::string("{\"optim\": {\"steps\": 2}}\n\0\0", 27));
    test::writeFile(dir_->file("e400.json"), "{\"optim\": {\"lr\": 1e400}}");
    test::writeFile(dir_->file("long-name.json"), "{\"name\": \"" + std::string(300, 'g') + "\"}");
    fs::create_directories(dir_->file("config-folder.json"));
    test::writeFile(
        dir_->file("huge.json"),
        "{\"model\": {\"dModel\": 8192, \"nLayers\": 200, \"nHeads\": 64, \"dFF\": 21888}}");
    // Hugging Face folders: no config, an unsupported architecture, weights that do not match.
    fs::create_directories(dir_->file("hf-empty"));
    fs::create_directories(dir_->file("hf-bloom"));
    test::writeFile(dir_->file("hf-bloom/config.json"),
                    R"({"architectures": ["BloomForCausalLM"]})");
    fs::create_directories(dir_->file("hf-noweights"));
    test::writeFile(
        dir_->file("hf-noweights/config.json"),
        R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 8, "intermediate_size": 8,
                        "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 10})");
    fs::create_directories(dir_->file("hf-badweights"));
    fs::copy_file(dir_->file("hf-noweights/config.json"), dir_->file("hf-badweights/config.json"));
    test::writeFile(dir_->file("hf-badweights/model.safetensors"),
                    std::string("\x07\0\0\0\0\0\0\0{\"a\":1}", 15));
    test::writeFile(dir_->file("ids-bad.txt"), "1 2 x\n");
    test::writeFile(dir_->file("not-a-db.db"), "this is not a database, just text\n");
    test::writeFile(dir_->file("corrupt.db"),
                    std::string("SQLite format 3") + '\0' + std::string(5000, 'x'));
    std::string out;
    const int rc = test::runCommand(
        cli() + " --db " + db() + " train --preset tiny --steps 6 --corpus " +
            dir_->file("corpus.txt") + " --checkpoint-dir " + dir_->file("ck") + " --quiet",
        &out);
    ASSERT_EQ(rc, 0) << out;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string db() { return dir_->file("runs.db"); }
  static test::TempDir* dir_;
};
test::TempDir* BadInputs::dir_ = nullptr;

// The newest checkpoint file of run `id` (under the test's checkpoint folder).
std::string newestCheckpoint(const std::string& root, int id) {
  std::string best;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const auto p = e.path().string();
    if (p.find("/run-" + std::to_string(id) + "/") != std::string::npos &&
        e.path().extension() == ".ckpt") {
      if (best.empty() || fs::last_write_time(e.path()) > fs::last_write_time(best)) best = p;
    }
  }
  return best;
}

}  // namespace

TEST_F(BadInputs, EveryCaseFailsCleanlyNamingWhatIsWrong) {
  const std::string C = dir_->file("corpus.txt");
  const std::string train = " --db " + dir_->file("t.db") +
                            " train --preset tiny --quiet --checkpoint-dir " + dir_->file("ck2") +
                            " ";
  const std::vector<Case> cases = {
      {"steps 0", train + "--steps 0 --corpus " + C, {"--steps"}},
      {"nproc 0", train + "--steps 2 --nproc 0 --corpus " + C, {"--nproc"}},
      {"nproc that does not split the batch",
       train + "--steps 2 --nproc 3 --corpus " + C,
       {"run.processes", "split evenly", "multiple of 3"}},
      {"nccl on the cpu",
       train + "--steps 2 --nproc 2 --backend nccl --corpus " + C,
       {"nccl", "CUDA"}},
      {"unknown backend",
       train + "--steps 2 --nproc 2 --backend mpi --corpus " + C,
       {"--backend", "mpi"}},
      {"steps negative", train + "--steps -5 --corpus " + C, {"--steps", "-5"}},
      {"binary corpus", train + "--steps 2 --corpus /bin/ls", {"/bin/ls", "UTF-8"}},
      {"folder of binaries",
       train + "--steps 2 --corpus " + dir_->file("binaries"),
       {"binaries", "binary"}},
      {"missing corpus", train + "--steps 2 --corpus " + dir_->file("absent.txt"), {"absent.txt"}},
      {"empty corpus",
       train + "--steps 2 --corpus " + dir_->file("empty.txt"),
       {"empty.txt", "empty"}},
      {"spm vocabulary",
       train + "--steps 2 --tokenizer spm:99999999999 --corpus " + C,
       {"spm:99999999999"}},
      {"threads negative", train + "--steps 2 --threads -2 --corpus " + C, {"--threads"}},
      {"micro-batch not dividing",
       train + "--steps 2 --micro-batch 7 --corpus " + C,
       {"--micro-batch"}},
      {"unknown preset", " --db " + dir_->file("t.db") + " train --preset nope", {"nope"}},
      {"unknown scheme", train + "--steps 2 --scheme pre_ln,foo --corpus " + C, {"foo"}},
      {"unknown device", train + "--steps 2 --device tpu --corpus " + C, {"tpu"}},
      {"unknown packing",
       train + "--steps 2 --packing foo --corpus " + C,
       {"data.packing", "packed, document"}},
      {"one document", train + "--steps 2 --packing document --corpus " + C, {"too few documents"}},
      {"broken config",
       train + "--config " + dir_->file("broken.json"),
       {"broken.json", "line 1, column 22"}},
      {"broken config, line 3",
       train + "--config " + dir_->file("broken-lines.json"),
       {"broken-lines.json", "line 3, column"}},
      {"empty scheme list", train + "--steps 2 --scheme '' --corpus " + C, {"--scheme", "pre_ln"}},
      {"analyze past the last step",
       " --db " + db() + " analyze --run 1 --step 99999",
       {"--step 99999", "step 6"}},
      {"unknown config key", train + "--config " + dir_->file("unknown-key.json"), {"widht"}},
      {"unknown preset in a config",
       train + "--config " + dir_->file("preset-nope.json"),
       {"preset-nope.json", "unknown preset 'nope'"}},
      {"null in a config", train + "--config " + dir_->file("null.json"), {"model.dModel", "null"}},
      {"NUL bytes in a config",
       train + "--config " + dir_->file("nul.json"),
       {"nul.json", "NUL byte"}},
      {"a number past a double",
       train + "--config " + dir_->file("e400.json"),
       {"e400.json", "1e400"}},
      {"a folder as config",
       train + "--config " + dir_->file("config-folder.json"),
       {"config-folder.json", "is a folder"}},
      {"a group name of 300 characters",
       train + "--config " + dir_->file("long-name.json"),
       {"group name is 300 characters"}},
      {"huge model",
       train + "--steps 2 --corpus " + C + " --config " + dir_->file("huge.json"),
       {"MB", "available"}},
      {"report no runs", " --db " + db() + " report --runs ''", {"--runs"}},
      {"report bad id", " --db " + db() + " report --runs abc", {"'abc'"}},
      {"report absent run", " --db " + db() + " report --runs 999", {"999"}},
      {"analyze negative step", " --db " + db() + " analyze --run 1 --step -5", {"--step"}},
      {"analyze absent run", " --db " + db() + " analyze --run 999", {"999"}},
      {"show absent run", " --db " + db() + " runs show 999", {"999"}},
      {"export width 0",
       " --db " + db() + " export --runs 1 --figure loss --width 0 --out " + dir_->file("x.pdf"),
       {"--width"}},
      {"export dpi negative",
       " --db " + db() + " export --runs 1 --figure loss --format png --dpi -5 --out " +
           dir_->file("x.png"),
       {"--dpi"}},
      {"export missing style",
       " --db " + db() + " export --runs 1 --figure loss --style " + dir_->file("s.json") +
           " --out " + dir_->file("x.pdf"),
       {"s.json"}},
      {"export bad runs",
       " --db " + db() + " export --runs abc --figure loss --out " + dir_->file("x.pdf"),
       {"'abc'"}},
      {"import-hf no folder",
       " --db " + db() + " import-hf " + dir_->file("absent"),
       {"absent", "not a folder"}},
      {"import-hf no config",
       " --db " + db() + " import-hf " + dir_->file("hf-empty"),
       {"config.json"}},
      {"import-hf architecture",
       " --db " + db() + " import-hf " + dir_->file("hf-bloom"),
       {"BloomForCausalLM", "not supported"}},
      {"import-hf no weights",
       " --db " + db() + " import-hf " + dir_->file("hf-noweights"),
       {"model.safetensors"}},
      {"import-hf bad header",
       " --db " + db() + " import-hf " + dir_->file("hf-badweights"),
       {"model.safetensors", "malformed"}},
      {"eval batch 0", " --db " + db() + " eval --run 1 --batch 0", {"--batch"}},
      {"eval bad ids",
       " --db " + db() + " eval --run 1 --tokens " + dir_->file("ids-bad.txt"),
       {"ids-bad.txt", "line 1"}},
      {"eval absent run", " --db " + db() + " eval --run 999 --corpus " + C, {"999"}},
      {"analyze corpus on a trained run",
       " --db " + db() + " analyze --run 1 --corpus " + C,
       {"--corpus", "imported"}},
      {"export-hf absent run",
       " --db " + db() + " export-hf --run 999 --out " + dir_->file("hfout"),
       {"999"}},
      {"not a database", " --db " + dir_->file("not-a-db.db") + " runs list", {"not-a-db.db"}},
      {"corrupt database", " --db " + dir_->file("corrupt.db") + " runs list", {"corrupt.db"}},
  };
  const bool haveExport = fs::exists(fs::path(cli()).parent_path() / "depthlab-export");
  int clear = 0, ran = 0;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    if (!haveExport && c.args.find(" export ") != std::string::npos) continue;  // GUI-less build
    ++ran;
    std::string out;
    const int rc = test::runCommand(cli() + c.args, &out);
    EXPECT_EQ(rc, 1) << out;  // a clean error exit: not 0, not a signal (-1)
    bool named = true;
    for (const auto& m : c.mustMention) {
      if (out.find(m) == std::string::npos) {
        named = false;
        ADD_FAILURE() << "the message does not mention '" << m << "': " << out;
      }
    }
    EXPECT_EQ(out.find("Exception raised from"), std::string::npos) << out;  // no LibTorch trace
    clear += rc == 1 && named;
  }
  std::printf("bad inputs: %d of %d answered clearly\n", clear, ran);
}

TEST_F(BadInputs, CheckpointsThatDoNotBelongOrAreDamagedAreRefusedByName) {
  const std::string ck = newestCheckpoint(dir_->file("ck"), 1);
  ASSERT_FALSE(ck.empty());
  // A bad tensor archive with a valid outer checksum cannot be made by hand; a truncated and a
  // replaced file can: both are refused naming the file, and nothing is written.
  const std::string saved = test::readFile(ck);
  test::writeFile(ck, saved.substr(0, saved.size() / 2));
  std::string out;
  EXPECT_EQ(test::runCommand(cli() + " --db " + db() + " analyze --run 1", &out), 1) << out;
  EXPECT_NE(out.find(ck), std::string::npos) << out;
  const std::string other = newestCheckpoint(dir_->file("ck"), 2);  // the lns run's file
  fs::copy_file(other, ck, fs::copy_options::overwrite_existing);
  EXPECT_EQ(test::runCommand(cli() + " --db " + db() + " analyze --run 1", &out), 1) << out;
  EXPECT_NE(out.find("does not belong to run 1"), std::string::npos) << out;
  test::writeFile(ck, saved);
  EXPECT_EQ(test::runCommand(cli() + " --db " + db() + " analyze --run 1 --probes variance", &out),
            0)
      << out;
}

TEST_F(BadInputs, ReadOnlyDatabasesServeTheReadingCommands) {
  if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "setpriv is needed to drop root";
  // A copy in a folder only root may write, read by an unprivileged user (root ignores modes).
  const std::string ro = dir_->file("ro");
  fs::create_directories(ro);
  fs::copy_file(db(), ro + "/runs.db");
  chmod(dir_->path().c_str(), 0755);
  chmod(ro.c_str(), 0755);
  chmod((ro + "/runs.db").c_str(), 0644);
  const std::string asNobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  std::string out;
  if (test::runCommand(asNobody + cli() + " --version", &out) != 0) {
    // e.g. the torch2 build, whose LibTorch lives in root's private cache
    GTEST_SKIP() << "depthlab-cli cannot start as an unprivileged user here: " << out;
  }
  EXPECT_EQ(test::runCommand(asNobody + cli() + " --db " + ro + "/runs.db runs list", &out), 0)
      << out;
  EXPECT_NE(out.find("pre_ln"), std::string::npos) << out;
  EXPECT_EQ(test::runCommand(asNobody + cli() + " --db " + ro + "/runs.db report --runs 1,2", &out),
            0)
      << out;
  EXPECT_EQ(test::runCommand(asNobody + cli() + " --db " + ro +
                                 "/runs.db train --preset tiny --steps 2 --corpus " +
                                 dir_->file("corpus.txt"),
                             &out),
            1)
      << out;
  EXPECT_NE(out.find(ro + "/runs.db"), std::string::npos) << out;
  EXPECT_NE(out.find("read-only"), std::string::npos) << out;
}

TEST_F(BadInputs, ResumeTakesQuietAndThreadsLikeTrain) {
  std::string out;
  EXPECT_EQ(test::runCommand(cli() + " --db " + db() + " resume 2 --quiet --threads 1", &out), 0)
      << out;
  EXPECT_NE(out.find("nothing to resume"), std::string::npos) << out;
  EXPECT_EQ(test::runCommand(cli() + " --db " + db() + " resume 2 --threads -1", &out), 1) << out;
  EXPECT_NE(out.find("--threads"), std::string::npos) << out;
}

TEST_F(BadInputs, AVocabularySetByHandIsNamedAndTheTokenizersIsUsed) {
  std::string out;
  EXPECT_EQ(
      test::runCommand(cli() + " --db " + db() + " train --preset tiny --steps 2 --corpus " +
                           dir_->file("corpus.txt") + " --config " + dir_->file("vocab10.json") +
                           " --checkpoint-dir " + dir_->file("ck") + " --quiet 2>&1",
                       &out),
      0)
      << out;
  EXPECT_NE(out.find("model.vocabSize 10 is not used"), std::string::npos) << out;
  EXPECT_NE(out.find("the tokenizer byte (257 ids"), std::string::npos) << out;
  // The same given with --set (it had been ignored without a word).
  EXPECT_EQ(test::runCommand(cli() + " --db " + db() + " train --preset tiny --steps 2 --corpus " +
                                 dir_->file("corpus.txt") + " --set model.vocabSize=16000000" +
                                 " --checkpoint-dir " + dir_->file("ck") + " --quiet 2>&1",
                             &out),
            0)
      << out;
  EXPECT_NE(out.find("--set: model.vocabSize 16000000 is not used"), std::string::npos) << out;
}

TEST_F(BadInputs, RefusalsThatNeedNoDataComeBeforeAnyIsPrepared) {
  // A FIFO as corpus had blocked for ever; a CUDA device on a machine without one trained a
  // SentencePiece tokenizer first.
  const std::string fifo = dir_->file("corpus.fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string train =
      " --db " + dir_->file("t3.db") + " train --preset tiny --quiet --steps 2 ";
  std::string out;
  EXPECT_EQ(test::runCommand("timeout 120 " + cli() + train + "--corpus " + fifo + " 2>&1", &out),
            1)
      << out;
  EXPECT_NE(out.find("is not a file or a folder (a FIFO)"), std::string::npos) << out;
  fs::create_directories(dir_->file("spm"));
  fs::copy_file(dir_->file("corpus.txt"), dir_->file("spm/c.txt"));
  const int rc = test::runCommand(cli() + train + "--device cuda --tokenizer spm:300 --corpus " +
                                      dir_->file("spm/c.txt") + " 2>&1",
                                  &out);
  if (rc == 0) GTEST_SKIP() << "a CUDA GPU is here: nothing to refuse";
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("cuda"), std::string::npos) << out;
  for (const auto& e : fs::directory_iterator(dir_->file("spm"))) {
    EXPECT_EQ(e.path().filename(), "c.txt") << "written before the refusal: " << e.path();
  }
}
