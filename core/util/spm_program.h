// Where the lab's SentencePiece helper, depthlab-spm-encode, is: the one program that encodes
// text with libsentencepiece (which cannot share a process with LibTorch: their protobuf
// symbols clash). Does not run it: the token stores (core/data) and a model's own tokenizer
// (core/hf) do.
#pragma once

#include <string>

namespace depthlab::util {

/// $DEPTHLAB_SPM_ENCODE, else depthlab-spm-encode beside the running program, in the build
/// tree, or on PATH; "" when there is none.
std::string spmEncodeProgram();

}  // namespace depthlab::util
