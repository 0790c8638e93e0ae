// The data's own config: which corpus, which tokenizer, how much is held out. Owned by data/;
// experiment/ composes it into ExperimentConfig. Plain data.
#pragma once

#include <string>

namespace depthlab::data {

struct DataConfig {
  std::string corpus;             // text file/folder or .bin tokens; "" = default corpus
  std::string tokenizer = "byte"; // byte | spm:N (train BPE of size N) | spm:/path/x.model
  double valFraction = 0.05;      // tail of the token stream held out for validation
};

}  // namespace depthlab::data
