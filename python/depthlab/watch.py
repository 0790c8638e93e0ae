"""depthlab.watch(model): the lab's depth probes on any PyTorch training loop, recorded as an
ordinary run of the lab's SQLite store (the window follows it live; Compare, report and export
read it). The face follows wandb.watch:

    probe = depthlab.watch(model, name="my-run", probe_batch=x, every=100)
    for step in range(steps):
        ...; loss.backward(); optimizer.step(); optimizer.zero_grad()
        probe.step(step + 1, loss=loss.item(), lr=lr)
    probe.finish()

or `optimizer=opt` to be stepped by the optimizer itself (gradient norms per block are read
before each probed update). What is stored at step s (s % every == 0): the probe batch's loss,
per-layer variance, norm-output variance, adjacent angular distance, Block Influence, E_l and the
lazy-layer counts; the L x L angular matrix every `angular_every`; the single-layer pruning sweep
every `prune_every`; gradient norms per block where gradients are present.
A store that refuses a write (locked, full disk) never stops training: the rows are kept for the
next write and a warning says the probe skipped. Does not: change the model, its gradients or
the training RNG (probe_pass.py).
"""
from __future__ import annotations

import atexit
import math
import sys
import warnings
import weakref
from typing import Callable, Optional

import torch
from torch import nn

from . import _core
from .layers import layout_of
from .probe_pass import (ProbeBatch, first_tensor, layer_grad_norms, pruning_sweep, quiet_model,
                         sequence_losses, traced_pass)

_open_watches = weakref.WeakSet()
# What a training step measures before its update: stored at the update's 0-based index (step
# s - 1 for the update that makes s updates done), as the lab stores its own runs' training rows;
# the probes and anything else given at step s are stored at s (after s updates).
TRAINING_KEYS = frozenset({"loss_train", "lr", "grad_norm", "tokens_per_s", "tokens_seen"})


