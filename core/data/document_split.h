// DocumentSplit: the documents of a token stream, for `document` packing, where each document
// is one training row (TokenDataset truncates it to the window and pads it). A document is
// the tokens after the previous end-of-document id up to and including its own. Split as the
// tokens are: the documents that end before the split token train, those that start at or
// after it validate, and the one across the split is in neither (no token is in both).
// Documents of the end-of-document id alone (nothing before it) are left out: every row has
// at least one target that counts. Finding them reads the stream once (positionsOf); no
// batching here.
#pragma once

#include <cstdint>
#include <vector>

#include "data/token_source.h"

namespace depthlab::data {

struct DocSpan {
  uint64_t start = 0;
  uint64_t length = 0;  // tokens, the end-of-document id included (at least 2)
};

class DocumentSplit {
 public:
  /// Throws DataError when the stream holds no end-of-document id `eod` at all.
  DocumentSplit(const TokenSource& tokens, int64_t eod, uint64_t splitToken);
  const std::vector<DocSpan>& train() const { return m_train; }
  const std::vector<DocSpan>& val() const { return m_val; }
  /// Documents found in the whole stream (the left-out ones included).
  uint64_t documents() const { return m_documents; }

 private:
  std::vector<DocSpan> m_train, m_val;
  uint64_t m_documents = 0;
};

}  // namespace depthlab::data
