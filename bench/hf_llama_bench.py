# The Hugging Face baseline of `depthlab-cli bench train --device cuda`: LlamaForCausalLM at the
# shape DepthLab trains (untied embeddings, SDPA attention, RMSNorm eps as given), bf16 autocast,
# fused AdamW, gradient clipping at 1.0, `accum` micro-batches per update (as DepthLab's presets
# do), random tokens; eager and with torch.compile. Prints one
# JSON object per mode on its own line ({"mode": ..., "tokens_per_s": ...}) and nothing else on
# stdout, so the C++ side can parse it. Needs torch with CUDA and transformers.
# Usage: python3 hf_llama_bench.py --layers 12 --width 768 --heads 12 --ffn 2048 --seq 256 \
#          --batch 64 --accum 8 --vocab 256 [--steps 20] [--warmup 3] [--no-compile] [--profile P]
import argparse
import json
import sys
import time

import torch
from transformers import LlamaConfig, LlamaForCausalLM


def main():
    ap = argparse.ArgumentParser()
    for name, default in [("layers", 12), ("width", 768), ("heads", 12), ("ffn", 2048),
                          ("seq", 256), ("batch", 64), ("accum", 1), ("vocab", 256),
                          ("steps", 20), ("warmup", 3)]:
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--profile", default="",
                    help="after the timing, profile 2 updates of each mode into PREFIX-<mode>.json")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print(json.dumps({"error": "torch sees no CUDA device"}))
        return 1
    cfg = LlamaConfig(vocab_size=a.vocab, hidden_size=a.width, intermediate_size=a.ffn,
                      num_hidden_layers=a.layers, num_attention_heads=a.heads,
                      num_key_value_heads=a.heads, max_position_embeddings=a.seq,
                      tie_word_embeddings=False, rms_norm_eps=a.eps)
    cfg._attn_implementation = "sdpa"
    for compiled in ([False] if a.no_compile else [False, True]):
        torch.manual_seed(0)
        model = LlamaForCausalLM(cfg).cuda()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
        fwd = torch.compile(model) if compiled else model
        x = torch.randint(0, a.vocab, (a.batch, a.seq + 1), device="cuda")

        def step():
            for _ in range(a.accum):
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = fwd(input_ids=x[:, :-1], labels=x[:, 1:]).loss
                (loss / a.accum).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)

        for _ in range(a.warmup):
            step()
        torch.cuda.synchronize()
        t0 = time.time()
        for _ in range(a.steps):
            step()
        torch.cuda.synchronize()
        seconds = time.time() - t0
        if a.profile:
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU,
                                                    torch.profiler.ProfilerActivity.CUDA]) as prof:
                for _ in range(2):
                    step()
                torch.cuda.synchronize()
            prof.export_chrome_trace(f"{a.profile}-{'compile' if compiled else 'eager'}.json")
        print(json.dumps({"mode": "torch.compile" if compiled else "eager",
                          "tokens_per_s": a.steps * a.accum * a.batch * a.seq / seconds,
                          "torch": torch.__version__,
                          "peak_memory_gb": torch.cuda.max_memory_allocated() / 2**30}),
              flush=True)
        del model, opt, fwd
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    return 0


if __name__ == "__main__":
    sys.exit(main())
