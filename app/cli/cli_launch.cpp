// See cli_launch.h.
#include "cli_launch.h"

#include <set>

namespace depthlab::cli {

int subcommandIndex(int argc, char** argv, std::string* db) {
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--db" && i + 1 < argc) {
      if (db) *db = argv[i + 1];
      ++i;
      continue;
    }
    if (a.rfind("--db=", 0) == 0) {
      if (db) *db = a.substr(5);
      continue;
    }
    if (a == "--json") continue;
    break;
  }
  return i;
}

const std::set<std::string>& computingSubcommands() {
  // Training, resuming, reproducing the paper, probing, evaluating, importing (which checks
  // the model on text), exporting weights and benchmarking.
  static const std::set<std::string> names = {"train",     "resume",    "reproduce", "analyze",
                                              "eval",      "import-hf", "export-hf", "bench"};
  return names;
}

const std::set<std::string>& readingSubcommands() {
  // The store, a corpus file, the presets and schemes tables; `export` execs depthlab-export
  // (no BLAS).
  static const std::set<std::string> names = {"runs", "report", "presets", "schemes", "corpus", "export"};
  return names;
}

bool subcommandComputes(int argc, char** argv) {
  const int i = subcommandIndex(argc, argv);
  return i < argc && computingSubcommands().count(argv[i]) > 0;
}

}  // namespace depthlab::cli
