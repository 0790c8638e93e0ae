#!/usr/bin/env python3
"""Independent PyTorch reference of DepthLab's decoder, written from
../shared/reference/curse-of-depth-facts.md (sections 1-3) and, for dyt, dyt_lns, hybridnorm,
hybridnorm_star, olmo2 and options.qkNorm, from the papers and official code cited in
docs/schemes.md, not from the C++ code. Plain multi-head attention only (no GQA, no biases);
lns_learnable, LNS placements other than after_norm, skipInit and layerScale are not written here.

Used by the parity test (same weights and tokens -> logits within 1e-5), by the golden
test's table generator, and by `depthlab-cli bench train` (tokens/s of the same model in
PyTorch). Run it with Debian's /usr/bin/python3 (python3-torch, the same LibTorch 1.13).

  reference_model.py logits --config C.json --scheme S --weights W.safetensors \
                            --tokens T.safetensors --out O.safetensors
  reference_model.py golden --config C.json --scheme S --weights W.safetensors \
                            --tokens T.safetensors --steps 10          # prints JSON losses
  reference_model.py bench  --config C.json --scheme S --steps N --threads K  # prints JSON
"""
import argparse
import json
import math
import struct
import sys
import time

import torch
import torch.nn.functional as F
from torch import nn

DTYPES = {"F32": torch.float32, "F64": torch.float64, "I64": torch.int64, "I32": torch.int32,
          "BF16": torch.bfloat16, "F16": torch.float16}


def load_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        a, b = e["data_offsets"]
        buf = bytearray(data[8 + n + a:8 + n + b])
        t = torch.frombuffer(buf, dtype=DTYPES[e["dtype"]]) if b > a else torch.empty(0)
        out[name] = t.reshape(e["shape"]).clone()
    return out


def save_safetensors(path, tensors):
    names = {v: k for k, v in DTYPES.items()}
    header, blobs, off = {}, [], 0
    for name, t in sorted(tensors.items()):
        t = t.detach().contiguous().cpu()
        raw = t.numpy().tobytes() if t.dtype != torch.bfloat16 else t.view(torch.int16).numpy().tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