class Watch:
    """A watched training loop; made by depthlab.watch().

    probe_batch: token ids (B, T) or {input_ids, attention_mask}, fixed for the run.
    name: the run's name ("" : the model's class). every: steps between probe passes.
    angular_every / prune_every: the L x L angular matrix and the single-layer pruning sweep
    (default 4 x and 10 x every; 0 = never). layers: the blocks, where they are not found.
    db: the lab's database (default: depthlab.default_store_path()). scheme: what the model is
    (a scheme id of the lab, pre_ln by default). steps: the planned length. optimizer: step the
    watch from optimizer.step() (and read per-block gradient norms before it). logits_fn: the
    logits (B, T, V) out of the model's output. width: the residual width, where not found.
    """

    def __init__(self, model: nn.Module, *, probe_batch, name: str = "", every: int = 100,
                 layers=None, db: Optional[str] = None, scheme: str = "pre_ln",
                 angular_every: Optional[int] = None, prune_every: Optional[int] = None,
                 steps: int = 0, optimizer=None, logits_fn: Optional[Callable] = None,
                 width: int = 0, seed: int = 0):
        if every < 1:
            raise ValueError("every= must be at least 1 (steps between probe passes)")
        self.model = model
        self.layout = layout_of(model, layers, width)
        self.device = _model_device(model)
        self.batch = ProbeBatch(probe_batch, self.device)
        self.every = every
        self.angular_every = angular_every if angular_every is not None else every * 4
        self.prune_every = prune_every if prune_every is not None else every * 10
        self.logits_of = logits_fn or first_tensor
        self.store_path = db or _core.default_store_path()
        self.last_step = 0
        self._warned = set()
        self._finished = False
        self._hooks = []
        try:
            self._run = _core.WatchedRun(self.store_path, self._spec(name, scheme, steps, seed))
        except _core.StoreError as e:
            warnings.warn(f"depthlab: the lab's store {self.store_path} cannot take this run "
                          f"({e}); training goes on unrecorded", RuntimeWarning, stacklevel=3)
            self._run = _Unrecorded(str(e))
        _open_watches.add(self)
        if optimizer is not None:
            self._hooks.append(optimizer.register_step_pre_hook(self._before_update))
            self._hooks.append(optimizer.register_step_post_hook(self._after_update))

    def _spec(self, name, scheme, steps, seed):
        spec = _core.WatchSpec()
        spec.name = name or type(self.model).__name__
        spec.scheme = scheme
        spec.n_layers = len(self.layout.blocks)
        spec.d_model = self.layout.width
        spec.n_heads = self.layout.heads
        spec.vocab_size = self.layout.vocab
        spec.planned_steps = steps
        spec.seed = seed
        p = spec.probes
        p.forward_every, p.angular_matrix_every, p.pruning_every = (
            self.every, self.angular_every, self.prune_every)
        spec.probes = p
        r = spec.record
        r.framework = "torch " + torch.__version__
        r.model_class = type(self.model).__name__
        r.layers_path = self.layout.path
        r.device = str(self.device)
        r.probe_rows, r.probe_length = self.batch.rows, self.batch.length
        spec.record = r
        return spec

    # --- what the loop calls ------------------------------------------------------------------
    @property
    def run_id(self) -> int:
        return self._run.run_id

    @property
    def should_stop(self) -> bool:
        """True once someone pressed Stop on this run in the lab's window."""
        return self._run.stop_requested()

    def log(self, step: Optional[int] = None, **scalars) -> None:
        """Scalars of update `step` (updates done, default: the last); loss= is loss_train,
        val_loss= loss_val. The training keys (loss, lr, grad_norm) are stored at step - 1, the
        update's index, as the lab's own runs store them; the others at step."""
        step = self.last_step if step is None else int(step)
        for key, value in scalars.items():
            if value is None:
                continue
            value = float(value.item() if isinstance(value, torch.Tensor) else value)
            key = {"loss": "loss_train", "val_loss": "loss_val"}.get(key, key)
            if key == "loss_train" and not math.isfinite(value):
                self._warn_once("diverged", f"the training loss is {value} at step {step}", step)
            self._run.scalar(max(step - 1, 0) if key in TRAINING_KEYS else step, key, value)
        self._write()

    def step(self, step: Optional[int] = None, **scalars) -> None:
        """After an optimizer update: its scalars (loss=, lr=, any other) and the probes due at
        `step` (default: one more than the last). With optimizer= the probes run by themselves."""
        self.last_step = self.last_step + 1 if step is None else int(step)
        self.log(self.last_step, **scalars)
        if not self._hooks:
            grads = layer_grad_norms(self.layout.blocks) if self._due(self.last_step) else None
            if grads is not None:
                self._run.layer(max(self.last_step - 1, 0), "grad_norm", grads)
            self.probe_due(self.last_step)

    def probe_due(self, step: int) -> None:
        if self._due(step):
            self.probe(step, matrix=step % self.angular_every == 0,
                       pruning=self.prune_every > 0 and step % self.prune_every == 0)

    def probe(self, step: int, matrix: bool = False, pruning: bool = False) -> dict:
        """Runs the probe passes now and stores them at `step`; returns the pruning sweep (if
        run) and the probe loss. Raises on a model the probes cannot trace."""
        if isinstance(self._run, _Unrecorded):
            return {}
        with quiet_model(self.model, _cuda_devices(self.model)):
            streams, attn, ffn, logits = traced_pass(self.model, self.batch, self.layout,
                                                     self.logits_of)
            losses = sequence_losses(logits, self.batch)
            loss = float((losses * self._counted()).sum() / self._counted().sum())
            self._run.forward(step, streams, attn, ffn, self.batch.targets, loss, matrix)
            del streams, attn, ffn, logits
            result = {"loss_probe": loss}
            if pruning:
                sweep = pruning_sweep(self.model, self.batch, self.layout, self.logits_of, losses)
                for key, values in sweep.items():
                    self._run.layer(step, key, values)
                result.update(sweep)
        self._write(force=True)
        return result

    def finish(self, status: str = "finished") -> None:
        """Ends the run (finished, stopped, diverged or crashed); later calls do nothing."""
        if self._finished:
            return
        self._finished = True
        for h in self._hooks:
            h.remove()
        self._hooks.clear()
        try:
            self._run.finish(status, self.last_step)
        except _core.StoreError as e:
            warnings.warn(f"depthlab: could not end run {self.run_id} ({e}); it reads crashed "
                          "once this process ends", RuntimeWarning, stacklevel=2)
        _open_watches.discard(self)

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        self.finish("finished" if kind is None else
                    "stopped" if issubclass(kind, KeyboardInterrupt) else "crashed")
        return False

    # --- inside -------------------------------------------------------------------------------
    def _due(self, step: int) -> bool:
        return step % self.every == 0

    def _counted(self):
        return (self.batch.targets != -100).sum(1).float()

    def _before_update(self, optimizer, args, kwargs):
        if self._due(self.last_step + 1):  # stored at the update's index, as the lab does
            grads = layer_grad_norms(self.layout.blocks)
            if grads is not None:
                self._run.layer(self.last_step, "grad_norm", grads)

    def _after_update(self, optimizer, args, kwargs):
        self.last_step += 1
        lr = optimizer.param_groups[0].get("lr") if optimizer.param_groups else None
        if lr is not None and self._due(self.last_step):
            self._run.scalar(self.last_step - 1, "lr", float(lr))
        self.probe_due(self.last_step)
        self._write()

    def _write(self, force: bool = False):
        if not self._run.flush(force):
            self._warn_once("write", f"depthlab: the probe skipped writing run {self.run_id} "
                            f"({self._run.last_error}); training goes on, the rows are kept for "
                            "the next write", None)

    def _warn_once(self, kind, message, step):
        if kind in self._warned:
            return
        self._warned.add(kind)
        warnings.warn(message, RuntimeWarning, stacklevel=3)
        if kind != "write":
            self._run.event(step, "warning", message)


class _Unrecorded:
    """Stands in for the run when the store could not create it: every write is dropped."""

    run_id = None
    failed_writes = 0

    def __init__(self, why):
        self.last_error = why

    def flush(self, force=False):
        return True

    def stop_requested(self):
        return False

    def __getattr__(self, name):  # scalar, layer, event, forward, finish, set_flush_seconds
        return lambda *args, **kwargs: None


def _model_device(model):
    for p in model.parameters():
        return p.device
    return torch.device("cpu")


def _cuda_devices(model):
    return sorted({p.device.index or 0 for p in model.parameters() if p.device.type == "cuda"})


def _finish_open_watches():
    crashed = getattr(sys, "last_value", None) is not None or _uncaught["seen"]
    for w in list(_open_watches):
        w.finish("crashed" if crashed else "finished")


_uncaught = {"seen": False}
_previous_hook = sys.excepthook


def _note_uncaught(kind, value, tb):
    _uncaught["seen"] = True
    _previous_hook(kind, value, tb)


sys.excepthook = _note_uncaught
atexit.register(_finish_open_watches)


def watch(model: nn.Module, probe_batch=None, **options) -> Watch:
    """Starts watching `model`: a new run in the lab's store (options: see Watch)."""
    if probe_batch is None:
        raise ValueError("depthlab.watch needs probe_batch=: a fixed batch of token ids (B, T) "
                         "(or a dict with input_ids and attention_mask) the probes run on, e.g. "
                         "the first batch of your validation data")
    return Watch(model, probe_batch=probe_batch, **options)
