"""tokenizer.json for a SentencePiece model, as transformers converts one.

Usage: tokenizer_routes.py MODEL.model OUT_DIR [--no-bos]

The tests of core/hf/model_text.cpp compare an imported model's two tokenizer routes on the same
text (tokenizer.model through SentencePiece, tokenizer.json through `tokenizers`). This writes
OUT_DIR/tokenizer.json for MODEL.model with transformers' own SentencePiece converter
(SpmConverter.build_tokenizer_from_spm_proto), and a post-processor that puts BOS first as
LlamaTokenizerFast does (none with --no-bos). Without protobuf and the sentencepiece package the
model file cannot be parsed here, so the converter is handed the pieces from `spm_export_vocab`
and the settings the test trained the model with (tests/core/hf/test_model_text_routes.cpp):
BPE, byte fallback, identity normalization, a dummy prefix, extra whitespace kept.
"""
import subprocess
import sys
from types import SimpleNamespace

from tokenizers import processors
from transformers.convert_slow_tokenizer import SpmConverter

NORMAL, UNKNOWN, CONTROL, BYTE = 1, 2, 3, 6  # sentencepiece_model.proto's ModelProto.SentencePiece.Type


def piece_type(piece):
    if piece == "<unk>":
        return UNKNOWN
    if piece in ("<s>", "</s>"):
        return CONTROL
    if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
        return BYTE
    return NORMAL


def main():
    model, out_dir = sys.argv[1], sys.argv[2]
    bos = "--no-bos" not in sys.argv[3:]
    listing = subprocess.run(["spm_export_vocab", "--model=" + model], check=True,
                             capture_output=True, text=True).stdout
    pieces = []
    for line in listing.split("\n"):
        if line:
            piece, score = line.rsplit("\t", 1)
            pieces.append(SimpleNamespace(piece=piece, score=float(score), type=piece_type(piece)))
    proto = SimpleNamespace(
        pieces=pieces,
        trainer_spec=SimpleNamespace(byte_fallback=True, unk_piece="<unk>", unk_id=0, model_type=2),
        normalizer_spec=SimpleNamespace(precompiled_charsmap=b"", remove_extra_whitespaces=False,
                                        escape_whitespaces=True, add_dummy_prefix=True))
    vocab = {p.piece: i for i, p in enumerate(pieces)}
    tok = SpmConverter.build_tokenizer_from_spm_proto(proto, vocab, legacy=False)
    if bos:
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A", pair="<s> $A <s> $B", special_tokens=[("<s>", vocab["<s>"])])
    tok.save(out_dir + "/tokenizer.json")


if __name__ == "__main__":
    main()
