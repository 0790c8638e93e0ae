// depthlab-spm-encode MODEL FILE [--bos]: prints the ids SentencePiece gives the whole of FILE,
// newlines and all, as one text (what the model's own tokenizer does with `encode(text)`),
// separated by spaces, after the model's BOS id when --bos is given and the model has one.
// Why a program of its own: Debian's spm_encode encodes line by line and drops the newlines,
// and libsentencepiece cannot share a process with LibTorch (their protobuf symbols clash), so
// the lab runs this, linked with libsentencepiece only. Exit status 2: bad arguments or an
// unreadable file; 3: SentencePiece refused the model or the text (message on stderr).
#include <sentencepiece_processor.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const bool bos = argc == 4 && std::string(argv[3]) == "--bos";
  if (argc != 3 && !bos) {
    std::fprintf(stderr, "usage: depthlab-spm-encode MODEL FILE [--bos]\n");
    return 2;
  }
  std::ifstream in(argv[2], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "cannot read '%s'\n", argv[2]);
    return 2;
  }
  std::ostringstream text;
  text << in.rdbuf();
  sentencepiece::SentencePieceProcessor sp;
  auto status = sp.Load(argv[1]);
  if (!status.ok()) {
    std::fprintf(stderr, "cannot load SentencePiece model '%s': %s\n", argv[1], status.ToString().c_str());
    return 3;
  }
  std::vector<int> ids;
  status = sp.Encode(text.str(), &ids);
  if (!status.ok()) {
    std::fprintf(stderr, "SentencePiece could not encode '%s': %s\n", argv[2], status.ToString().c_str());
    return 3;
  }
  std::string out;
  out.reserve(ids.size() * 6 + 16);
  if (bos && sp.bos_id() >= 0) out += std::to_string(sp.bos_id()) + " ";
  for (int id : ids) {
    out += std::to_string(id);
    out += ' ';
  }
  out += '\n';
  std::fwrite(out.data(), 1, out.size(), stdout);
  return std::fflush(stdout) == 0 ? 0 : 3;
}
