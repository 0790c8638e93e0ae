// depthlab-spm-encode MODEL FILE [--bos]: prints the ids SentencePiece gives the whole of FILE,
// newlines and all, as one text (what the model's own tokenizer does with `encode(text)`),
// separated by spaces, after the model's BOS id when --bos is given and the model has one.
// depthlab-spm-encode MODEL FILE --documents: FILE holds documents, each written as its byte
// count in decimal, a newline, then its bytes; prints one line of ids per document, each
// document encoded whole (the token stores' route: a document's newlines stay in its text).
// Why a program of its own: Debian's spm_encode encodes line by line and drops the newlines,
// and libsentencepiece cannot share a process with LibTorch (their protobuf symbols clash), so
// the lab runs this, linked with libsentencepiece only. Exit status 2: bad arguments, an
// unreadable or malformed file; 3: SentencePiece refused the model or the text (on stderr).
#include <sentencepiece_processor.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace {

void appendIds(const std::vector<int>& ids, std::string& out) {
  for (int id : ids) {
    out += std::to_string(id);
    out += ' ';
  }
  out += '\n';
}

// The documents of a --documents file; false (with a message) when it is malformed.
bool readDocuments(const std::string& bytes, std::vector<std::string>& docs) {
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t nl = bytes.find('\n', at);
    if (nl == std::string::npos || nl == at || nl - at > 12 ||
        bytes.find_first_not_of("0123456789", at) < nl) {
      std::fprintf(stderr, "malformed document header at byte %zu\n", at);
      return false;
    }
    const size_t n = std::stoull(bytes.substr(at, nl - at));
    if (n > bytes.size() - nl - 1) {
      std::fprintf(stderr, "document at byte %zu runs past the end of the file\n", at);
      return false;
    }
    docs.push_back(bytes.substr(nl + 1, n));
    at = nl + 1 + n;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string flag = argc == 4 ? argv[3] : "";
  const bool bos = flag == "--bos", documents = flag == "--documents";
  if (argc != 3 && !bos && !documents) {
    std::fprintf(stderr, "usage: depthlab-spm-encode MODEL FILE [--bos | --documents]\n");
    return 2;
  }
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read '%s'\n", argv[2]);
    return 2;
  }
  std::ostringstream text;
  text << in.rdbuf();
  std::vector<std::string> docs;
  if (documents && !readDocuments(text.str(), docs)) return 2;
  if (!documents) docs.push_back(text.str());
  sentencepiece::SentencePieceProcessor sp;
  auto status = sp.Load(argv[1]);
  if (!status.ok()) {
    std::fprintf(stderr, "cannot load SentencePiece model '%s': %s\n", argv[1], status.ToString().c_str());
    return 3;
  }
  std::string out;
  if (bos && sp.bos_id() >= 0) out += std::to_string(sp.bos_id()) + " ";
  std::vector<int> ids;
  for (const std::string& doc : docs) {
    status = sp.Encode(doc, &ids);
    if (!status.ok()) {
      std::fprintf(stderr, "SentencePiece could not encode '%s': %s\n", argv[2], status.ToString().c_str());
      return 3;
    }
    appendIds(ids, out);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 3;
}
