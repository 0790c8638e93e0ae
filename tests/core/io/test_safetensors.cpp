// Safetensors round trip, parameter assignment by name, and rejection of damaged files.
#include <gtest/gtest.h>

#include <filesystem>

#include "io/safetensors.h"
#include "io/safetensors_archive.h"
#include "model/decoder.h"
#include "support/model_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;

TEST(Safetensors, RoundTripsDtypesAndShapes) {
  test::TempDir dir;
  std::map<std::string, torch::Tensor> t = {
      {"a", torch::randn({3, 4})},
      {"b", torch::arange(10, torch::kInt64)},
      {"c", torch::randn({2, 2}).to(torch::kBFloat16)},
      {"empty", torch::zeros({0, 3})}};
  io::saveSafetensors(dir.file("x.safetensors"), t, {{"format", "pt"}});
  auto back = io::loadSafetensors(dir.file("x.safetensors"));
  ASSERT_EQ(back.size(), t.size());
  for (const auto& [k, v] : t) EXPECT_TRUE(torch::equal(v, back.at(k))) << k;
}

TEST(Safetensors, AssignsModelParametersByName) {
  test::TempDir dir;
  auto c = test::smallConfig(2);
  torch::manual_seed(1);
  model::Decoder a(c.model, c.options, "lns");
  torch::manual_seed(2);
  model::Decoder b(c.model, c.options, "lns");
  io::saveSafetensors(dir.file("w.safetensors"), io::namedTensors(*a));
  io::assignParameters(*b, io::loadSafetensors(dir.file("w.safetensors")));
  auto idx = torch::randint(0, 64, {1, 8}, torch::kInt64);
  EXPECT_TRUE(torch::equal(a->forward(idx), b->forward(idx)));
  model::Decoder deeper(test::smallConfig(3).model, test::smallConfig(3).options, "lns");
  EXPECT_THROW(io::assignParameters(*deeper, io::loadSafetensors(dir.file("w.safetensors"))),
               io::SafetensorsError);
}

TEST(Safetensors, RejectsDamagedFiles) {
  test::TempDir dir;
  io::saveSafetensors(dir.file("ok"), {{"a", torch::randn({64})}});
  std::string bytes = test::readFile(dir.file("ok"));
  test::writeFile(dir.file("trunc"), bytes.substr(0, bytes.size() - 10));
  test::writeFile(dir.file("tiny"), "abc");
  std::string hugeHeader = bytes;
  hugeHeader[7] = '\x7f';
  test::writeFile(dir.file("huge"), hugeHeader);
  std::string badJson = bytes;
  badJson[8] = '[';
  test::writeFile(dir.file("json"), badJson);
  for (const char* n : {"trunc", "tiny", "huge", "json"}) {
    EXPECT_THROW(io::loadSafetensors(dir.file(n)), io::SafetensorsError) << n;
  }
}

TEST(Safetensors, SavingReplacesTheFileWholeNeverWritingIntoTheOldOne) {
  // Saved to a temporary file and renamed: a reader that maps the old file (or a hard link to
  // it) keeps the old bytes, and no temporary file is left beside it.
  test::TempDir dir;
  const std::string path = dir.file("w.safetensors");
  io::saveSafetensors(path, {{"w", torch::full({4}, 1.0f)}});
  std::filesystem::create_hard_link(path, dir.file("link.safetensors"));
  const auto mapped = io::SafetensorsArchive::openFile(path);
  io::saveSafetensors(path, {{"w", torch::full({4}, 2.0f)}});
  EXPECT_TRUE(torch::equal(mapped.tensor("w"), torch::full({4}, 1.0f)));
  EXPECT_TRUE(torch::equal(io::loadSafetensors(dir.file("link.safetensors")).at("w"), torch::full({4}, 1.0f)));
  EXPECT_TRUE(torch::equal(io::loadSafetensors(path).at("w"), torch::full({4}, 2.0f)));
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
  EXPECT_EQ(files, 2);
  // A folder that cannot be written is an error naming the file.
  EXPECT_THROW(io::saveSafetensors(dir.file("absent/x.safetensors"), {{"w", torch::ones({1})}}), io::SafetensorsError);
}
