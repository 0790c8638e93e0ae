// Named sets of schemes from the catalogue (scheme_catalogue.h): what one launch trains side by
// side, e.g. `train --scheme all-depth-fixes`, the depth study of every scheme at one shape and
// seed. A set is a name, a display name, one line of description and its scheme ids in
// catalogue order. Does not run or rank anything (experiment/ and analysis/ do). No torch here.
#pragma once

#include <string>
#include <vector>

namespace depthlab::model {

struct SchemeSet {
  std::string id;           // "all-depth-fixes": kebab-case, never a scheme id
  std::string displayName;  // "All depth fixes"
  std::string description;  // one line
  std::vector<std::string> schemes;  // scheme ids, catalogue order
};

/// Every named set, in the order the window lists them.
const std::vector<SchemeSet>& schemeSets();
/// The set named `id`, or nullptr.
const SchemeSet* findSchemeSet(const std::string& id);
/// `ids` with every set name replaced by its schemes (in place, duplicates dropped, order kept);
/// scheme ids pass through unchecked (validate() names unknown ones).
std::vector<std::string> expandSchemeSets(const std::vector<std::string>& ids);

}  // namespace depthlab::model
