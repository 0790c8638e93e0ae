"""What depthlab.watch costs a training loop: the example GPT (watch_gpt.py) trained for --steps
updates with and without the watch at its default cadence (probes every 100 steps, the angular
matrix every 400, the pruning sweep every 1000), alternated --repeats times; prints the median
seconds of each and the overhead in percent. The default target: at most 2 %.
    python examples/watch_overhead.py --text README.md [--steps 1000] [--device cuda]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import depthlab  # noqa: E402
from watch_gpt import GPT  # noqa: E402


def train(data, steps, device, db, watched, layers):
    torch.manual_seed(0)
    model = GPT(layers=layers).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    g = torch.Generator().manual_seed(1)
    batch = lambda n: torch.stack([data[i:i + 65] for i in torch.randint(
        len(data) - 65, (n,), generator=g)]).to(device)
    probe = depthlab.watch(model, probe_batch=batch(8)[:, :64], db=db, steps=steps,
                           optimizer=opt, name="overhead") if watched else None
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(steps):
        xy = batch(16)
        loss = nn.functional.cross_entropy(model(xy[:, :-1]).flatten(0, 1), xy[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if probe:
            probe.log(loss=loss.detach())
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    seconds = time.perf_counter() - t0
    if probe:
        probe.finish()
    return seconds


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--text", required=True)
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--device", default="cpu")
    a = p.parse_args()
    data = torch.frombuffer(bytearray(open(a.text, "rb").read()), dtype=torch.uint8).long()
    db = os.path.join(tempfile.mkdtemp(prefix="watch-overhead-"), "lab.db")
    plain, watched = [], []
    train(data, 20, a.device, db, True, a.layers)  # warm-up (allocator, kernels)
    for _ in range(a.repeats):
        plain.append(train(data, a.steps, a.device, db, False, a.layers))
        watched.append(train(data, a.steps, a.device, db, True, a.layers))
    base, with_watch = statistics.median(plain), statistics.median(watched)
    print(f"{a.steps} steps on {a.device}, {torch.get_num_threads()} threads: without "
          f"{base:.2f} s, with depthlab.watch {with_watch:.2f} s (median of {a.repeats}): "
          f"overhead {100 * (with_watch - base) / base:+.2f} %")


if __name__ == "__main__":
    main()
