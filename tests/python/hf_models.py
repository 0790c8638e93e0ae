"""Small random Hugging Face models for DepthLab's import/export parity tests.

make OUT --arch llama|mistral|qwen2|qwen3|olmo2|phi3|gemma2|gemma3|gpt2|gpt_neox|gpt_neox_seq
         --dtype float32|bfloat16 [--shards] [--tied]
         [--gqa] [--rope llama3|linear|dynamic|yarn|longrope|partial]
    builds a model with transformers, saves it (sharded when asked) and writes OUT/reference.safetensors
    with `ids` (2, 12) and the model's float32 `logits` for them (a bf16 model is loaded as saved and
    run in float32, as DepthLab does).
make-set OUT
    all the variants the tests use, in one process (transformers is slow to import):
    OUT/llama-f32 (GQA), OUT/llama-bf16-sharded (GQA), OUT/mistral-f32 (GQA), OUT/qwen2-f32 (tied,
    GQA, biases), OUT/qwen2-bf16-sharded (tied, biases), OUT/llama-{llama3,linear,dynamic}-f32 and
    OUT/qwen2-yarn-f32 (rope scaling), OUT/qwen3-f32 (GQA), OUT/qwen3-bf16-sharded (tied, GQA),
    OUT/olmo2-f32 (GQA), OUT/olmo2-bf16-sharded (tied), OUT/phi3-f32 (GQA),
    OUT/phi3-longrope-f32 (tied, GQA, past its original context of 8: the long factors),
    OUT/gemma2-f32 (tied, GQA), OUT/gemma2-bf16-sharded (GQA; soft caps low enough to matter),
    OUT/gemma3-f32 (tied, GQA), OUT/gemma3-bf16-sharded (untied; local and global ropes),
    OUT/phi3-partial-f32 (GQA, partial_rotary_factor 0.5), OUT/gpt2-f32 (tied: LayerNorm with bias, learned positions, Conv1D, gelu_new),
    OUT/gpt_neox-f32 (parallel residual, rotary_pct 0.25), OUT/gpt_neox-seq-f32 (sequential,
    rotary_pct 1.0), OUT/gpt_neox-bf16-sharded (parallel, 0.25; untied as Pythia),
    OUT/llama-bytes (a 256-token vocabulary, for a byte-level tokenizer.json the tests add).
    A rope-scaled variant whose logits equal the unscaled model's is an error (a vacuous test).
logits DIR IDS_FILE OUT_FILE
    loads DIR with transformers (AutoModelForCausalLM) and writes the float32 logits of the ids in
    IDS_FILE (a safetensors file with `ids`) to OUT_FILE; prints the architecture it loaded.
encode DIR TEXT
    encodes TEXT with DIR's tokenizer.json and prints the ids.
"""
import sys

import torch
from safetensors.torch import load_file, save_file


ROPE = {  # rope settings of the rope-scaled variants (short contexts so the scaling shows at T = 12)
    "llama3": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
               "original_max_position_embeddings": 16},
    "linear": {"rope_type": "linear", "factor": 2.5},
    "dynamic": {"rope_type": "dynamic", "factor": 2.0},
    "yarn": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16},
    # original context 8 < 12: the long factors; attention factor sqrt(1 + ln 8 / ln 8)
    "partial": {"rope_type": "default", "partial_rotary_factor": 0.5},  # Phi-4-mini's kind (0.75)
    "longrope": {"rope_type": "longrope", "short_factor": [1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0],
                 "long_factor": [1.0, 2.0, 4.0, 8.0, 8.0, 12.0, 16.0, 24.0]},
}


