"""The probe passes of depthlab.watch on a user's model: one traced forward pass (every block's
input, the last block's output and the norms' outputs, caught by hooks that live only during the
pass) and the single-layer pruning sweep (block l's output replaced by its input). Each runs under
no_grad in eval mode (the model's mode is restored), with the RNG state of the CPU and of the
model's CUDA devices saved and restored, so the training loop draws the same numbers as without
the probe. The statistics are the C++ core's (depthlab._core).
Legend: L blocks, B probe rows, T sequence length, C width, V vocabulary.
"""
from __future__ import annotations

import contextlib
from typing import Callable, Dict, List, Optional

import torch
from torch import nn

from . import _core


def first_tensor(value):
    """The tensor a block or model hands on: itself, the first of a tuple, or .logits."""
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (tuple, list)) and value and isinstance(value[0], torch.Tensor):
        return value[0]
    logits = getattr(value, "logits", None)
    if isinstance(logits, torch.Tensor):
        return logits
    return None


def _replace_first(value, tensor):
    if isinstance(value, torch.Tensor):
        return tensor
    if isinstance(value, tuple):
        return (tensor,) + tuple(value[1:])
    if isinstance(value, list):
        return [tensor] + list(value[1:])
    return value


def _block_input(args, kwargs):
    if args and isinstance(args[0], torch.Tensor):
        return args[0]
    if isinstance(kwargs.get("hidden_states"), torch.Tensor):
        return kwargs["hidden_states"]
    for v in kwargs.values():
        if isinstance(v, torch.Tensor) and v.is_floating_point() and v.dim() == 3:
            return v
    return None


class ProbeBatch:
    """The fixed probe batch: what the model is called with, and the next-token targets (B, T),
    -100 where a position has no next real token (the last one, and pads)."""

    def __init__(self, batch, device):
        if isinstance(batch, dict):
            ids = batch.get("input_ids")
            mask = batch.get("attention_mask")
        else:
            ids, mask = batch, None
        if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.dtype not in (
                torch.int64, torch.int32) or ids.numel() == 0:
            shape = tuple(ids.shape) if isinstance(ids, torch.Tensor) else type(ids).__name__
            raise ValueError("probe_batch must be token ids (B, T) of an integer dtype, or a dict "
                             f"with input_ids (B, T) and optionally attention_mask; got {shape}")
        if ids.shape[1] < 2:
            raise ValueError("probe_batch needs sequences of at least 2 tokens (a next-token target)")
        self.ids = ids.detach().to(device=device, dtype=torch.int64).clone()
        self.mask = None if mask is None else mask.detach().to(device).clone()
        targets = torch.full_like(self.ids, -100)
        targets[:, :-1] = self.ids[:, 1:]
        if self.mask is not None:
            if self.mask.shape != self.ids.shape:
                raise ValueError(f"probe_batch's attention_mask {tuple(self.mask.shape)} must be "
                                 f"as input_ids {tuple(self.ids.shape)}")
            real = self.mask.bool()
            targets[:, :-1].masked_fill_(~real[:, 1:], -100)
            targets.masked_fill_(~real, -100)
        self.targets = targets

    @property
    def rows(self):
        return int(self.ids.shape[0])

    @property
    def length(self):
        return int(self.ids.shape[1])

    def call(self, model):
        if self.mask is None:
            return model(self.ids)
        return model(input_ids=self.ids, attention_mask=self.mask)


@contextlib.contextmanager
def quiet_model(model: nn.Module, devices: List[int]):
    """no_grad, eval mode and the RNG state, all given back as they were."""
    was_training = model.training
    with torch.random.fork_rng(devices=devices), torch.no_grad():
        model.eval()
        try:
            yield
        finally:
            model.train(was_training)


