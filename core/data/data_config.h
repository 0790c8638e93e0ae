// The data's own config: which corpus, which tokenizer, how much is held out, how documents
// become training rows. Owned by data/; experiment/ composes it into ExperimentConfig. Plain
// data (the accepted values are listed here; experiment/ validates them).
#pragma once

#include <string>

namespace depthlab::data {

struct DataConfig {
  std::string corpus;             // text file/folder, .jsonl[.gz|.zst], a token store or .bin
                                  // tokens; "" = default corpus
  std::string tokenizer = "byte"; // byte | spm:N (train BPE of size N) | spm:/path/x.model
  double valFraction = 0.05;      // tail of the token stream held out for validation
  int tokenizerSampleMB = 100;    // spm:N trains on this much text, spread over the corpus
  std::string packing = "packed"; // packed: windows run across documents, an end-of-document
                                  // token between them; document: one document a row,
                                  // truncated to the sequence and padded (pads ignored)
};

inline constexpr const char* kPackingPacked = "packed";
inline constexpr const char* kPackingDocument = "document";

}  // namespace depthlab::data
