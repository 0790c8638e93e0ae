// `depthlab-cli schemes`: the scheme catalogue as a table (id, name, what it pairs against,
// whether export-hf writes it, the LNS placements it reads) followed by each scheme's
// description and paper, then the named sets `train --scheme` takes (all-depth-fixes, paper);
// --json gives every field (and each scheme's sets). Printing only; the catalogue is
// core/model/scheme_catalogue, the sets core/model/scheme_sets.
#include <cstdio>

#include "cli_common.h"
#include "model/scheme_catalogue.h"
#include "model/scheme_sets.h"
#include "text_table.h"

namespace depthlab::cli {

namespace {

std::string joinedPlacements(const std::vector<std::string>& p) {
  std::string s;
  for (const auto& x : p) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "-" : s;
}

// The ids of the sets that hold `scheme`.
std::vector<std::string> setsOf(const std::string& scheme) {
  std::vector<std::string> out;
  for (const auto& set : model::schemeSets()) {
    for (const auto& s : set.schemes) {
      if (s == scheme) out.push_back(set.id);
    }
  }
  return out;
}

void printSets() {
  std::printf("\nSets (train --scheme SET trains every scheme of it as one group):\n");
  for (const auto& set : model::schemeSets()) {
    std::string ids;
    for (const auto& s : set.schemes) ids += (ids.empty() ? "" : ", ") + s;
    std::printf("%s: %s\n    %s\n", set.id.c_str(), set.description.c_str(), ids.c_str());
  }
}

void printSchemes(const GlobalOptions& g) {
  const auto& catalogue = model::schemeCatalogue();
  if (g.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& e : catalogue) {
      j.push_back({{"id", e.id},
                   {"name", e.displayName},
                   {"description", e.description},
                   {"reference", e.reference},
                   {"placements", e.placements},
                   {"pairsWith", e.pairsWith},
                   {"exportsToHf", e.exportsToHf},
                   {"experimental", e.experimental},
                   {"sets", setsOf(e.id)}});
    }
    std::printf("%s\n", j.dump(2).c_str());
    return;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : catalogue) {
    rows.push_back({e.id, e.displayName + (e.experimental ? " (experimental)" : ""),
                    e.pairsWith.empty() ? "-" : e.pairsWith, e.exportsToHf ? "yes" : "no",
                    joinedPlacements(e.placements)});
  }
  std::printf(
      "%s\n",
      formatTextTable({"scheme", "name", "pairs with", "export-hf", "placements"}, rows).c_str());
  for (const auto& e : catalogue) {
    std::printf("%s: %s\n    %s\n", e.id.c_str(), e.description.c_str(), e.reference.c_str());
  }
  printSets();
  std::printf(
      "\nEvery scheme also takes the shared options: scaled or depth-scaled init, SkipInit, "
      "LayerScale (train --help).\n");
}

}  // namespace

void addSchemesCommand(CLI::App& app, GlobalOptions& g) {
  auto* cmd =
      app.add_subcommand("schemes", "The normalization schemes the lab trains, with their papers");
  cmd->callback([&g] { printSchemes(g); });
}

}  // namespace depthlab::cli
