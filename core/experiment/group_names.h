// Names of run groups and runs. Every launch is its own group: a name already used in the
// store (or taken by a launch still queued) gets the next free " N" suffix, so two launches
// of one preset never pour into one group. A run's default name says its group, scheme and
// seed; a run whose name differs from that default was renamed by the user. No store access.
#pragma once

#include <cstdint>
#include <set>
#include <string>

namespace depthlab::experiment {

/// `base` when nobody uses it, else "base 2", "base 3", ... (the first free one).
std::string uniqueGroupName(const std::string& base, const std::set<std::string>& taken);
/// "<group> <scheme> s<seed>": what a run is called when it is created.
std::string defaultRunName(const std::string& group, const std::string& scheme, int64_t seed);
/// True when `name` is not the default name of that run (the user renamed it).
bool isRenamed(const std::string& name, const std::string& group, const std::string& scheme,
               int64_t seed);

}  // namespace depthlab::experiment
