// Pre-flight checks of what a launch needs from the file system, cheap enough to run as the
// user types: the corpus exists and is not empty, a SentencePiece model file given by path
// exists, the disk holds the token store a not yet tokenized corpus will need, the checkpoint
// folder can be created and written, and the disk holds the checkpoints the run will keep. Complements validate() (which checks the config's values
// only). Never reads a whole corpus; never throws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/experiment_config.h"

namespace depthlab::experiment {

/// Bytes the token store of `d`'s corpus will take when it is not prepared yet (0 when it is,
/// or for token files). From the sizes on disk: one byte per byte of text for the byte
/// tokenizer, about 0.6 for SentencePiece (0.3 tokens per byte, 2 bytes each); compressed files
/// count 4-fold. Walks a corpus folder's listing; throws DataError for a missing corpus.
double tokenStoreBytesNeeded(const data::DataConfig& d);
/// Bytes one checkpoint of `scheme` takes (fp32 weights and Adam's two moments).
double checkpointBytes(const ExperimentConfig& c, const std::string& scheme);
/// Issues naming the field ("data.corpus", "data.tokenizer", "run.checkpointDir") and what is
/// wrong; empty when the launch can go ahead. `checkpointRoot` is where checkpoints go
/// ("" = the data folder's checkpoints/).
std::vector<ConfigIssue> preflightIssues(const ExperimentConfig& c,
                                         const std::string& checkpointRoot = "");

}  // namespace depthlab::experiment