def config_of(arch, common, rope, caps=True):
    """caps=False: Gemma 2 without soft caps, Gemma 3 with one plain rope (the vacuity checks)."""
    import transformers as tf
    params = dict(ROPE.get(rope, {"rope_type": "default"}))
    params["rope_theta"] = 5000.0
    if arch == "llama":
        return tf.LlamaConfig(rope_parameters=params, **common), tf.LlamaForCausalLM
    if arch == "mistral":
        return tf.MistralConfig(sliding_window=32, **common), tf.MistralForCausalLM
    if arch == "qwen2":
        return tf.Qwen2Config(rope_parameters=params if rope else None, **common), tf.Qwen2ForCausalLM
    if arch == "qwen3":
        return tf.Qwen3Config(head_dim=16, rope_parameters=params, **common), tf.Qwen3ForCausalLM
    if arch == "olmo2":
        return tf.Olmo2Config(rope_parameters=params, **common), tf.Olmo2ForCausalLM
    if arch == "gemma2":  # soft caps low enough to bite on these logits and scores
        return tf.Gemma2Config(head_dim=16, query_pre_attn_scalar=24, sliding_window=32,
                               attn_logit_softcapping=3.0 if caps else None,
                               final_logit_softcapping=5.0 if caps else None,
                               rope_parameters=params, **common), tf.Gemma2ForCausalLM
    if arch == "gemma3":  # a full-attention layer between two sliding ones, each with its rope
        ropes = {"full_attention": {"rope_type": "linear", "factor": 4.0, "rope_theta": 100000.0},
                 "sliding_attention": {"rope_type": "default", "rope_theta": 500.0}}
        if not caps:  # one plain rope for every layer
            ropes = {t: {"rope_type": "default", "rope_theta": 5000.0} for t in ropes}
        return tf.Gemma3TextConfig(head_dim=16, query_pre_attn_scalar=24, sliding_window=32,
                                   layer_types=["sliding_attention", "full_attention", "sliding_attention"],
                                   rope_parameters=ropes, **common), tf.Gemma3ForCausalLM
    if arch == "phi3":
        extra = {"original_max_position_embeddings": 8} if rope == "longrope" else {}
        return tf.Phi3Config(rope_parameters=params, pad_token_id=0, **extra, **common), tf.Phi3ForCausalLM
    if arch == "gpt2":  # GPT-2's own field names; no dropout
        return tf.GPT2Config(n_embd=common["hidden_size"], n_layer=common["num_hidden_layers"],
                             n_head=common["num_attention_heads"], n_inner=common["intermediate_size"],
                             n_positions=common["max_position_embeddings"],
                             vocab_size=common["vocab_size"], layer_norm_epsilon=1e-5,
                             activation_function="gelu_new", resid_pdrop=0.0, embd_pdrop=0.0,
                             attn_pdrop=0.0, tie_word_embeddings=common["tie_word_embeddings"],
                             initializer_range=common["initializer_range"], bos_token_id=0,
                             eos_token_id=0), tf.GPT2LMHeadModel
    if arch in ("gpt_neox", "gpt_neox_seq"):  # caps=False: the other residual form and rotary share
        parallel = (arch == "gpt_neox") == caps
        neox = {k: v for k, v in common.items() if k not in ("num_key_value_heads", "rms_norm_eps")}
        params = {"rope_type": "default", "rope_theta": 5000.0,
                  "partial_rotary_factor": 0.25 if parallel else 1.0}
        return tf.GPTNeoXConfig(use_parallel_residual=parallel, rope_parameters=params,
                                layer_norm_eps=1e-5, hidden_act="gelu", **neox), tf.GPTNeoXForCausalLM
    sys.exit(f"unknown architecture {arch}")


