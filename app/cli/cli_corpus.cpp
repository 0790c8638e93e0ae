// `depthlab-cli corpus prepare PATH` (tokenize a corpus into its token store ahead of
// training, with progress; Ctrl-C keeps the finished shards and the next run resumes) and
// `depthlab-cli corpus info PATH` (what a store, token file or corpus holds). Printing only;
// the work is data::prepareCorpus.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>

#include "cli_common.h"
#include "data/corpus.h"
#include "data/corpus_prepare.h"
#include "data/token_dataset.h"
#include "data/token_store.h"

namespace depthlab::cli {

namespace {

std::atomic<bool> g_stop{false};
void onSignal(int) { g_stop.store(true); }

struct PrepareArgs {
  std::string path, tokenizer = "byte", out;
  uint64_t shardTokens = 100000000;
  int threads = 0, sampleMB = 100;
  bool quiet = false, verify = false;
};

nlohmann::json reportJson(const data::PrepareReport& r) {
  return {{"store", r.storeDir},
          {"tokenizer", r.tokenizerName},
          {"vocab", r.vocab},
          {"eod", r.eod},
          {"tokens", r.tokens},
          {"shards", r.shards},
          {"inputBytes", r.inputBytes},
          {"textBytes", r.textBytes},
          {"seconds", r.seconds},
          {"reused", r.reused},
          {"interrupted", r.interrupted},
          {"resumedShards", r.resumedShards},
          {"rebuildReason", r.rebuildReason},
          {"skipped",
           {{"linesWithoutText", r.skipped.linesWithoutText},
            {"invalidJsonLines", r.skipped.invalidJsonLines},
            {"invalidUtf8Lines", r.skipped.invalidUtf8Lines},
            {"binaryFiles", r.skipped.binaryFiles}}}};
}

int runPrepare(const PrepareArgs& a, const GlobalOptions& g) {
  data::PrepareOptions o;
  o.tokenizer = a.tokenizer;
  o.storeDir = a.out;
  o.shardTokens = a.shardTokens;
  o.threads = a.threads;
  o.sampleMB = a.sampleMB;
  o.verify = a.verify;
  o.stop = &g_stop;
  const bool tty = isatty(fileno(stderr));
  if (!a.quiet) {
    o.phase = [](const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); };
    // On a terminal one line redrawn twice a second; in a log a line every 5 s.
    o.progress = [tty, last = std::chrono::steady_clock::time_point{}](
                     const data::PrepareProgress& p) mutable {
      const auto now = std::chrono::steady_clock::now();
      if (!tty && now - last < std::chrono::seconds(5) && p.rawDone < p.rawTotal) return;
      last = now;
      std::fprintf(stderr, tty ? "\r%s\033[K" : "%s\n", data::formatProgress(p).c_str());
    };
  }
  std::signal(SIGINT, onSignal);
  std::signal(SIGTERM, onSignal);
  const auto r = data::prepareCorpus(a.path, o);
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (!a.quiet && tty) std::fprintf(stderr, "\n");
  if (g.json) {
    std::printf("%s\n", reportJson(r).dump().c_str());
    return r.interrupted ? 130 : 0;
  }
  const double mb = static_cast<double>(r.inputBytes) / 1e6;
  std::printf("corpus:     %s (%.1f MB on disk)\n", a.path.c_str(), mb);
  std::printf("store:      %s%s\n", r.storeDir.c_str(),
              r.reused ? "  (up to date: nothing to do)" : "");
  if (!r.rebuildReason.empty()) std::printf("rebuilt:    %s\n", r.rebuildReason.c_str());
  std::printf("tokenizer:  %s (vocabulary %d)\n", r.tokenizerName.c_str(), r.vocab);
  std::printf("documents:  each ends with the end-of-document id %d\n", r.eod);
  std::printf(
      "tokens:     %llu in %zu shard%s%s\n", static_cast<unsigned long long>(r.tokens), r.shards,
      r.shards == 1 ? "" : "s",
      r.resumedShards ? (" (resumed after " + std::to_string(r.resumedShards) + ")").c_str() : "");
  if (!r.reused && r.seconds > 0) {
    std::printf("time:       %.1f s (%.1f MB/s, %.2f M tokens/s)\n", r.seconds, mb / r.seconds,
                static_cast<double>(r.tokens) / 1e6 / r.seconds);
  } else {
    std::printf("time:       %.2f s\n", r.seconds);
  }
  if (r.skipped.total() > 0) std::printf("skipped:    %s\n", r.skipped.summary().c_str());
  if (r.interrupted) {
    std::printf("interrupted: %zu finished shard(s) kept; run the same command again to resume\n",
                r.shards);
    return 130;
  }
  return 0;
}

// "1,116,224": a count a reader takes in at a glance.
std::string grouped(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// `corpus info` for a reader: one fact a line (what --json prints whole).
std::string infoText(const std::string& path, const nlohmann::json& j) {
  auto get = [&j](const char* key, auto fallback) { return j.value(key, fallback); };
  std::string out;
  auto line = [&out](const std::string& key, const std::string& value) {
    out += key + std::string(key.size() < 13 ? 13 - key.size() : 1, ' ') + value + "\n";
  };
  if (j.contains("tokenFiles")) {
    line("token files", path);
    line("tokens", grouped(get("tokens", uint64_t{0})) + " in " + std::to_string(get("files", 0)) +
                       " file(s)");
    line("vocabulary", std::to_string(get("vocab", 0)));
    return out;
  }
  line("token store", path + (get("verified", false) ? " (every shard verified)" : ""));
  line("corpus", get("corpus", std::string("?")) + " (" + std::to_string(get("sourceFiles", 0)) +
                     " file(s), " + grouped(get("inputBytes", uint64_t{0})) + " bytes of text)");
  line("tokenizer", get("tokenizerName", get("tokenizer", std::string("?"))) + " (vocabulary " +
                        std::to_string(get("vocab", 0)) + ")");
  line("documents", "each ends with the end-of-document id " + std::to_string(get("eod", -1)));
  const size_t shards = j.contains("shards") ? j["shards"].size() : 0;
  line("tokens", grouped(get("tokens", uint64_t{0})) + " in " + std::to_string(shards) +
                     " shard(s), " + get("dtype", std::string("?")) + " each");
  line("complete", get("complete", false)
                       ? "yes"
                       : "no (a preparation was interrupted; `corpus prepare` resumes it)");
  if (j.contains("preparedAtNs"))
    line("prepared", formatTime(j["preparedAtNs"].get<double>() / 1e9));
  if (j.contains("skipped")) {
    const auto& k = j["skipped"];
    std::string skipped;
    auto add = [&skipped](uint64_t n, const char* what) {
      if (n > 0) skipped += (skipped.empty() ? "" : ", ") + grouped(n) + " " + what;
    };
    add(k.value("binaryFiles", nlohmann::json::array()).size(), "binary file(s)");
    add(k.value("invalidJsonLines", uint64_t{0}), "invalid JSON line(s)");
    add(k.value("invalidUtf8Lines", uint64_t{0}), "invalid UTF-8 line(s)");
    add(k.value("linesWithoutText", uint64_t{0}), "line(s) without text");
    line("skipped", skipped.empty() ? "nothing" : skipped);
  }
  return out;
}

int runInfo(const std::string& path, const GlobalOptions& g) {
  nlohmann::json j;
  if (data::isTokenStore(path)) {
    auto index = data::readStoreIndex(path);
    j = index->toJson();
    j.erase("sources");
    j["sourceFiles"] = index->sources.size();
    auto mapped = data::openTokenStore(path);  // checks every shard
    j["verified"] = true;
  } else if (data::isTokenFile(path) || data::holdsOnlyTokenFiles(path)) {
    auto mapped = data::openTokenFiles(path);
    j = {{"tokenFiles", path},
         {"tokens", mapped->size()},
         {"vocab", mapped->vocabSize()},
         {"files", mapped->segmentCount()}};
  } else {
    throw data::DataError("'" + path +
                          "' is neither a token store nor .bin token files; "
                          "prepare a text corpus with `depthlab-cli corpus prepare`");
  }
  if (g.json) {
    std::printf("%s\n", j.dump().c_str());
    return 0;
  }
  std::printf("%s", infoText(path, j).c_str());
  return 0;
}

}  // namespace

void addCorpusCommand(CLI::App& app, GlobalOptions& g) {
  auto* corpus =
      app.add_subcommand("corpus", "Prepare corpora: tokenize into memory-mapped token stores");
  corpus->require_subcommand(1);
  auto a = std::make_shared<PrepareArgs>();
  auto* prepare = corpus->add_subcommand(
      "prepare", "Tokenize a text file, folder or .jsonl[.gz|.zst] corpus into its token store");
  prepare->add_option("path", a->path, "Corpus: text file, folder, .jsonl, .jsonl.gz, .jsonl.zst")
      ->required();
  prepare->add_option("--tokenizer", a->tokenizer,
                      "byte, spm:N (train N pieces on a sample) or spm:/path.model");
  prepare->add_option("--out", a->out,
                      "Store folder (default: beside the corpus, or the data cache)");
  prepare->add_option("--shard-tokens", a->shardTokens, "Tokens per shard (default 100,000,000)")
      ->check(CLI::Range(uint64_t{1000}, uint64_t{1} << 40));
  prepare->add_option("--threads", a->threads, "Tokenizing workers (default: every core)")
      ->check(CLI::Range(0, 1024));
  prepare->add_option("--sample-mb", a->sampleMB, "Text an spm:N tokenizer trains on (default 100)")
      ->check(CLI::Range(1, 100000));
  prepare->add_flag("--quiet", a->quiet, "No progress lines");
  prepare->add_flag("--verify", a->verify,
                    "Hash every source against the store (an edit that kept a file's size and time "
                    "is otherwise not seen)");
  prepare->callback([&g, a] {
    const int rc = runPrepare(*a, g);
    if (rc != 0) std::exit(rc);
  });
  auto infoPath = std::make_shared<std::string>();
  auto* info = corpus->add_subcommand(
      "info", "What a token store or .bin token file holds (verifies the shards)");
  info->add_option("path", *infoPath, "A token store folder (*.dlstore) or .bin token file(s)")
      ->required();
  info->callback([&g, infoPath] { runInfo(*infoPath, g); });
}

}  // namespace depthlab::cli
