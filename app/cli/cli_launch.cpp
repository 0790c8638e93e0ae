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

bool subcommandComputes(int argc, char** argv) {
  // Training, resuming, probing, evaluating, importing (which checks the model on text) and
  // benchmarking multiply matrices; these read the store, a folder or a corpus file only.
  static const std::set<std::string> computes = {"train", "resume", "analyze", "eval",
                                                 "import-hf", "export-hf", "bench"};
  const int i = subcommandIndex(argc, argv);
  return i < argc && computes.count(argv[i]) > 0;
}

}  // namespace depthlab::cli
