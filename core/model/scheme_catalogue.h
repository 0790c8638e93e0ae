// The scheme catalogue: one entry per normalization scheme the lab trains — its id, the name
// figures and tables print, a one-line description, the paper it comes from, how it plans a
// block, which LNS placements it takes, which scheme it is compared against by default, and
// whether `export-hf` can write it as a Llama checkpoint. The experiment config, the set-up
// panel, figures, Compare's pairing and `depthlab-cli schemes` all read it: a new scheme is one
// entry here plus its plan function (and a kernel where it needs one).
// Does not hold the options that apply to every scheme (scaled init, SkipInit, LayerScale: they
// are SchemeOptions, applied by planBlocks after the scheme's own plan). No torch here.
#pragma once

#include <string>
#include <vector>

#include "model/block_plan.h"
#include "model/model_config.h"

namespace depthlab::model {

/// What a scheme makes of block l (1-based) of L, before the options every scheme shares.
using SchemePlanFn = void (*)(BlockPlan& p, int l, int L, const SchemeOptions& options);

struct SchemeEntry {
  std::string id;           // snake_case, stored with each run: "pre_ln", "lns", ...
  std::string displayName;  // in figures, tables and the window: "Pre-LN", "LNS", ...
  std::string description;  // one line: what it does to a block
  std::string reference;    // the paper: "Authors year, Title, arXiv:NNNN.NNNNN"
  SchemePlanFn plan = nullptr;
  std::vector<std::string> placements;  // options.lnsPlacement values it reads; empty: none
  std::string pairsWith;                // the scheme Compare pairs it against ("" : none)
  bool exportsToHf = false;             // export-hf can write it as LlamaForCausalLM
  bool experimental = false;
  std::vector<std::string> options;     // config fields only it reads ("options.mixLnAlpha"):
                                        // a group that sets one and has no such scheme is refused
};

/// Every scheme, in the order the window and the tables list them.
const std::vector<SchemeEntry>& schemeCatalogue();
/// The ids, in catalogue order.
std::vector<std::string> schemeIds();
/// The entry of `id`, or nullptr.
const SchemeEntry* findScheme(const std::string& id);
/// The entry of `id`; throws util::ConfigError naming the known ids.
const SchemeEntry& requireScheme(const std::string& id);
/// The entry's display name, or `id` itself for an id the catalogue does not know (a run
/// stored by a later version).
std::string schemeDisplayName(const std::string& id);
/// The LNS placements, in the order of the paper's Table 8 (after_norm first: LNS itself).
const std::vector<std::string>& lnsPlacements();

}  // namespace depthlab::model
