"""A Hugging Face Trainer callback that watches the model being trained (depthlab.watch): the
probes run every `every` optimizer steps on a fixed probe batch (given, or the first `rows`
sequences of the evaluation data, else of the training data), the Trainer's logged loss and
learning rate and gradient norm are stored, per-block gradient norms are read before the
optimizer step, and the window's Stop button stops the Trainer. Under several processes only the
main one watches. Does not: change the Trainer's arguments or its data.
"""
from __future__ import annotations

from transformers import TrainerCallback

from .watch import Watch


class DepthLabCallback(TrainerCallback):
    def __init__(self, probe_batch=None, rows: int = 8, **watch_options):
        self.probe_batch, self.rows, self.options = probe_batch, rows, watch_options
        self.watch = None

    def _first_batch(self, *loaders):
        for loader in loaders:
            if loader is None:
                continue
            batch = next(iter(loader))
            out = {"input_ids": batch["input_ids"][: self.rows]}
            if "attention_mask" in batch:
                out["attention_mask"] = batch["attention_mask"][: self.rows]
            return out
        raise ValueError("depthlab.TrainerCallback found no data for its probe batch: pass "
                         "probe_batch= (token ids (B, T))")

    def on_train_begin(self, args, state, control, model=None, train_dataloader=None,
                       eval_dataloader=None, **kwargs):
        if not state.is_world_process_zero:  # one run per training, not one per rank
            return
        batch = self.probe_batch if self.probe_batch is not None else self._first_batch(
            eval_dataloader, train_dataloader)
        options = dict(self.options)
        options.setdefault("name", args.run_name if args.run_name != args.output_dir else "")
        options.setdefault("steps", state.max_steps)
        options.setdefault("seed", args.seed)
        self.watch = Watch(model, probe_batch=batch, **options)

    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        if self.watch is not None:
            self.watch._before_update(None, (), {})

    def on_step_end(self, args, state, control, **kwargs):
        if self.watch is None:
            return
        self.watch.last_step = state.global_step
        self.watch.probe_due(state.global_step)
        if self.watch.should_stop:
            control.should_training_stop = True

    def on_log(self, args, state, control, logs=None, **kwargs):
        if self.watch is None or not logs:
            return
        self.watch.log(state.global_step, loss=logs.get("loss"), lr=logs.get("learning_rate"),
                       grad_norm=logs.get("grad_norm"), val_loss=logs.get("eval_loss"))

    def on_train_end(self, args, state, control, **kwargs):
        if self.watch is not None:
            self.watch.last_step = state.global_step
            self.watch.finish("stopped" if state.global_step < state.max_steps else "finished")
