// A real imported model without transformers: a tiny run trained here, exported as a Hugging
// Face Llama folder (dir/hf) and imported again. For tests of imported runs' loading and probes.
#pragma once

#include <string>

#include "experiment/run_group.h"
#include "hf/hf_export.h"
#include "hf/hf_import.h"
#include "support/model_fixtures.h"
#include "support/run_fixtures.h"
#include "support/temp_dir.h"

namespace depthlab::test {

/// The imported run of a 2-block Pre-LN model trained `steps` updates on a word corpus.
inline store::RunInfo importTrainedTinyModel(const TempDir& dir, store::RunStore& s, int steps = 4) {
  auto c = smallConfig(2);
  c.data.corpus = writeWordCorpus(dir);
  c.optim.steps = steps;
  c.run.evalEvery = 0;
  c.schemes = {"pre_ln"};
  experiment::RunGroupOptions o;
  o.checkpointDir = dir.file("ckpt");
  const auto trained = experiment::runGroup(c, s, o);
  hf::exportRunToHf(s, trained.members[0].runId, dir.file("hf"));
  return *s.run(hf::importHfModel(s, dir.file("hf"), "imported").runId);
}

}  // namespace depthlab::test
