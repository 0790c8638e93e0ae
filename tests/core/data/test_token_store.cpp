// The token store on disk and the token sources: every format round-trips, mapped and
// in-memory windows are equal, damaged or foreign shards are refused by name, and the
// .jsonl text scanner decodes what JSON allows and counts what it cannot use.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <atomic>
#include <thread>

#include "data/corpus.h"
#include "data/jsonl_text.h"
#include "data/token_dataset.h"
#include "data/token_store.h"
#include "support/temp_dir.h"

using namespace depthlab;
using namespace depthlab::data;

namespace {

// Writes `tokens` as a store of shards of at most `perShard` tokens into `dir`.
void writeStore(const std::string& dir, const std::vector<int32_t>& tokens, int vocab,
                size_t perShard, uint64_t buildId = 0xB11D) {
  std::filesystem::create_directories(dir);
  StoreIndex index;
  index.complete = true;
  index.tokenizerSpec = index.tokenizerName = "test";
  index.tokenizerHash = "00000000000000aa";
  index.vocab = vocab;
  index.bytesPerToken = bytesPerTokenFor(vocab);
  char id[17];
  std::snprintf(id, sizeof(id), "%016llx", static_cast<unsigned long long>(buildId));
  index.buildId = id;
  for (size_t at = 0, n = 0; at < tokens.size(); at += perShard, ++n) {
    ShardHeader h;
    h.bytesPerToken = static_cast<uint32_t>(index.bytesPerToken);
    h.vocab = static_cast<uint32_t>(vocab);
    h.tokenizerHash = 0xaa;
    h.buildId = buildId;
    h.shardNumber = n;
    ShardWriter w(dir + "/" + shardFileName(n), h);
    const size_t take = std::min(perShard, tokens.size() - at);
    w.append(tokens.data() + at, take);
    w.finish();
    index.shards.push_back({shardFileName(n), take, n + 1});
  }
  writeStoreIndex(dir, index);
}

std::vector<int32_t> ramp(size_t n, int vocab) {
  std::vector<int32_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<int32_t>((i * 7919) % static_cast<size_t>(vocab));
  return t;
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const DataError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST(TokenStore, ShardsRoundTripAsUint8Uint16AndUint32) {
  test::TempDir dir;
  const auto small = ramp(5000, 300);
  writeStore(dir.file("u16"), small, 300, 1200);
  auto mapped = openTokenStore(dir.file("u16"));
  EXPECT_EQ(mapped->size(), 5000u);
  EXPECT_EQ(mapped->segmentCount(), 5u);
  EXPECT_EQ(mapped->vocabSize(), 300);
  EXPECT_EQ(mapped->readAll(), small);
  EXPECT_EQ(std::filesystem::file_size(dir.file("u16/shard-000000.dltok")), kShardHeaderBytes + 1200 * 2);

  const auto big = ramp(3000, 70000);  // ids past 65535 need 4 bytes
  writeStore(dir.file("u32"), big, 70000, 1000);
  EXPECT_EQ(std::filesystem::file_size(dir.file("u32/shard-000000.dltok")), kShardHeaderBytes + 1000 * 4);
  EXPECT_EQ(openTokenStore(dir.file("u32"))->readAll(), big);
  const auto bytes = ramp(2500, 256);  // the byte tokenizer's ids fit one byte
  writeStore(dir.file("u8"), bytes, 256, 1000);
  EXPECT_EQ(std::filesystem::file_size(dir.file("u8/shard-000000.dltok")), kShardHeaderBytes + 1000);
  EXPECT_EQ(openTokenStore(dir.file("u8"))->readAll(), bytes);
  EXPECT_EQ(readStoreIndex(dir.file("u8"))->toJson()["dtype"], "uint8");
  // A shard is a token file of its own too.
  EXPECT_EQ(readTokenFile(dir.file("u32/shard-000001.dltok")),
            std::vector<int32_t>(big.begin() + 1000, big.begin() + 2000));
  // A window across shard ends reads both.
  std::vector<int64_t> w(10);
  mapped->read(1195, 10, w.data());
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(w[i], small[1195 + i]);
  EXPECT_NE(errorOf([&] { mapped->read(4995, 10, w.data()); }).find("past the end"), std::string::npos);
}

TEST(TokenStore, NanoGptAndLlmcFilesAndFoldersOfThemAreMappedAsTheyAre) {
  test::TempDir dir;
  std::filesystem::create_directories(dir.file("fineweb"));
  const std::vector<uint16_t> a = {5, 6, 7, 65535}, b = {9, 10};
  test::writeFile(dir.file("fineweb/train_000001.bin"), std::string(reinterpret_cast<const char*>(a.data()), 8));
  std::string llmc(1024, '\0');
  const int32_t header[3] = {20240520, 1, 2};
  std::memcpy(llmc.data(), header, sizeof(header));
  llmc += std::string(reinterpret_cast<const char*>(b.data()), 4);
  test::writeFile(dir.file("fineweb/train_000002.bin"), llmc);
  auto both = openTokenFiles(dir.file("fineweb"));
  EXPECT_EQ(both->readAll(), (std::vector<int32_t>{5, 6, 7, 65535, 9, 10}));
  EXPECT_EQ(both->vocabSize(), 65536);
  EXPECT_TRUE(holdsOnlyTokenFiles(dir.file("fineweb")));
  test::writeFile(dir.file("odd.bin"), "abc");
  EXPECT_NE(errorOf([&] { openTokenFiles(dir.file("odd.bin")); }).find("odd number of bytes"), std::string::npos);
  test::writeFile(dir.file("empty.bin"), "");
  EXPECT_NE(errorOf([&] { openTokenFiles(dir.file("empty.bin")); }).find("holds no tokens"), std::string::npos);
}

TEST(TokenStore, TruncatedOrForeignShardsAreRefusedByName) {
  test::TempDir dir;
  writeStore(dir.file("s"), ramp(3000, 256), 256, 1000);
  const std::string shard = dir.file("s/shard-000001.dltok");
  std::string bytes = test::readFile(shard);
  test::writeFile(shard, bytes.substr(0, bytes.size() - 1));
  std::string why = errorOf([&] { openTokenStore(dir.file("s")); });
  EXPECT_NE(why.find("shard-000001.dltok"), std::string::npos) << why;
  EXPECT_NE(why.find("truncated"), std::string::npos) << why;
  EXPECT_NE(why.find("prepare the corpus again"), std::string::npos) << why;

  // A count whose byte size overflows 64 bits to the file's size (found by fuzz_token_file).
  std::string huge = bytes;
  const uint32_t four = 4;
  const uint64_t count = (uint64_t{1} << 62) + (bytes.size() - kShardHeaderBytes) / 4;
  std::memcpy(&huge[12], &four, 4);
  std::memcpy(&huge[24], &count, 8);
  test::writeFile(shard, huge);
  why = errorOf([&] { openTokenStore(dir.file("s")); });
  EXPECT_NE(why.find("header says"), std::string::npos) << why;

  test::writeFile(shard, std::string(bytes.size(), 'x'));
  why = errorOf([&] { openTokenStore(dir.file("s")); });
  EXPECT_NE(why.find("not a DepthLab token shard"), std::string::npos) << why;

  // A valid shard from another preparation (another build id) does not pass for this one.
  writeStore(dir.file("other"), ramp(3000, 256), 256, 1000, 0xBEEF);
  std::filesystem::copy_file(dir.file("other/shard-000001.dltok"), shard,
                             std::filesystem::copy_options::overwrite_existing);
  why = errorOf([&] { openTokenStore(dir.file("s")); });
  EXPECT_NE(why.find("another preparation"), std::string::npos) << why;

  // An index that is not JSON, and an unfinished store.
  test::writeFile(dir.file("other/index.json"), "{not json");
  why = errorOf([&] { openTokenStore(dir.file("other")); });
  EXPECT_NE(why.find("not valid JSON"), std::string::npos) << why;
  writeStore(dir.file("partial"), ramp(2000, 256), 256, 1000);
  auto index = readStoreIndex(dir.file("partial"));
  index->complete = false;
  writeStoreIndex(dir.file("partial"), *index);
  why = errorOf([&] { openTokenStore(dir.file("partial")); });
  EXPECT_NE(why.find("incomplete"), std::string::npos) << why;
}

TEST(TokenStore, MappedWindowsEqualInMemoryWindows) {
  test::TempDir dir;
  const auto tokens = ramp(40000, 1000);
  writeStore(dir.file("s"), tokens, 1000, 777);  // windows often cross shard ends
  TokenDataset memory(tokens, 1000, 0.1, 32, 8);
  TokenDataset mapped(openTokenStore(dir.file("s")), 1000, 0.1, 32, 8);
  EXPECT_EQ(memory.trainTokens(), mapped.trainTokens());
  EXPECT_EQ(memory.valTokens(), mapped.valTokens());
  for (int step = 0; step < 20; ++step) {
    for (int micro = 0; micro < 2; ++micro) {
      auto a = memory.trainBatch(7, step, micro), b = mapped.trainBatch(7, step, micro);
      ASSERT_EQ(a.inputs, b.inputs);
      ASSERT_EQ(a.targets, b.targets);
    }
  }
  for (int i = 0; i < 3; ++i) EXPECT_EQ(memory.valBatch(i, 3).inputs, mapped.valBatch(i, 3).inputs);
  EXPECT_EQ(memory.probeBatch(16).targets, mapped.probeBatch(16).targets);
  // A vocabulary smaller than the store's ids is refused up front.
  EXPECT_THROW(TokenDataset(openTokenStore(dir.file("s")), 500, 0.1, 32, 8), DataError);
  // A damaged shard whose ids exceed its header's vocabulary (found by fuzz_token_file) fails
  // the window that reads them, naming the position, instead of indexing past the embedding.
  std::string shard = test::readFile(dir.file("s/shard-000000.dltok"));
  for (size_t i = kShardHeaderBytes; i < shard.size(); i += 2) shard[i + 1] = '\x7f';
  test::writeFile(dir.file("s/shard-000000.dltok"), shard);
  TokenDataset damaged(openTokenStore(dir.file("s")), 1000, 0.1, 32, 8);
  try {
    for (int step = 0; step < 50; ++step) damaged.trainBatch(7, step, 0);
    ADD_FAILURE() << "ids past the vocabulary were read";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("outside the vocabulary"), std::string::npos) << e.what();
  }
}

TEST(JsonlText, DecodesTheTextFieldAndCountsWhatItCannotUse) {
  std::string out;
  EXPECT_EQ(extractJsonlText(R"({"id": 3, "meta": {"text": "nested"}, "text": "a\"b\\n\u00e9\ud83d\ude00\t"})", out),
            JsonlText::Ok);
  EXPECT_EQ(out, "a\"b\\n\xC3\xA9\xF0\x9F\x98\x80\t");
  out.clear();
  EXPECT_EQ(extractJsonlText(R"({"url": "x", "text": "line one\nline two", "score": [1, {"a": null}], "ok": true})", out),
            JsonlText::Ok);
  EXPECT_EQ(out, "line one\nline two");
  out.clear();
  EXPECT_EQ(extractJsonlText(R"({"url": "x"})", out), JsonlText::NoText);
  EXPECT_EQ(extractJsonlText(R"({"text": null})", out), JsonlText::NoText);
  EXPECT_EQ(extractJsonlText(R"({"text": 12})", out), JsonlText::NoText);
  EXPECT_EQ(extractJsonlText(R"({"text": "unterminated)", out), JsonlText::InvalidJson);
  EXPECT_EQ(extractJsonlText(R"(["text", "x"])", out), JsonlText::InvalidJson);
  EXPECT_EQ(extractJsonlText(R"({"text": "x"} trailing)", out), JsonlText::InvalidJson);
  EXPECT_EQ(extractJsonlText("{\"text\": \"bad \xC3\x28 byte\"}", out), JsonlText::InvalidUtf8);
  EXPECT_EQ(extractJsonlText(R"({"text": "lone \ud800 surrogate"})", out), JsonlText::InvalidUtf8);
  EXPECT_EQ(out, "");
  EXPECT_TRUE(isValidUtf8("plain ascii and \xE2\x80\x94 dash"));
  EXPECT_FALSE(isValidUtf8("\xC0\xAF"));          // overlong
  EXPECT_FALSE(isValidUtf8("\xED\xA0\x80"));      // encoded surrogate
  EXPECT_FALSE(isValidUtf8("\xF4\x90\x80\x80"));  // past U+10FFFF
}

namespace {
// Resident file-backed memory of this process (kB), from /proc/self/status.
long rssFileKb() {
  std::ifstream in("/proc/self/status");
  std::string key;
  long kb = -1;
  while (in >> key) {
    if (key == "RssFile:") {
      in >> kb;
      break;
    }
  }
  return kb;
}
}  // namespace

// Reading windows all over a mapped store does not leave the store resident in the process:
// the pages are handed back every so many windows (they stay in the page cache).
TEST(TokenStore, ReadingWindowsDoesNotGrowTheResidentSetWithTheStore) {
  test::TempDir dir;
  const auto tokens = ramp(24u << 20, 1000);  // 48 MB of uint16
  writeStore(dir.file("s"), tokens, 1000, 8u << 20);
  auto grow = [&](uint64_t releaseEvery) {
    auto mapped = openTokenStore(dir.file("s"));
    mapped->setReleaseEvery(releaseEvery);
    const long before = rssFileKb();
    std::vector<int64_t> w(257);
    for (uint64_t i = 0; i < 20000; ++i) {
      mapped->read((i * 2654435761u) % (tokens.size() - 257), 257, w.data());
    }
    return rssFileKb() - before;
  };
  if (rssFileKb() < 0) GTEST_SKIP() << "no RssFile in /proc/self/status";
  // 20,000 is a multiple of 16: the last read starts with a release. Between releases the
  // resident set holds the pages of at most 16 windows (a page cache folio each, up to 2 MB).
  const long kept = grow(0), released = grow(16);
  EXPECT_GT(kept, 20 * 1024) << "without releasing, the windows' pages stay resident";
  EXPECT_LT(released, 8 * 1024) << "kB resident after 20,000 windows with a release every 16";
}

// The ranks of a data-parallel run all refresh the index of the store they share (its
// preparedAtNs) while others read it. Writers that shared one temporary file renamed each
// other's half-written text into place, and a reader saw invalid JSON (a CI failure).
TEST(TokenStore, ConcurrentIndexWritersNeverLeaveAReaderHalfAnIndex) {
  test::TempDir dir;
  const std::string store = dir.file("store");
  writeStore(store, ramp(4000, 300), 300, 10);  // 400 shards: an index of some 40 kB
  const StoreIndex index = *readStoreIndex(store);
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, reads{0};
  std::vector<std::thread> writers;
  for (int w = 0; w < 2; ++w) {
    writers.emplace_back([&, w] {
      StoreIndex mine = index;
      for (int i = 0; i < 150 && !stop; ++i) {
        mine.preparedAtNs = w * 1000 + i;
        try {
          writeStoreIndex(store, mine);
        } catch (const DataError& e) {
          ADD_FAILURE() << "writer " << w << ": " << e.what();
          stop = true;
        }
      }
    });
  }
  std::thread reader([&] {
    while (!stop) {
      try {
        if (readStoreIndex(store)->shards.size() != index.shards.size()) ++bad;
      } catch (const DataError&) {
        ++bad;
      }
      ++reads;
    }
  });
  for (auto& t : writers) t.join();
  stop = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0) << "of " << reads.load() << " reads";
  EXPECT_GT(reads.load(), 0);
  for (const auto& e : std::filesystem::directory_iterator(store)) {
    EXPECT_NE(e.path().extension(), ".tmp") << e.path() << " was left behind";
  }
}
