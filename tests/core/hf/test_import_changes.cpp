// An imported model whose files change after the import is never read silently: a file of
// another size is refused at once, one overwritten in place with the same size by its content
// hash (checked when its modification time moved), and a file only touched still loads.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "experiment/run_config.h"
#include "experiment/run_group.h"
#include "hf/hf_export.h"
#include "hf/hf_import.h"
#include "support/error_of.h"
#include "support/exported_model.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"

using namespace depthlab;
using test::errorOf;
namespace fs = std::filesystem;

namespace {

model::Decoder load(const store::RunInfo& run) {
  return hf::loadImportedDecoder(*hf::importRecordOf(run), experiment::configOf(run).model, 8,
                                 torch::kCPU);
}

}  // namespace

TEST(ImportChanges, AFileOverwrittenWithTheSameSizeIsRefusedByItsHash) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  const auto run = test::importTrainedTinyModel(dir, s);
  EXPECT_NO_THROW(load(run));
  const std::string weights = dir.file("hf/model.safetensors");
  const auto size = fs::file_size(weights);
  {  // one weight byte changed in place: the size stays
    std::fstream f(weights, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size - 3));
    const char was = static_cast<char>(f.get());
    f.seekp(static_cast<std::streamoff>(size - 3));
    f.put(static_cast<char>(was ^ 0x40));
  }
  fs::last_write_time(weights, fs::last_write_time(weights) + std::chrono::seconds(5));
  ASSERT_EQ(fs::file_size(weights), size);
  const auto why = errorOf([&] { load(run); });
  EXPECT_NE(why.find("changed since the import (same size"), std::string::npos) << why;
  EXPECT_NE(why.find("import the folder again"), std::string::npos) << why;
}

TEST(ImportChanges, AFileOnlyTouchedStillLoads) {
  test::TempDir dir;
  auto s = store::RunStore::open(dir.file("runs.db"));
  const auto run = test::importTrainedTinyModel(dir, s);
  const std::string weights = dir.file("hf/model.safetensors");
  fs::last_write_time(weights, fs::last_write_time(weights) + std::chrono::seconds(5));
  EXPECT_NO_THROW(load(run));
  std::ofstream(weights, std::ios::app) << "x";  // another size: refused before any hashing
  const auto why = errorOf([&] { load(run); });
  EXPECT_NE(why.find("bytes, was"), std::string::npos) << why;
}
