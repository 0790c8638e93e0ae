// Memory-mapped safetensors and sharded model folders: views share the mapping, and every bad
// file is refused with a message before a byte of tensor data is read (never out of bounds).
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "io/safetensors.h"
#include "io/safetensors_archive.h"
#include "support/error_of.h"
#include "support/temp_dir.h"

using namespace depthlab;
using test::errorOf;

namespace {

/// A safetensors file with the given header text and `dataBytes` bytes of data.
void writeRaw(const std::string& path, const std::string& header, size_t dataBytes) {
  std::string bytes(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(bytes.data(), &n, 8);
  bytes += header;
  bytes += std::string(dataBytes, '\x01');
  test::writeFile(path, bytes);
}


}  // namespace

TEST(SafetensorsArchive, MapsTensorsWithoutCopying) {
  test::TempDir dir;
  auto w = torch::arange(12, torch::kFloat32).view({3, 4});
  auto h = torch::arange(6, torch::kFloat32).to(torch::kBFloat16);
  io::saveSafetensors(dir.file("a.safetensors"), {{"w", w}, {"h", h}}, {{"format", "pt"}});
  torch::Tensor view;
  {
    auto a = io::SafetensorsArchive::openFile(dir.file("a.safetensors"));
    EXPECT_EQ(a.metadata().at("format"), "pt");
    view = a.tensor("w");
    EXPECT_TRUE(torch::equal(a.tensor("h"), h));
    EXPECT_EQ(a.tensor("h").scalar_type(), torch::kBFloat16);
    EXPECT_NE(errorOf([&] { a.tensor("nope"); }).find("no tensor 'nope'"), std::string::npos);
  }
  EXPECT_TRUE(torch::equal(view, w));  // the view keeps the mapping alive past the archive
}

TEST(SafetensorsArchive, RefusesBadFilesNamingTheProblem) {
  test::TempDir dir;
  const auto p = dir.file("bad.safetensors");
  auto why = [&](const std::string& header, size_t data) {
    writeRaw(p, header, data);
    return errorOf([&] { io::SafetensorsArchive::openFile(p); });
  };
  EXPECT_NE(why(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12).find("overlap"),
            std::string::npos);
  EXPECT_NE(why(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8)
                .find("outside the file"), std::string::npos);
  EXPECT_NE(why(R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8)
                .find("needs 12"), std::string::npos);
  EXPECT_NE(why(R"({"a":{"dtype":"F8_E4M3","shape":[2],"data_offsets":[0,2]}})", 2)
                .find("unsupported dtype 'F8_E4M3'"), std::string::npos);
  EXPECT_NE(why(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}})", 0)
                .find("bad shape"), std::string::npos);
  EXPECT_NE(why(R"({"a":{"dtype":"F32","shape":[1099511627776,1099511627776],"data_offsets":[0,4]}})", 4)
                .find("bad shape"), std::string::npos);
  EXPECT_NE(why(R"({"a":{"dtype":"F32"}})", 0).find("malformed"), std::string::npos);
  EXPECT_NE(why("[1,2,3]", 0).find("not a JSON object"), std::string::npos);
  test::writeFile(p, std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8) + "{}");
  EXPECT_NE(errorOf([&] { io::SafetensorsArchive::openFile(p); }).find("header length"),
            std::string::npos);
  test::writeFile(p, "abc");
  EXPECT_NE(errorOf([&] { io::SafetensorsArchive::openFile(p); }).find("too short"),
            std::string::npos);
  EXPECT_NE(errorOf([&] { io::SafetensorsArchive::openFile(dir.file("absent")); }).find("absent"),
            std::string::npos);
}

TEST(SafetensorsArchive, MisalignedTensorsAreCopiedNotMisread) {
  test::TempDir dir;
  // "a" takes 2 bytes, so "b" (float32) starts 2 bytes into the data: not 4-aligned.
  const float values[2] = {1.5f, -2.25f};
  std::string header = R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                       R"("b":{"dtype":"F32","shape":[2],"data_offsets":[2,10]}})";
  while ((8 + header.size()) % 8 != 0) header += ' ';
  std::string bytes(8, '\0');
  const uint64_t n = header.size();
  std::memcpy(bytes.data(), &n, 8);
  bytes += header + std::string("\x07\x09", 2) + std::string(reinterpret_cast<const char*>(values), 8);
  test::writeFile(dir.file("m.safetensors"), bytes);
  auto a = io::SafetensorsArchive::openFile(dir.file("m.safetensors"));
  auto b = a.tensor("b");
  EXPECT_FLOAT_EQ(b[0].item<float>(), 1.5f);
  EXPECT_FLOAT_EQ(b[1].item<float>(), -2.25f);
}

TEST(SafetensorsArchive, ShardedFolderNeedsEveryShardItsIndexNames) {
  test::TempDir dir;
  io::saveSafetensors(dir.file("s1.safetensors"), {{"x", torch::ones({2})}});
  io::saveSafetensors(dir.file("s2.safetensors"), {{"y", torch::zeros({3})}});
  auto index = [&](const std::string& map) {
    test::writeFile(dir.file("model.safetensors.index.json"), R"({"weight_map": )" + map + "}");
  };
  index(R"({"x": "s1.safetensors", "y": "s2.safetensors"})");
  auto a = io::SafetensorsArchive::openFolder(dir.path());
  EXPECT_EQ(a.files().size(), 2u);
  EXPECT_TRUE(torch::equal(a.tensor("y"), torch::zeros({3})));
  index(R"({"x": "s1.safetensors", "y": "s3.safetensors"})");
  auto missing = errorOf([&] { io::SafetensorsArchive::openFolder(dir.path()); });
  EXPECT_NE(missing.find("missing shard 's3.safetensors'"), std::string::npos) << missing;
  index(R"({"x": "s1.safetensors", "y": "s1.safetensors"})");
  EXPECT_NE(errorOf([&] { io::SafetensorsArchive::openFolder(dir.path()); })
                .find("'y' is not in shard 's1.safetensors'"), std::string::npos);
  index(R"({"x": "../s1.safetensors"})");
  EXPECT_NE(errorOf([&] { io::SafetensorsArchive::openFolder(dir.path()); }).find("file name"),
            std::string::npos);
  index(R"([])");
  EXPECT_NE(errorOf([&] { io::SafetensorsArchive::openFolder(dir.path()); }).find("weight_map"),
            std::string::npos);
  std::filesystem::remove(dir.file("model.safetensors.index.json"));
  EXPECT_NE(errorOf([&] { io::SafetensorsArchive::openFolder(dir.path()); }).find("neither"),
            std::string::npos);
}
