// See data_bench.h.
#include "bench/data_bench.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "data/corpus.h"
#include "data/corpus_prepare.h"
#include "data/default_corpus.h"
#include "data/token_dataset.h"
#include "data/token_store.h"
#include "data/tokenizer.h"
#include "util/remove_tree.h"

extern char** environ;

namespace depthlab::bench {

namespace fs = std::filesystem;

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

std::vector<std::string> defaultCorpusLines() {
  auto st = data::ensureDefaultCorpus();
  if (!st.ready) throw data::DataError(st.message);
  std::ifstream in(st.path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(line);
  }
  if (lines.empty()) throw data::DataError("the default corpus '" + st.path + "' is empty");
  return lines;
}

// The default corpus's lines, shuffled afresh on every pass, until `bytes` are written; as
// plain text, or as .jsonl records of about 2 kB each.
void generateCorpus(const std::vector<std::string>& lines, uint64_t bytes, bool jsonl,
                    const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  std::mt19937_64 rng(17);
  std::vector<size_t> order(lines.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  uint64_t written = 0;
  std::string buf, doc;
  while (written < bytes) {
    std::shuffle(order.begin(), order.end(), rng);
    for (size_t i : order) {
      if (!jsonl) {
        buf += lines[i];
        buf += '\n';
      } else {
        for (char c : lines[i]) {  // JSON-escaped; control bytes become spaces
          if (static_cast<unsigned char>(c) < 0x20) c = ' ';
          if (c == '"' || c == '\\') doc += '\\';
          doc += c;
        }
        doc += "\\n";
        if (doc.size() > 2000) {
          buf += "{\"id\": " + std::to_string(written) + ", \"text\": \"" + doc +
                 "\", \"source\": \"bench\"}\n";
          doc.clear();
        }
      }
      if (buf.size() > (1u << 22)) {
        out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
        written += buf.size();
        buf.clear();
        if (written >= bytes) break;
      }
    }
  }
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  if (!out) throw data::DataError("cannot write the generated corpus '" + path + "' (disk full?)");
}

// Runs `argv`, returns its exit code, its peak resident memory and the seconds its
// "phase ... first step done" line reported; output goes to `log`.
TrainProbe runTraining(const std::vector<std::string>& argv, const std::string& log) {
  TrainProbe p;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const auto t0 = Clock::now();
  if (posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ) != 0) {
    posix_spawn_file_actions_destroy(&fa);
    p.exitCode = 127;
    p.error = "could not start " + argv[0];
    return p;
  }
  posix_spawn_file_actions_destroy(&fa);
  // The child's own high-water mark (VmHWM of its address space after exec), polled: the
  // rusage of a spawned child also counts the parent's memory at the time of the spawn.
  int status = 0;
  const std::string statusFile = "/proc/" + std::to_string(pid) + "/status";
  while (waitpid(pid, &status, WNOHANG) == 0) {
    std::ifstream st(statusFile);
    std::string key;
    double kb = 0;
    while (st >> key) {
      if (key == "VmHWM:" && st >> kb) p.peakRssMB = std::max(p.peakRssMB, kb / 1024.0);
      if (key == "RssAnon:" && st >> kb) p.peakAnonMB = std::max(p.peakAnonMB, kb / 1024.0);
      if (key == "RssFile:" && st >> kb) p.peakFileMB = std::max(p.peakFileMB, kb / 1024.0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  p.seconds = since(t0);
  p.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.find("first step done") != std::string::npos) {
      std::sscanf(line.c_str(), "phase %lf", &p.firstStepSeconds);
    }
    if (!line.empty()) last = line;
  }
  if (p.exitCode != 0) p.error = last;
  return p;
}

}  // namespace

DataBenchResult runDataBench(const DataBenchOptions& o) {
  DataBenchResult r;
  r.threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto say = [&](const std::string& s) {
    if (o.verbose) std::fprintf(stderr, "bench data: %s\n", s.c_str());
  };
  fs::create_directories(o.dir);
  const auto lines = defaultCorpusLines();
  const std::string text = (fs::path(o.dir) / "bench-corpus.txt").string();
  const std::string jsonl = (fs::path(o.dir) / "bench-corpus.jsonl").string();
  say("generating " + num(o.textGB) + " GB of text and " + num(o.jsonlGB) +
      " GB of .jsonl from the default corpus (" + std::to_string(lines.size()) + " lines, shuffled per pass)");
  generateCorpus(lines, static_cast<uint64_t>(o.textGB * 1e9), false, text);
  generateCorpus(lines, static_cast<uint64_t>(o.jsonlGB * 1e9), true, jsonl);

  // 1. Byte-level tokenization of the text, then of the .jsonl.
  data::PrepareOptions po;
  po.threads = o.threads;
  if (o.verbose) {
    po.progress = [](const data::PrepareProgress& p) {
      std::fprintf(stderr, "\r  %s\033[K", data::formatProgress(p).c_str());
    };
  }
  auto prepare = [&](const std::string& what, const std::string& path, const data::PrepareOptions& opts,
                     Throughput& out, double setupSeconds = 0) {
    say(what);
    auto rep = data::prepareCorpus(path, opts);
    if (o.verbose) std::fprintf(stderr, "\n");
    out.mb = static_cast<double>(rep.inputBytes) / 1e6;
    out.seconds = rep.seconds - setupSeconds;
    out.mbPerSecond = out.mb / out.seconds;
    out.tokens = rep.tokens;
    out.tokensPerSecond = static_cast<double>(rep.tokens) / out.seconds;
    return rep;
  };
  const auto byte = prepare("byte-level tokenization of the text", text, po, r.byte);
  prepare("byte-level tokenization of the .jsonl", jsonl, po, r.jsonl);
  auto t = Clock::now();
  auto reused = data::prepareCorpus(text, po);
  r.reuseSeconds = since(t);
  if (!reused.reused) throw data::DataError("bench data: the unchanged corpus was not reused");

  // 2. SentencePiece on a slice of the text (out of process, one spm_encode per worker).
  if (!data::SpmTokenizer::toolsAvailable()) {
    r.spmSkipped = "the sentencepiece tools are not installed";
  } else {
    const std::string slice = (fs::path(o.dir) / "bench-slice.txt").string();
    generateCorpus(lines, static_cast<uint64_t>(o.spmMB * 1e6), false, slice);
    data::PrepareOptions so = po;
    so.tokenizer = "spm:" + std::to_string(o.spmVocab);
    so.sampleMB = 20;
    double trainStart = 0;
    t = Clock::now();
    so.phase = [&](const std::string& s) {
      if (s.rfind("tokenizing", 0) == 0 && trainStart == 0) trainStart = since(t);
    };
    // The phase callback runs before the report exists: the training time is subtracted after.
    data::PrepareReport rep;
    Throughput spm;
    rep = prepare("SentencePiece " + so.tokenizer + " (trained on 20 MB) on " + num(o.spmMB) + " MB",
                  slice, so, spm);
    r.spmTrainSeconds = trainStart;
    spm.seconds = rep.seconds - trainStart;
    spm.mbPerSecond = spm.mb / spm.seconds;
    spm.tokensPerSecond = static_cast<double>(spm.tokens) / spm.seconds;
    r.spm = spm;
  }

  // 3. The loader at the LLaMA-130M shape (512 x 256 per step) on the billion-token store.
  t = Clock::now();
  auto mapped = data::openTokenStore(byte.storeDir);
  r.openStoreSeconds = since(t);
  r.bigStoreTokens = mapped->size();
  data::TokenDataset ds(mapped, mapped->vocabSize(), 0.05, 256, 512);  // 257: bytes + end of document
  const int steps = 40;
  t = Clock::now();
  uint64_t sink = 0;
  for (int s = 0; s < steps; ++s) sink += static_cast<uint64_t>(ds.trainBatch(1, s, 0).inputs[0]);
  r.loaderTokensPerSecond = static_cast<uint64_t>(steps * 512.0 * 256.0 / since(t));
  if (sink == 0xFFFFFFFFFFFFull) std::fprintf(stderr, " ");

  // 4. Training runs: a billion-token store against a small one (the default corpus's).
  if (!o.trainExe.empty()) {
    auto smallStore = data::prepareCorpus(data::ensureDefaultCorpus().path, data::PrepareOptions{});
    r.smallStoreTokens = smallStore.tokens;
    auto train = [&](const std::string& corpus, const std::string& tag) {
      const std::string db = (fs::path(o.dir) / ("bench-" + tag + ".db")).string();
      say("training " + o.trainPreset + " for " + std::to_string(o.trainSteps) + " steps on the " + tag + " store");
      return runTraining({o.trainExe, "--db", db, "train", "--preset", o.trainPreset, "--steps",
                          std::to_string(o.trainSteps), "--corpus", corpus, "--checkpoint-dir",
                          (fs::path(o.dir) / ("ckpt-" + tag)).string(), "--name", "bench-" + tag},
                         (fs::path(o.dir) / ("train-" + tag + ".log")).string());
    };
    r.smallStore = train(smallStore.storeDir, "small");
    r.bigStore = train(byte.storeDir, "big");
  }
  if (!o.keep) {
    for (const auto& name : {"bench-corpus.txt", "bench-corpus.jsonl", "bench-slice.txt"}) {
      std::error_code ec;
      fs::remove(fs::path(o.dir) / name, ec);
    }
    util::removeTree(o.dir);
  }
  return r;
}

}  // namespace depthlab::bench