class RMSNorm(nn.Module):
    def __init__(self, d, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        xf = x.float()
        return self.weight * (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype)


class DyT(nn.Module):
    """Dynamic Tanh (arXiv:2503.10622): weight * tanh(alpha x) (+ bias with layernorm models);
    alpha a learnable scalar of shape ()."""

    def __init__(self, d, alpha, bias):
        super().__init__()
        self.alpha = nn.Parameter(torch.tensor(float(alpha)))
        self.weight = nn.Parameter(torch.ones(d))
        self.bias = nn.Parameter(torch.zeros(d)) if bias else None

    def forward(self, x):  # (B, T, C) -> (B, T, C)
        y = self.weight * torch.tanh(self.alpha * x)
        return y + self.bias if self.bias is not None else y


DYT_SCHEMES = ("dyt", "dyt_lns")


def dyt_alphas(cfg):
    """Initial (attention, other) alphas: the options, else DyT's LLaMA table by width (DyT repo,
    other_tasks/LLaMA/README.md: 7B 0.8/0.2, 13B 0.6/0.15, 34B and 70B 0.2/0.05)."""
    C = cfg["dModel"]
    attn, other = (0.8, 0.2) if C <= 4096 else (0.6, 0.15) if C <= 5120 else (0.2, 0.05)
    return cfg.get("dytAlphaAttn") or attn, cfg.get("dytAlphaOther") or other


def make_norm(cfg, alpha=None):
    """The model's norm over C; a DyT with initial `alpha` when alpha is given."""
    if alpha is not None:
        return DyT(cfg["dModel"], alpha, cfg["norm"] == "layernorm")
    if cfg["norm"] == "layernorm":
        return nn.LayerNorm(cfg["dModel"], eps=cfg["normEps"])
    return RMSNorm(cfg["dModel"], cfg["normEps"])


def rope_tables(head_dim, T, base):
    inv = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    freqs = torch.outer(torch.arange(T, dtype=torch.float64), inv)
    emb = torch.cat([freqs, freqs], -1)
    return emb.cos().float(), emb.sin().float()


def apply_rope(x, cos, sin):
    d = x.shape[-1]
    x1, x2 = x[..., :d // 2], x[..., d // 2:]
    return x * cos + torch.cat([-x2, x1], -1) * sin


class Attention(nn.Module):
    """Causal multi-head attention. qk: None | "head" (RMSNorm of q and k over each head's D,
    weights (D): options.qkNorm, HybridNorm) | "whole" (over the whole projection, weights (H*D):
    OLMo 2); both before RoPE. v_norm: RMSNorm of v per head (HybridNorm)."""

    def __init__(self, d, h, eps=1e-6, qk=None, v_norm=False):
        super().__init__()
        self.h, self.hd, self.qk = h, d // h, qk
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, d, bias=False)
        self.v_proj = nn.Linear(d, d, bias=False)
        self.o_proj = nn.Linear(d, d, bias=False)
        if qk is not None:
            n = self.hd if qk == "head" else d
            self.q_norm, self.k_norm = RMSNorm(n, eps), RMSNorm(n, eps)
        self.v_norm = RMSNorm(self.hd, eps) if v_norm else None

    def forward(self, x, cos, sin):
        B, T, C = x.shape
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)  # (B, T, C) each
        if self.qk == "whole":
            q, k = self.q_norm(q), self.k_norm(k)
        q, k, v = (t.view(B, T, self.h, self.hd).transpose(1, 2) for t in (q, k, v))  # (B, H, T, D)
        if self.qk == "head":
            q, k = self.q_norm(q), self.k_norm(k)
        if self.v_norm is not None:
            v = self.v_norm(v)
        q, k = apply_rope(q, cos[:T], sin[:T]), apply_rope(k, cos[:T], sin[:T])
        att = (q @ k.transpose(-2, -1)) / math.sqrt(self.hd)
        mask = torch.ones(T, T, dtype=torch.bool).triu(1)
        att = att.masked_fill(mask, float("-inf")).softmax(-1)
        return self.o_proj((att @ v).transpose(1, 2).reshape(B, T, C))


