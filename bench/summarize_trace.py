# Summarises a Chrome trace from `depthlab-cli bench train --device cuda --profile FILE` or from
# hf_llama_bench.py --profile: GPU kernel time by kernel and by kind (GEMM, attention, DepthLab's
# own kernels, elementwise, reductions, optimizer, copies), how busy the GPU was over the
# profiled window, and the CPU ops that launched the most. Reads the trace only; standard
# library only. Usage: python3 summarize_trace.py TRACE.json [--top 25]
import argparse
import collections
import json
import re
import sys

KINDS = [  # first match wins
    ("gemm", r"gemm|cutlass|xmma|nvjet|cublas|sm90_|sm80_|ampere_|hopper"),
    ("attention", r"flash|fmha|attention|sdpa|efficient"),
    ("depthlab", r"depthlab|rmsNorm|swiglu|rope|crossEntropy"),
    ("optimizer", r"adam|multi_tensor|foreach|fused_adam"),
    ("triton", r"^triton"),
    ("reduce", r"reduce|norm|softmax|sum|mean"),
    ("copy/cast", r"copy|cast|convert|memcpy|memset|fill"),
    ("elementwise", r"elementwise|vectorized|unrolled|pointwise"),
]


def kind(name):
    for k, pattern in KINDS:
        if re.search(pattern, name, re.IGNORECASE):
            return k
    return "other"


def busy_time(intervals):
    total, end = 0.0, -1.0
    for s, e in sorted(intervals):
        if s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    with open(a.trace) as f:
        events = json.load(f)
    events = events.get("traceEvents", events) if isinstance(events, dict) else events
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    if not kernels:
        print("no GPU kernels in", a.trace)
        return 1
    by_name, by_kind = collections.Counter(), collections.Counter()
    counts = collections.Counter()
    for e in kernels:
        by_name[e["name"]] += e["dur"]
        by_kind[kind(e["name"])] += e["dur"]
        counts[e["name"]] += 1
    total = sum(by_name.values())
    start = min(e["ts"] for e in kernels)
    stop = max(e["ts"] + e["dur"] for e in kernels)
    busy = busy_time([(e["ts"], e["ts"] + e["dur"]) for e in kernels])
    print(f"== {a.label or a.trace}: {len(kernels)} kernels, {total / 1e3:.1f} ms of kernel time, "
          f"GPU busy {busy / 1e3:.1f} of {(stop - start) / 1e3:.1f} ms ({100 * busy / (stop - start):.1f}%)")
    print("  by kind: " + ", ".join(f"{k} {v / 1e3:.1f} ms ({100 * v / total:.0f}%)"
                                    for k, v in by_kind.most_common()))
    for name, dur in by_name.most_common(a.top):
        print(f"  {dur / 1e3:8.2f} ms {100 * dur / total:5.1f}% x{counts[name]:<5d} {kind(name):10s} {name[:110]}")
    cpu = collections.Counter()
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "cpu_op":
            cpu[e["name"]] += 1
    print("  cpu ops launched most: " + ", ".join(f"{n} x{c}" for n, c in cpu.most_common(12)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