class _Taps:
    """Hooks on the blocks and norms for one pass; removed on exit."""

    def __init__(self, blocks, attn_norms=(), ffn_norms=(), skip: Optional[int] = None):
        self.blocks, self.skip = blocks, skip
        self.inputs: List[Optional[torch.Tensor]] = [None] * len(blocks)
        self.last_output: Optional[torch.Tensor] = None
        self.attn: List[Optional[torch.Tensor]] = [None] * len(blocks)
        self.ffn: List[Optional[torch.Tensor]] = [None] * len(blocks)
        self.attn_norms, self.ffn_norms = list(attn_norms), list(ffn_norms)
        self.handles = []

    def __enter__(self):
        for i, block in enumerate(self.blocks):
            self.handles.append(block.register_forward_pre_hook(self._pre(i), with_kwargs=True))
            self.handles.append(block.register_forward_hook(self._post(i), with_kwargs=True))
        for taps, into in ((self.attn_norms, self.attn), (self.ffn_norms, self.ffn)):
            for i, tap in enumerate(taps):
                if tap is None:
                    continue
                if tap.reads == "input":
                    self.handles.append(tap.module.register_forward_pre_hook(
                        self._sublayer_input(into, i), with_kwargs=True))
                else:
                    self.handles.append(tap.module.register_forward_hook(self._norm(into, i)))
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()
        self.handles.clear()

    def _pre(self, i):
        def hook(module, args, kwargs):
            self.inputs[i] = _block_input(args, kwargs)
        return hook

    def _post(self, i):
        def hook(module, args, kwargs, output):
            if i == self.skip and self.inputs[i] is not None:
                output = _replace_first(output, self.inputs[i])
            if i == len(self.blocks) - 1:
                self.last_output = first_tensor(output)
            return output
        return hook

    @staticmethod
    def _sublayer_input(into, i):
        def hook(module, args, kwargs):
            x = _block_input(args, kwargs)
            if into[i] is None and x is not None:  # a sublayer called twice: its first call
                into[i] = x
        return hook

    @staticmethod
    def _norm(into, i):
        def hook(module, args, output):
            out = first_tensor(output)
            if into[i] is None and out is not None:  # a norm called twice: its first call
                into[i] = out
        return hook


def traced_pass(model, batch: ProbeBatch, layout, logits_of: Callable):
    """(streams L+1 x (B, T, C), attn norm outs, ffn norm outs, logits (B, T, V))."""
    with _Taps(layout.blocks, layout.attn_norms, layout.ffn_norms) as taps:
        out = batch.call(model)
    missing = [i for i, x in enumerate(taps.inputs) if x is None]
    if missing or taps.last_output is None:
        raise ValueError(f"the probe pass did not reach block(s) {missing or [len(taps.inputs) - 1]} "
                         "with a (B, T, C) hidden state: are layers= the model's blocks, each "
                         "called with the hidden state as its first argument?")
    streams = list(taps.inputs) + [taps.last_output]
    for s in streams:
        if s.dim() != 3 or s.shape[:2] != batch.ids.shape:
            raise ValueError(f"a block's hidden state is {tuple(s.shape)}; the probes need "
                             f"(B, T, C) with (B, T) = {tuple(batch.ids.shape)}")
    return streams, taps.attn, taps.ffn, logits_of(out)


def sequence_losses(logits, batch: ProbeBatch):
    """(B) the mean next-token cross-entropy of each probe sequence (the core's)."""
    if logits is None or logits.dim() != 3 or logits.shape[:2] != batch.ids.shape:
        shape = None if logits is None else tuple(logits.shape)
        raise ValueError(f"the model's output gave logits {shape}; the probes need (B, T, V) "
                         "for the probe batch (pass logits_fn= to pick them out of the output)")
    return _core.sequence_losses(logits.float(), batch.targets)


def pruning_sweep(model, batch: ProbeBatch, layout, logits_of: Callable,
                  full_losses: torch.Tensor) -> Dict[str, List[float]]:
    """prune_delta and prune_delta_se (L each): the mean over the probe sequences of the loss
    with block l's output replaced by its input minus the full model's, and its standard error."""
    full = full_losses.double().cpu().tolist()
    delta, error = [], []
    for l in range(len(layout.blocks)):
        with _Taps(layout.blocks, skip=l):
            out = batch.call(model)
        pruned = sequence_losses(logits_of(out), batch).double().cpu().tolist()
        mean, se = _core.paired_difference(pruned, full)
        delta.append(mean)
        error.append(se)
    return {"prune_delta": delta, "prune_delta_se": error}


def layer_grad_norms(blocks) -> Optional[List[float]]:
    """(L) the L2 norm of each block's parameter gradients; None when no block has one."""
    norms, seen = [], False
    for block in blocks:
        grads = [p.grad.detach() for p in block.parameters() if p.grad is not None]
        seen = seen or bool(grads)
        norms.append(torch.linalg.vector_norm(
            torch.stack([torch.linalg.vector_norm(g.float()) for g in grads])) if grads else None)
    if not seen:
        return None
    values = torch.stack([n if n is not None else torch.zeros((), device=_device_of(blocks))
                          for n in norms]).cpu()  # one host read
    return values.tolist()


def _device_of(blocks):
    for b in blocks:
        for p in b.parameters():
            return p.device
    return torch.device("cpu")
