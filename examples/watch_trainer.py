"""A Hugging Face Trainer on a tiny random Llama, watched by DepthLab through its callback: the
run appears in the lab's window while the Trainer trains (blocks and norms found by family).
Usage:
    python examples/watch_trainer.py --text README.md --steps 60 [--db lab.db] [--out DIR]
"""
import argparse
import tempfile

import torch
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

import depthlab


class ByteWindows(torch.utils.data.Dataset):
    """Windows of `length` bytes of a text file as token ids (the labels are the ids: the model
    shifts them)."""

    def __init__(self, path, length=64):
        data = torch.tensor(list(open(path, "rb").read()), dtype=torch.long)
        self.windows = data[: len(data) // length * length].view(-1, length)

    def __len__(self):
        return len(self.windows)

    def __getitem__(self, i):
        ids = self.windows[i]
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--text", required=True)
    p.add_argument("--db", default=None)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--every", type=int, default=20)
    p.add_argument("--name", default="trainer-llama")
    p.add_argument("--out", default=None)
    a = p.parse_args()
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=172,
                         num_hidden_layers=4, num_attention_heads=4, max_position_embeddings=64)
    model = LlamaForCausalLM(config)
    data = ByteWindows(a.text)
    out = a.out or tempfile.mkdtemp(prefix="watch-trainer-")
    args = TrainingArguments(output_dir=out, max_steps=a.steps, per_device_train_batch_size=8,
                             learning_rate=1e-3, logging_steps=5, save_strategy="no",
                             report_to=[], use_cpu=not torch.cuda.is_available(),
                             run_name=a.name, disable_tqdm=True, seed=0)
    callback = depthlab.TrainerCallback(every=a.every, db=a.db, name=a.name)
    Trainer(model=model, args=args, train_dataset=data, callbacks=[callback]).train()
    print(f"run {callback.watch.run_id} in {callback.watch.store_path}")


if __name__ == "__main__":
    main()