class MLP(nn.Module):
    def __init__(self, d, f):
        super().__init__()
        self.gate_proj = nn.Linear(d, f, bias=False)
        self.up_proj = nn.Linear(d, f, bias=False)
        self.down_proj = nn.Linear(f, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Block(nn.Module):
    """Facts file section 2.1 and docs/schemes.md: one block per scheme, written out case by case."""

    def __init__(self, cfg, scheme, i, L):
        super().__init__()
        d = cfg["dModel"]
        self.scheme, self.ell, self.L = scheme, i + 1, L
        hybrid = scheme == "hybridnorm" or scheme == "hybridnorm_star"
        qk = "head" if hybrid or cfg.get("qkNorm") else None
        if scheme == "olmo2":
            qk = "whole"
        self.self_attn = Attention(d, cfg["nHeads"], cfg["normEps"], qk, v_norm=hybrid)
        self.mlp = MLP(d, cfg["dFF"])
        a_attn, a_other = dyt_alphas(cfg) if scheme in DYT_SCHEMES else (None, None)
        # HybridNorm blocks have no norm before attention; HybridNorm*'s first block has one.
        if scheme not in ("hybridnorm", "olmo2") and not (scheme == "hybridnorm_star" and i > 0):
            self.input_layernorm = make_norm(cfg, a_attn)
        if scheme != "olmo2":
            self.post_attention_layernorm = make_norm(cfg, a_other)
        if scheme in ("sandwich", "olmo2"):
            self.attn_out_norm = make_norm(cfg)
            self.mlp_out_norm = make_norm(cfg)
        self.mix_post = i < round(cfg.get("mixLnAlpha", 0.25) * L)

    def forward(self, x, cos, sin):  # (B, T, C) -> (B, T, C)
        A = lambda t: self.self_attn(t, cos, sin)
        Fn = self.mlp
        s = self.scheme
        if s == "olmo2":  # reordered norm: norms on the sublayer outputs
            h = x + self.attn_out_norm(A(x))
            return h + self.mlp_out_norm(Fn(h))
        N2 = self.post_attention_layernorm
        if s == "hybridnorm" or (s == "hybridnorm_star" and self.ell > 1):
            g = N2(x + A(x))  # QKV-norm attention, then Post-Norm around the MLP
            return g + Fn(g)
        N1 = self.input_layernorm
        if s in ("pre_ln", "dyt", "hybridnorm_star") or (s == "mix_ln" and not self.mix_post):
            h = x + A(N1(x))
            return h + Fn(N2(h))
        if s in ("lns", "dyt_lns"):
            c = 1.0 / math.sqrt(self.ell)
            h = x + A(N1(x) * c)
            return h + Fn(N2(h) * c)
        if s == "post_ln" or s == "mix_ln":
            h = N1(x + A(x))
            return N2(h + Fn(h))
        if s in ("deepnorm", "deepnorm_official"):
            a = math.sqrt(8.0) if s == "deepnorm_official" else (2.0 * self.L) ** 0.25
            h = N1(a * x + A(x))
            return N2(a * h + Fn(h))
        if s == "sandwich":
            h = x + self.attn_out_norm(A(N1(x)))
            return h + self.mlp_out_norm(Fn(N2(h)))
        raise ValueError(f"unknown scheme {s}")


class Decoder(nn.Module):
    def __init__(self, cfg, scheme):
        super().__init__()
        L, C = cfg["nLayers"], cfg["dModel"]
        self.embed_tokens = nn.Embedding(cfg["vocabSize"], C)
        self.layers = nn.ModuleList(Block(cfg, scheme, i, L) for i in range(L))
        dyt = scheme in DYT_SCHEMES
        # DyT's LLaMA code multiplies the embeddings by a learnable scalar, init sqrt(C).
        self.embed_scale = nn.Parameter(torch.tensor(math.sqrt(C))) if dyt else None
        self.norm = make_norm(cfg, dyt_alphas(cfg)[1] if dyt else None)  # never depth-scaled
        self.lm_head = nn.Linear(C, cfg["vocabSize"], bias=False)
        self.cos, self.sin = rope_tables(C // cfg["nHeads"], cfg["seqLen"], cfg["ropeBase"])

    def forward(self, idx):  # (B, T) int64 -> (B, T, V)
        x = self.embed_tokens(idx)
        if self.embed_scale is not None:
            x = x * self.embed_scale
        for b in self.layers:
            x = b(x, self.cos, self.sin)
        return self.lm_head(self.norm(x))


def build(args):
    cfg = json.load(open(args.config))
    model_cfg = dict(cfg["model"])
    opts = cfg.get("options", {})
    model_cfg["mixLnAlpha"] = opts.get("mixLnAlpha", 0.25)
    for key in ("qkNorm", "dytAlphaAttn", "dytAlphaOther"):  # absent: off / by width
        model_cfg[key] = opts.get(key)
    model = Decoder(model_cfg, args.scheme)
    if getattr(args, "weights", None):
        w = load_safetensors(args.weights)
        missing = set(dict(model.named_parameters())) ^ set(w)
        if missing:
            sys.exit(f"reference_model: parameter names differ: {sorted(missing)[:5]}")
        model.load_state_dict(w, strict=True)
    return cfg, model


def blas_name():
    """The BLAS this torch's matrix products run on: MKL, or the OpenBLAS core libblas.so.3 picked."""
    if torch.backends.mkl.is_available():
        return "MKL"
    try:
        import ctypes
        f = ctypes.CDLL("libblas.so.3").openblas_get_corename
        f.restype = ctypes.c_char_p
        return "OpenBLAS " + f().decode()
    except (OSError, AttributeError):
        info = [w for w in torch.__config__.show().replace(",", " ").split() if w.startswith("BLAS_INFO=")]
        return info[0] if info else "unknown BLAS"


def time_gemms(shapes, reps):
    """The `gemm` mode, as DepthLab's core/bench/update_gemms.cpp times the same products under
    its own BLAS: each shape's forward, input-gradient and weight-gradient products back to back
    `reps` times after two warm-ups, the median times its count, summed (ms)."""
    torch.manual_seed(1)
    total = 0.0
    with torch.no_grad():
        for m, k, n, count in shapes:
            x, w, dy = torch.randn(m, k), torch.randn(n, k), torch.randn(m, n)
            each = []
            for r in range(max(1, reps) + 2):
                t0 = time.perf_counter()
                torch.mm(x, w.t())
                torch.mm(dy, w)
                torch.mm(dy.t(), x)
                if r >= 2:
                    each.append(1e3 * (time.perf_counter() - t0))
            each.sort()
            total += each[len(each) // 2] * count
    return {"gemm_ms": total, "blas": blas_name()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["logits", "golden", "bench", "gemm"])
    ap.add_argument("--config", required=True)
    ap.add_argument("--scheme", required=True)
    ap.add_argument("--weights")
    ap.add_argument("--tokens")
    ap.add_argument("--out")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--shapes", help="gemm: [[M, K, N, count], ...], y (M, N) = x (M, K) @ w (N, K)^T")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.mode == "gemm":
        print(json.dumps(time_gemms(json.loads(args.shapes), args.steps)))
        return
    cfg, model = build(args)
    if args.mode == "logits":
        t = load_safetensors(args.tokens)
        with torch.no_grad():
            save_safetensors(args.out, {"logits": model(t["inputs"])})
    elif args.mode == "golden":
        t = load_safetensors(args.tokens)
        o = cfg["optim"]
        opt = torch.optim.Adam(model.parameters(), lr=o["lr"], betas=(o["beta1"], o["beta2"]),
                               eps=o["eps"], weight_decay=o["weightDecay"])
        losses = []
        for _ in range(args.steps):
            opt.zero_grad()
            logits = model(t["inputs"])
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), t["targets"].reshape(-1))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        print(json.dumps({"losses": losses}))
    else:
        o, m = cfg["optim"], cfg["model"]
        B, T, V = o["batchSize"], m["seqLen"], m["vocabSize"]
        # The paper's init (facts file 2.1): every Linear and the embedding N(0, 0.02), norms 1,
        # as the C++ trainer does, so both time the same model in the same numeric regime.
        with torch.no_grad():
            for name, p in model.named_parameters():
                if p.dim() == 2:
                    p.normal_(0.0, m.get("initStd", 0.02) if "embed" not in name else m.get("embedStd", 0.02))
        opt = torch.optim.Adam(model.parameters(), lr=o["lr"])
        g = torch.Generator().manual_seed(1)
        x = torch.randint(0, V, (B, T + 1), generator=g)
        step_ms = []  # every timed update, as the C++ side records its own
        for step in range(args.steps + 3):  # three warm-up steps
            s0 = time.perf_counter()
            opt.zero_grad()
            logits = model(x[:, :-1])
            F.cross_entropy(logits.reshape(-1, V), x[:, 1:].reshape(-1)).backward()
            opt.step()
            if step >= 3:
                step_ms.append(1e3 * (time.perf_counter() - s0))
        dt = sum(step_ms) / 1e3
        print(json.dumps({"tokens_per_s": B * T * args.steps / dt, "seconds": dt,
                          "step_ms": step_ms}))


if __name__ == "__main__":
    main()
