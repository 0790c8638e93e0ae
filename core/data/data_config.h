// The data's own config: which corpus, which tokenizer, how much is held out. Owned by data/;
// experiment/ composes it into ExperimentConfig. Plain data.
#pragma once

#include <string>

namespace depthlab::data {

struct DataConfig {
  std::string corpus;             // text file/folder, .jsonl[.gz|.zst], a token store or .bin
                                  // tokens; "" = default corpus
  std::string tokenizer = "byte"; // byte | spm:N (train BPE of size N) | spm:/path/x.model
  double valFraction = 0.05;      // tail of the token stream held out for validation
  int tokenizerSampleMB = 100;    // spm:N trains on this much text, spread over the corpus
};

}  // namespace depthlab::data
