// `depthlab-cli export --runs 3,4 --figure ... --format ... --width 8.5cm --out PATH`:
// runs depthlab-export (built next to this binary with the GUI), which renders through Qt's
// offscreen platform, so no display is needed. The CLI itself stays free of Qt.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "cli_common.h"
#include "cli_launch.h"

namespace depthlab::cli {

std::string siblingExecutable(const std::string& name) {
  char self[4096] = {};
  ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  std::string dir = n > 0 ? std::string(self, static_cast<size_t>(n)) : std::string("./x");
  return dir.substr(0, dir.rfind('/')) + "/" + name;
}

int runExportIfAsked(int argc, char** argv) {
  // depthlab-cli [--db PATH] [--json] export ARGS...: everything after `export` goes to
  // depthlab-export untouched (CLI11 would try to parse it).
  std::string db;
  const int i = subcommandIndex(argc, argv, &db);
  if (i >= argc || std::string(argv[i]) != "export") return -1;
  for (int k = i + 1; k < argc; ++k) {  // TensorBoard: the CLI's own (cli_tensorboard.cpp)
    if (std::string(argv[k]).rfind("--tensorboard", 0) == 0) return -1;
  }
  const std::string exe = siblingExecutable("depthlab-export");
  std::vector<std::string> args = {exe};
  for (int k = i + 1; k < argc; ++k) args.push_back(argv[k]);
  if (!db.empty()) {
    args.push_back("--db");
    args.push_back(db);
  }
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  execv(exe.c_str(), cargs.data());
  std::fprintf(stderr, "depthlab-cli: cannot run %s (built with the GUI, DEPTHLAB_BUILD_GUI=ON)\n",
               exe.c_str());
  return 1;
}

void addExportCommand(CLI::App& app, GlobalOptions& g) {
  // Figures: runExportIfAsked() handles the call before CLI11 parses anything; with
  // --tensorboard, CLI11 parses these options.
  auto dir = std::make_shared<std::string>();
  auto runs = std::make_shared<std::string>();
  auto* cmd =
      app.add_subcommand("export",
                         "Paper figures (PDF/SVG/PNG + CSV + JSON) from stored runs: "
                         "--runs IDS --figure ID|set|study (export --help lists the figures) "
                         "--format pdf|svg|png --width 8.5cm [--dpi 300] [--smoothing 0.6] "
                         "[--label lns='LNS (ours)'] --out PATH; schemes and runs go by the "
                         "names set in the window's figure dialog "
                         "(depthlab-export --help lists every option); or --tensorboard DIR "
                         "--runs IDS: TensorBoard event files");
  cmd->add_option("--tensorboard", *dir, "Write the runs as TensorBoard event files into DIR");
  cmd->add_option("--runs", *runs, "With --tensorboard: run ids, comma-separated");
  cmd->callback([&g, dir, runs] { runTensorBoardExport(g, *dir, *runs); });
}

}  // namespace depthlab::cli
