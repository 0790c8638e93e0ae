"""What depthlab.watch costs a training loop: the example GPT (watch_gpt.py) trained for --steps
updates at the watch's default cadence (probes every 100 steps, the angular matrix every 400,
the pruning sweep every 1000). Two measures: the seconds spent inside the watch's calls (its
optimizer hooks, which run the probes, and log()) as a share of the watched loop's time, exact
on a busy machine; and the whole loop with and without the watch, alternated --repeats times
(medians), which a shared machine's noise can swamp. The target: at most 2 %.
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


SPENT = [0.0]  # seconds inside the watch's calls


def timed(method):
    def call(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            SPENT[0] += time.perf_counter() - t0
    return call


for _name in ("_before_update", "_after_update", "log"):  # the calls a loop makes into the watch
    setattr(depthlab.Watch, _name, timed(getattr(depthlab.Watch, _name)))


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
    plain, watched, inside = [], [], []
    train(data, 20, a.device, db, True, a.layers)  # warm-up (allocator, kernels)
    for _ in range(a.repeats):
        plain.append(train(data, a.steps, a.device, db, False, a.layers))
        SPENT[0] = 0.0
        watched.append(train(data, a.steps, a.device, db, True, a.layers))
        inside.append(SPENT[0] / watched[-1])
    base, with_watch = statistics.median(plain), statistics.median(watched)
    print(f"{a.steps} steps on {a.device}, {torch.get_num_threads()} threads: inside "
          f"depthlab.watch {100 * statistics.median(inside):.2f} % of the watched loop's time "
          f"(median of {a.repeats}); whole loop without {base:.2f} s, with {with_watch:.2f} s: "
          f"{100 * (with_watch - base) / base:+.2f} %")


if __name__ == "__main__":
    main()
