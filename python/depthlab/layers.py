"""Finding a PyTorch model's blocks, their norms and its shape, for depthlab.watch.

Hugging Face families are found by the attribute paths transformers gives them (Llama, Mistral,
Qwen2/3, Gemma 2/3, OLMo 2, Phi-3: ``model.layers``; GPT-2: ``transformer.h``; Pythia:
``gpt_neox.layers``); a model of one's own passes ``layers=`` (its ``nn.ModuleList`` of blocks).
The "norm outputs" follow the lab's trace (core/model/block.h): what enters attention and what
enters the MLP, read as the input of the attention and MLP modules where they are found (so a
depth scale applied between the norm and the sublayer, as LNS's 1/sqrt(l), is in it), else as the
output of the norm modules; OLMo 2, with norms only after the sublayers, gives those outputs.
Does not: run the model or change it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Sequence

import torch
from torch import nn

# Where transformers keeps the blocks, most common first.
BLOCK_PATHS = ("model.layers", "transformer.h", "gpt_neox.layers", "model.decoder.layers",
               "transformer.layers", "transformer.blocks", "layers", "blocks", "h")

# (attention side, MLP side) norm names by Hugging Face model_type where the default is wrong.
FAMILY_NORMS = {
    "gemma2": ("input_layernorm", "pre_feedforward_layernorm"),
    "gemma3": ("input_layernorm", "pre_feedforward_layernorm"),
    "gemma3_text": ("input_layernorm", "pre_feedforward_layernorm"),
    "olmo2": ("post_attention_layernorm", "post_feedforward_layernorm"),
    "gpt2": ("ln_1", "ln_2"),
}
ATTN_NORM_NAMES = ("input_layernorm", "ln_1", "attention_norm", "attn_norm", "ln1", "norm1")
FFN_NORM_NAMES = ("pre_feedforward_layernorm", "post_attention_layernorm", "ln_2", "ffn_norm",
                  "mlp_norm", "ln2", "norm2")
# The sublayers whose input is the (scaled) norm output, where a block has them.
ATTN_NAMES = ("self_attn", "attn", "attention", "self_attention")
MLP_NAMES = ("mlp", "feed_forward", "ffn", "ff")
# Families whose norms sit after the sublayers: their norms' outputs are what the lab traces.
NORMS_AFTER_SUBLAYERS = ("olmo2",)


@dataclass
class Tap:
    """Where a block's norm output is read: a module's input ("input") or output ("output")."""
    module: nn.Module
    reads: str


@dataclass
class ModelLayout:
    blocks: List[nn.Module]
    path: str                            # "model.layers", or "layers=" when given
    attn_norms: List[Optional[Tap]]      # per block: what enters attention (None: not found)
    ffn_norms: List[Optional[Tap]]       # per block: what enters the MLP
    width: int                           # C
    heads: int                           # 1 when unknown
    vocab: int                           # 0 when unknown


def _attr_path(obj, path: str):
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _as_blocks(value) -> Optional[List[nn.Module]]:
    if isinstance(value, (nn.ModuleList, nn.Sequential)) and len(value) > 0:
        return list(value)
    if isinstance(value, (list, tuple)) and value and all(isinstance(m, nn.Module) for m in value):
        return list(value)
    return None


def find_blocks(model: nn.Module, layers=None):
    """(blocks, path): the given ``layers`` or the first known path that holds blocks."""
    if layers is not None:
        blocks = _as_blocks(layers)
        if blocks is None:
            raise ValueError("layers= must be the model's blocks: an nn.ModuleList (or a list) "
                             "of at least one nn.Module, such as model.transformer.h")
        return blocks, "layers="
    for path in BLOCK_PATHS:
        blocks = _as_blocks(_attr_path(model, path))
        if blocks is not None:
            return blocks, path
    raise ValueError(
        f"depthlab.watch could not find the blocks of {type(model).__name__} (looked at "
        + ", ".join(BLOCK_PATHS) + "): pass layers=<the nn.ModuleList of its blocks>, "
        "e.g. depthlab.watch(model, layers=model.blocks)")


def _model_type(model) -> str:
    config = getattr(model, "config", None)
    return str(getattr(config, "model_type", "") or "")


def _first(block, candidates):
    for n in candidates:
        m = getattr(block, n, None)
        if isinstance(m, nn.Module):
            return m
    return None


def find_norms(model: nn.Module, blocks: Sequence[nn.Module]):
    """Per block, the Tap of what enters attention and of what enters the MLP (None: none)."""
    family = _model_type(model)
    names = FAMILY_NORMS.get(family)
    attn_names = (names[0],) if names else ATTN_NORM_NAMES
    ffn_names = (names[1],) if names else FFN_NORM_NAMES

    def tap(block, sublayers, norms):
        if family not in NORMS_AFTER_SUBLAYERS and _first(block, norms) is not None:
            sub = _first(block, sublayers)
            if sub is not None:
                return Tap(sub, "input")
        norm = _first(block, norms)
        return Tap(norm, "output") if norm is not None else None

    return ([tap(b, ATTN_NAMES, attn_names) for b in blocks],
            [tap(b, MLP_NAMES, ffn_names) for b in blocks])


def _config_int(model, *keys) -> int:
    config = getattr(model, "config", None)
    for k in keys:
        v = getattr(config, k, None) if config is not None else None
        if isinstance(v, int) and v > 0:
            return v
    return 0


def _width_from_modules(model: nn.Module, blocks, attn_norms) -> int:
    for block in blocks:
        w = getattr(_first(block, ATTN_NORM_NAMES + FFN_NORM_NAMES), "weight", None)
        if isinstance(w, torch.Tensor) and w.dim() == 1:
            return int(w.shape[0])
    for m in model.modules():
        if isinstance(m, nn.Embedding):
            return int(m.embedding_dim)
    return 0


def _vocab_from_modules(model: nn.Module) -> int:
    for m in model.modules():
        if isinstance(m, nn.Embedding):
            return int(m.num_embeddings)
    return 0


def layout_of(model: nn.Module, layers=None, width: int = 0) -> ModelLayout:
    blocks, path = find_blocks(model, layers)
    attn, ffn = find_norms(model, blocks)
    c = width or _config_int(model, "hidden_size", "n_embd", "d_model") or \
        _width_from_modules(model, blocks, attn)
    if c <= 0:
        raise ValueError(f"depthlab.watch could not tell the width of {type(model).__name__}: "
                         "pass width=<its residual width>")
    heads = _config_int(model, "num_attention_heads", "n_head", "n_heads") or 1
    if c % heads:
        heads = 1
    vocab = _config_int(model, "vocab_size") or _vocab_from_modules(model)
    return ModelLayout(blocks, path, attn, ffn, c, heads, vocab)
