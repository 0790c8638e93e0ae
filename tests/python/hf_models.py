"""Small random Hugging Face models for DepthLab's import/export parity tests.

make OUT --arch llama|mistral|qwen2 --dtype float32|bfloat16 [--shards] [--tied] [--gqa]
    builds a model with transformers, saves it (sharded when asked) and writes OUT/reference.safetensors
    with `ids` (2, 12) and the model's float32 `logits` for them (a bf16 model is loaded as saved and
    run in float32, as DepthLab does).
make-set OUT
    all the variants the tests use, in one process (transformers is slow to import):
    OUT/llama-f32 (GQA), OUT/llama-bf16-sharded (GQA), OUT/mistral-f32 (GQA), OUT/qwen2-f32 (tied,
    GQA, biases), OUT/qwen2-bf16-sharded (tied, biases), OUT/llama-bytes (a 256-token vocabulary,
    for a byte-level tokenizer.json the tests add).
logits DIR IDS_FILE OUT_FILE
    loads DIR with transformers (AutoModelForCausalLM) and writes the float32 logits of the ids in
    IDS_FILE (a safetensors file with `ids`) to OUT_FILE; prints the architecture it loaded.
encode DIR TEXT
    encodes TEXT with DIR's tokenizer.json and prints the ids.
"""
import sys

import torch
from safetensors.torch import load_file, save_file


def make(out, arch, dtype, shards, tied, gqa, vocab=97):
    import transformers as tf
    common = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=3, num_attention_heads=4,
                  num_key_value_heads=2 if gqa else 4, vocab_size=vocab, max_position_embeddings=64,
                  rms_norm_eps=1e-5, tie_word_embeddings=tied, initializer_range=0.2)
    if arch == "llama":
        config, cls = tf.LlamaConfig(rope_theta=5000.0, **common), tf.LlamaForCausalLM
    elif arch == "mistral":
        config, cls = tf.MistralConfig(sliding_window=32, **common), tf.MistralForCausalLM
    else:
        config, cls = tf.Qwen2Config(**common), tf.Qwen2ForCausalLM
    torch.manual_seed(7)
    model = cls(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name:
                p.uniform_(0.5, 1.5)
            elif name.endswith(".bias"):
                p.uniform_(-0.2, 0.2)
    model = model.to(getattr(torch, dtype))
    model.save_pretrained(out, max_shard_size="40KB" if shards else "2GB")
    ids = torch.randint(0, vocab, (2, 12), generator=torch.Generator().manual_seed(3))
    reloaded = cls.from_pretrained(out).float().eval()
    with torch.no_grad():
        logits = reloaded(ids).logits.float()
    save_file({"ids": ids, "logits": logits.contiguous()}, f"{out}/reference.safetensors")


def logits(folder, ids_file, out):
    import transformers as tf
    model = tf.AutoModelForCausalLM.from_pretrained(folder).float().eval()
    ids = load_file(ids_file)["ids"]
    with torch.no_grad():
        result = model(ids).logits.float()
    save_file({"logits": result.contiguous()}, out)
    print(type(model).__name__)


def encode(folder, text):
    from tokenizers import Tokenizer
    print(" ".join(map(str, Tokenizer.from_file(f"{folder}/tokenizer.json").encode(text).ids)))


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "make":
        args = sys.argv[3:]
        value = lambda flag, default: args[args.index(flag) + 1] if flag in args else default
        make(sys.argv[2], value("--arch", "llama"), value("--dtype", "float32"),
             "--shards" in args, "--tied" in args, "--gqa" in args)
    elif cmd == "make-set":
        out = sys.argv[2]
        make(f"{out}/llama-f32", "llama", "float32", False, False, True)
        make(f"{out}/llama-bf16-sharded", "llama", "bfloat16", True, False, True)
        make(f"{out}/mistral-f32", "mistral", "float32", False, False, True)
        make(f"{out}/qwen2-f32", "qwen2", "float32", False, True, True)
        make(f"{out}/qwen2-bf16-sharded", "qwen2", "bfloat16", True, True, False)
        make(f"{out}/llama-bytes", "llama", "float32", False, False, True, vocab=256)
    elif cmd == "logits":
        logits(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "encode":
        encode(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"unknown command {cmd}")
