// Pre-flight checks of what a launch needs from the file system, cheap enough to run as the
// user types: the corpus exists and is not empty, a SentencePiece model file given by path
// exists, the checkpoint folder can be created and written, and the disk holds the
// checkpoints the run will keep. Complements validate() (which checks the config's values
// only). Never reads a whole corpus; never throws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/experiment_config.h"

namespace depthlab::experiment {

/// Bytes one checkpoint of `scheme` takes (fp32 weights and Adam's two moments).
double checkpointBytes(const ExperimentConfig& c, const std::string& scheme);
/// Issues naming the field ("data.corpus", "data.tokenizer", "run.checkpointDir") and what is
/// wrong; empty when the launch can go ahead. `checkpointRoot` is where checkpoints go
/// ("" = the data folder's checkpoints/).
std::vector<ConfigIssue> preflightIssues(const ExperimentConfig& c,
                                         const std::string& checkpointRoot = "");

}  // namespace depthlab::experiment
