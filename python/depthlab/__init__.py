"""DepthLab for your own training loop: the lab's depth probes (per-layer variance, angular
distance, Block Influence, E_l, single-layer pruning, gradient norms) on any PyTorch model,
recorded as a run of the lab's SQLite store, which the lab's window follows live.

    import depthlab
    probe = depthlab.watch(model, probe_batch=x, name="my-run", every=100)
    ...; probe.step(step, loss=loss.item(), lr=lr)

Hugging Face Trainer: `trainer.add_callback(depthlab.TrainerCallback(every=100))`.
Guide: docs/watch.md. The statistics are computed by the lab's C++ core (depthlab._core).
"""
import torch  # noqa: F401  (loads LibTorch before the core's binding needs it)

from . import _core
from .watch import Watch, watch

__version__ = _core.version
__all__ = ["watch", "Watch", "TrainerCallback", "default_store_path"]


def default_store_path() -> str:
    """The lab's default database: where `make run` opens and depthlab-cli reads without --db."""
    return _core.default_store_path()


def __getattr__(name):
    if name == "TrainerCallback":  # transformers is imported only when asked for
        from .hf_callback import DepthLabCallback
        return DepthLabCallback
    raise AttributeError(f"module 'depthlab' has no attribute {name!r}")