def make(out, arch, dtype, shards, tied, gqa, vocab=97, rope=None):
    common = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=3, num_attention_heads=4,
                  num_key_value_heads=2 if gqa else 4, vocab_size=vocab, max_position_embeddings=64,
                  rms_norm_eps=1e-5, tie_word_embeddings=tied, initializer_range=0.2)
    config, cls = config_of(arch, common, rope)
    torch.manual_seed(7)
    model = cls(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".bias"):
                p.uniform_(-0.2, 0.2)
            elif "norm" in name or ".ln_" in name:
                p.uniform_(-0.5, 0.5) if arch.startswith("gemma") else p.uniform_(0.5, 1.5)
    model = model.to(getattr(torch, dtype))
    model.save_pretrained(out, max_shard_size="40KB" if shards else "2GB")
    ids = torch.randint(0, vocab, (2, 12), generator=torch.Generator().manual_seed(3))
    reloaded = cls.from_pretrained(out).float().eval()
    with torch.no_grad():
        logits = reloaded(ids).logits.float()
    if rope and rope != "dynamic":  # the scaling must matter, or the test proves nothing
        plain, _ = config_of(arch, common, None)
        unscaled = cls.from_pretrained(out, config=plain).float().eval()
        with torch.no_grad():
            if (unscaled(ids).logits - logits).abs().max() < 1e-2:
                sys.exit(f"{out}: rope scaling {rope} does not change the logits")
    if arch in ("gemma2", "gemma3", "gpt_neox", "gpt_neox_seq"):
        # so must Gemma 2's soft caps, Gemma 3's two ropes, GPT-NeoX's residual form and rotary share
        uncapped, _ = config_of(arch, common, None, caps=False)
        with torch.no_grad():
            if (cls.from_pretrained(out, config=uncapped).float().eval()(ids).logits - logits).abs().max() < 1e-2:
                sys.exit(f"{out}: soft caps / local and global ropes do not change the logits")
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
             "--shards" in args, "--tied" in args, "--gqa" in args, rope=value("--rope", None))
    elif cmd == "make-set":
        out = sys.argv[2]
        make(f"{out}/llama-f32", "llama", "float32", False, False, True)
        make(f"{out}/llama-bf16-sharded", "llama", "bfloat16", True, False, True)
        make(f"{out}/mistral-f32", "mistral", "float32", False, False, True)
        make(f"{out}/qwen2-f32", "qwen2", "float32", False, True, True)
        make(f"{out}/qwen2-bf16-sharded", "qwen2", "bfloat16", True, True, False)
        for rope in ["llama3", "linear", "dynamic"]:
            make(f"{out}/llama-{rope}-f32", "llama", "float32", False, False, True, rope=rope)
        make(f"{out}/qwen2-yarn-f32", "qwen2", "float32", False, True, True, rope="yarn")
        make(f"{out}/qwen3-f32", "qwen3", "float32", False, False, True)
        make(f"{out}/qwen3-bf16-sharded", "qwen3", "bfloat16", True, True, True)
        make(f"{out}/olmo2-f32", "olmo2", "float32", False, False, True)
        make(f"{out}/olmo2-bf16-sharded", "olmo2", "bfloat16", True, True, False)
        make(f"{out}/phi3-f32", "phi3", "float32", False, False, True)
        make(f"{out}/phi3-longrope-f32", "phi3", "float32", False, True, True, rope="longrope")
        make(f"{out}/gemma2-f32", "gemma2", "float32", False, True, True)
        make(f"{out}/gemma2-bf16-sharded", "gemma2", "bfloat16", True, False, True)
        make(f"{out}/gemma3-f32", "gemma3", "float32", False, True, True)
        make(f"{out}/gemma3-bf16-sharded", "gemma3", "bfloat16", True, False, False)
        make(f"{out}/phi3-partial-f32", "phi3", "float32", False, False, True, rope="partial")
        make(f"{out}/gpt2-f32", "gpt2", "float32", False, True, False)
        make(f"{out}/gpt_neox-f32", "gpt_neox", "float32", False, False, False)
        make(f"{out}/gpt_neox-seq-f32", "gpt_neox_seq", "float32", False, True, False)
        make(f"{out}/gpt_neox-bf16-sharded", "gpt_neox", "bfloat16", True, False, False)
        make(f"{out}/llama-bytes", "llama", "float32", False, False, True, vocab=256)
    elif cmd == "logits":
        logits(sys.argv[2], sys.argv[3], sys.argv[4])
    elif cmd == "encode":
        encode(sys.argv[2], sys.argv[3])
    else:
        sys.exit(f"unknown command {cmd}")
