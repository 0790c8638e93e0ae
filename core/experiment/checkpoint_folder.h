// The checkpoint folder of a database, <base>/<store id>/, claimed by one database file: a
// file "database" in it names the path of the database that writes there. A copied database
// (cp A.db B.db) carries A's id; the first time it would write checkpoints it finds A's claim,
// sees A still there with the same id, and takes a new id (RunStore::renewStoreId), so it never
// writes into, or prunes, A's folder. A database that was moved takes its folder over. Also the
// check that checkpoints can be written at all, before a run trains. Does not write or choose
// checkpoints (experiment/run_checkpoints, experiment/train_loop do).
#pragma once

#include <string>

#include "store/run_store.h"

namespace depthlab::experiment {

/// Claims (or confirms) <base or dataDir()/checkpoints>/<store id>/ for `store`, renewing the
/// store's id first when it is a copy of the database that claimed it. Returns a line saying so
/// when the id was renewed, "" otherwise. Throws std::runtime_error when the folder cannot be
/// created or written (a file in the way, no permission, a full disk): runs that cannot write
/// checkpoints could not be resumed, so they must not start.
std::string claimCheckpointFolder(store::RunStore& store, const std::string& base);

}  // namespace depthlab::experiment
