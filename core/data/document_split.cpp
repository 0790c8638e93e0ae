// See document_split.h.
#include "data/document_split.h"

#include "data/corpus.h"

namespace depthlab::data {

DocumentSplit::DocumentSplit(const TokenSource& tokens, int64_t eod, uint64_t splitToken) {
  const std::vector<uint64_t> ends = tokens.positionsOf(eod);
  if (ends.empty()) {
    throw DataError("document packing: " + tokens.describe() + " holds no end-of-document token (id " +
                    std::to_string(eod) + "), so its documents cannot be told apart");
  }
  m_documents = ends.size();
  uint64_t start = 0;
  for (uint64_t end : ends) {
    const DocSpan d{start, end - start + 1};
    start = end + 1;
    if (d.length < 2) continue;  // the end-of-document id alone: nothing to predict
    if (end < splitToken) m_train.push_back(d);
    else if (d.start >= splitToken) m_val.push_back(d);
  }
}

}  // namespace depthlab::data
