// See cli_launch.h.
#include "cli_launch.h"

#include "commands.h"

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

namespace {

std::set<std::string> namesOf(Work work) {
  std::set<std::string> names;
  for (const auto& c : commands()) {
    if (c.work == work) names.insert(c.name);
  }
  return names;
}

}  // namespace

const std::set<std::string>& computingSubcommands() {
  static const std::set<std::string> names = namesOf(Work::Computes);
  return names;
}

const std::set<std::string>& readingSubcommands() {
  static const std::set<std::string> names = namesOf(Work::Reads);
  return names;
}

bool subcommandComputes(int argc, char** argv) {
  const int i = subcommandIndex(argc, argv);
  return i < argc && computingSubcommands().count(argv[i]) > 0;
}

}  // namespace depthlab::cli
