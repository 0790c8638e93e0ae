// Reading corpora: a UTF-8 text file, a folder of text files (sorted, concatenated), or a
// nanoGPT / llm.c token file (.bin of uint16, with or without llm.c's 1 KiB header).
// Rejects missing, empty and binary input with a message naming the path. No tokenizing.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace depthlab::data {

class DataError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// True for paths ending in .bin: pre-tokenized input.
bool isTokenFile(const std::string& path);
/// All text under `path` (file or folder); throws DataError for missing/empty/binary input.
std::string readTextCorpus(const std::string& path);
/// Tokens of a .bin file (uint16; llm.c header checked when present).
std::vector<int32_t> readTokenFile(const std::string& path);
/// Why `text` is not usable UTF-8 text ("" when it is): NUL bytes or >1% invalid sequences.
std::string binaryReason(const std::string& text);

}  // namespace depthlab::data
