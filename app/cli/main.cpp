// depthlab-cli: the headless face of DepthLab. Each subcommand lives in its own cli_*.cpp and is
// a row of the command table (commands.h); this file registers the rows and turns any error
// into a one-line message and exit code 1.
#include <iostream>

#include "cli_common.h"
#include "cli_launch.h"
#include "commands.h"
#include "util/allocator_tuning.h"
#include "util/openblas_kernels.h"

int main(int argc, char** argv) {
  // Export first: it execs depthlab-export (no BLAS there). Starting this program again for
  // OpenBLAS's kernels loads LibTorch a second time (~0.5 s): only for commands that compute.
  if (int rc = depthlab::cli::runExportIfAsked(argc, argv); rc >= 0) return rc;
  if (depthlab::cli::subcommandComputes(argc, argv)) {
    depthlab::util::ensureOpenBlasKernels(argv);  // may start this program again (see its header)
  }
  depthlab::util::keepFreedMemoryForReuse();  // this process trains: no page-fault churn
  CLI::App app{"DepthLab: train and analyse LLaMA-style models under the Curse of Depth"};
  app.set_version_flag("--version", std::string("depthlab-cli ") + DEPTHLAB_VERSION);
  app.require_subcommand(1);
  app.fallthrough();  // --db / --json may follow the subcommand too
  depthlab::cli::GlobalOptions g;
  for (int i = 1; i < argc; ++i) g.argv.emplace_back(argv[i]);
  app.add_option("--db", g.db, "Run database (default $DEPTHLAB_DB, else the data folder)");
  app.add_flag("--json", g.json, "Machine-readable JSON output");

  for (const auto& command : depthlab::cli::commands()) command.add(app, g);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const depthlab::cli::ExitCodeError& e) {
    std::cerr << "depthlab-cli: " << e.what() << "\n";
    return e.code();
  } catch (const std::exception& e) {
    // LibTorch's errors carry a C++ backtrace after the message: the user gets the message.
    std::string what = e.what();
    if (auto at = what.find("\nException raised from"); at != std::string::npos) what.resize(at);
    if (auto at = what.find("\nframe #"); at != std::string::npos) what.resize(at);
    std::cerr << "depthlab-cli: " << what << "\n";
    return 1;
  }
  return g.exitCode;
}
