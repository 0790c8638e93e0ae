// `depthlab-cli export --tensorboard DIR --runs 3,4` (scalars, per-layer tags and the paper
// figures as images) and `import-tensorboard DIR [--name N] [--scheme S]`: TensorBoard event
// files out and in (core/experiment/tensorboard_runs.h). Each command is its arguments (an Args
// struct the options fill) and one run function.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli_common.h"
#include "experiment/tensorboard_runs.h"
#include "store/metric_catalogue.h"
#include "util/remove_tree.h"
#include "util/run_command.h"

namespace depthlab::cli {

namespace {

std::vector<int64_t> idList(const std::string& list) {
  std::vector<int64_t> ids;
  std::stringstream in(list);
  for (std::string id; std::getline(in, id, ',');) {
    if (id.empty()) continue;
    try {
      size_t used = 0;
      ids.push_back(std::stoll(id, &used));
      if (used != id.size()) throw std::invalid_argument(id);
    } catch (const std::exception&) {
      throw std::runtime_error("--runs: '" + id + "' is not a run id");
    }
  }
  if (ids.empty()) throw std::runtime_error("--tensorboard needs --runs, e.g. --runs 3,4");
  return ids;
}

struct ImportTbArgs {
  std::string dir, name, scheme = "pre_ln";
};

void runImportTensorBoard(GlobalOptions& g, const ImportTbArgs& a) {
  auto s = openStore(g);
  const auto runs = experiment::importTensorBoard(s, a.dir, a.name, a.scheme);
  if (g.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : runs) {
      out.push_back({{"run_id", r.runId},
                     {"source", r.source},
                     {"tags", r.tags},
                     {"skipped_tags", r.skippedTags},
                     {"warnings", r.warnings},
                     {"values", r.values}});
    }
    std::cout << out.dump(2) << "\n";
    return;
  }
  for (const auto& r : runs) {
    for (const auto& w : r.warnings) std::printf("warning: %s\n", w.c_str());
    std::printf("imported %s as run %lld: %zu values;", r.source.c_str(),
                static_cast<long long>(r.runId), r.values);
    for (const auto& [tag, key] : r.tags) std::printf(" %s -> %s", tag.c_str(), key.c_str());
    std::printf("\n");
    if (!r.skippedTags.empty()) {
      std::string skipped;
      for (const auto& t : r.skippedTags) skipped += (skipped.empty() ? "" : ", ") + t;
      std::printf("not among the lab's metrics, left out: %s\n", skipped.c_str());
    }
  }
}

/// Each run's paper figures drawn by depthlab-export (the CLI links no Qt) into `folder` as PNGs,
/// at the run's last probe step; `left` says which could not be drawn and why.
std::vector<experiment::TensorBoardImage> renderFigures(store::RunStore& s,
                                                        const std::vector<int64_t>& ids,
                                                        const std::string& folder,
                                                        std::vector<std::string>& left) {
  std::vector<experiment::TensorBoardImage> images;
  const std::string exe = siblingExecutable("depthlab-export");
  if (access(exe.c_str(), X_OK) != 0) {
    left.push_back("figures: depthlab-export is not built (it comes with the GUI)");
    return images;
  }
  std::filesystem::create_directories(folder);
  for (int64_t id : ids) {
    const int64_t step = s.lastLayerStep(id, metrics::kVariance).value_or(0);
    for (const char* figure : {"variance", "angular", "pruning", "block-pruning"}) {
      const std::string png = folder + "/" + std::to_string(id) + "-" + figure + ".png";
      util::CommandOptions o;
      o.stderrMode = util::Stderr::Capture;
      const auto r = util::runProgram(
          {exe, "--runs", std::to_string(id), "--figure", figure, "--format", "png", "--width",
           "16cm", "--dpi", "110", "--out", png, "--db", s.path()},
          o);
      if (r.status != 0) {
        left.push_back("run " + std::to_string(id) + " " + figure + ": " +
                       r.errors.substr(0, r.errors.find('\n')));
        continue;
      }
      std::string tag = std::string("figures/") + figure;
      std::replace(tag.begin(), tag.end(), '-', '_');
      images.push_back({id, tag, step, png});
    }
  }
  return images;
}

}  // namespace

void runTensorBoardExport(GlobalOptions& g, const std::string& dir, const std::string& runs) {
  auto s = openStore(g, store::RunStore::Mode::ReadOnly);
  const auto ids = idList(runs);
  std::vector<std::string> left;
  const std::string figures = dir + "/.depthlab-figures";
  const auto images = renderFigures(s, ids, figures, left);
  const auto r = experiment::exportToTensorBoard(s, ids, dir, images);
  util::removeTree(figures);
  if (g.json) {
    std::cout << nlohmann::json{{"files", r.files},
                                {"values", r.values},
                                {"images", r.images},
                                {"left_out", left}}
                     .dump(2)
              << "\n";
    return;
  }
  for (const auto& f : r.files) std::printf("wrote %s\n", f.c_str());
  for (const auto& why : left) std::printf("left out: %s\n", why.c_str());
  std::printf(
      "%zu values, %zu figure(s); view with: tensorboard --logdir %s  (W&B: wandb sync "
      "--sync-tensorboard %s)\n",
      r.values, r.images, dir.c_str(), dir.c_str());
}

void addImportTensorBoardCommand(CLI::App& app, GlobalOptions& g) {
  auto a = std::make_shared<ImportTbArgs>();
  auto* cmd = app.add_subcommand(
      "import-tensorboard",
      "Read TensorBoard event files (PyTorch's SummaryWriter, TensorFlow, Lightning) as a run: "
      "loss, validation loss, learning rate, gradient norm and <metric>/layer_N series; a folder "
      "of run folders gives a run each");
  cmd->add_option("dir", a->dir, "Folder of events.out.tfevents.* files")->required();
  cmd->add_option("--name", a->name, "Run name (default: the folder's name)");
  cmd->add_option("--scheme", a->scheme, "The scheme the run trained (a lab scheme id)")
      ->capture_default_str();
  cmd->callback([&g, a] { runImportTensorBoard(g, *a); });
}

}  // namespace depthlab::cli
