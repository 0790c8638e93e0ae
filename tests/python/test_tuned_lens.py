"""The tuned lens against the `tuned-lens` package (EleutherAI, arXiv 2303.08112): on a small
random Llama imported into the lab, `depthlab-cli analyze --probes tuned_lens --lens-steps N`
trains its translators as the package's training loop does (SGD with Nesterov momentum 0.9,
lr 0.1, weight decay 1e-3, gradient norm clipped to 1, linear decay, KL to the model's own output
summed over translators; here in float32 on the same rows every step, where the package's script
streams a dataset under bf16 autocast) and stores each block's KL through its translator. The
package's TunedLens, trained by that loop here, gives the same KL per block within 1e-3 relative
after the same steps; with no step the tuned lens is the logit lens; the lens file is kept with
its hash and reused by a second analysis."""
import subprocess

import pytest
import torch

from test_probe_parity import LENGTH, ROWS, VOCAB, build, imported_and_analyzed

STEPS = 40


def package_lens_kl(tuned_lens, model, ids, steps):
    """The package's TunedLens trained by its loop's rules on ids[:, :-1]; KL per block 1..L."""
    from transformers import get_linear_schedule_with_warmup

    lens = tuned_lens.nn.TunedLens.from_model(model)
    params = [p for p in lens.parameters() if p.requires_grad]
    opt = torch.optim.SGD(params, lr=1.0 * (1 - 0.9), momentum=0.9, nesterov=True,
                          weight_decay=1e-3)
    schedule = get_linear_schedule_with_warmup(opt, 0, steps)
    x = ids[:, :-1]
    for _ in range(steps):
        with torch.no_grad():
            out = model(x, output_hidden_states=True)
        labels = out.logits.float().log_softmax(-1)
        for i, h in enumerate(out.hidden_states[:-1]):
            logits = lens(h, idx=i)
            loss = torch.sum(labels.exp() * (labels - logits.log_softmax(-1)), dim=-1).mean()
            loss.backward()
        torch.nn.utils.clip_grad_norm_(lens.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=False)
        schedule.step()
    with torch.no_grad():
        out = model(x, output_hidden_states=True)
        p = out.logits.double().log_softmax(-1)
        kl = []
        layers = len(out.hidden_states) - 1
        for l in range(1, layers):
            q = lens(out.hidden_states[l], idx=l).double().log_softmax(-1)
            kl.append(float((p.exp() * (p - q)).sum(-1).mean()))
        kl.append(0.0)
    return kl


def analyze(cli, db, run_id, tokens, *extra):
    done = subprocess.run([cli, "analyze", "--run", str(run_id), "--tokens", str(tokens),
                           "--sequences", str(ROWS), "--seq-len", str(LENGTH), "--db", db,
                           *extra], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


def test_the_tuned_lens_trains_as_the_package_does(cli, db, store, tmp_path):
    tuned_lens = pytest.importorskip("tuned_lens")
    transformers = pytest.importorskip("transformers")
    model = build(transformers, "llama", tmp_path / "llama").float().eval()
    run_id, ids = imported_and_analyzed(cli, db, tmp_path / "llama", tmp_path, 12)
    tokens = tmp_path / "probe.txt"
    # No step: the logit lens (stored by imported_and_analyzed's --probes lens).
    analyze(cli, db, run_id, tokens, "--probes", "tuned_lens", "--lens-steps", "0")
    (logit,) = store.layers(run_id, "lens_kl").values()
    (at_start,) = store.layers(run_id, "tuned_kl").values()
    assert at_start == pytest.approx(logit, rel=1e-6, abs=1e-7)

    analyze(cli, db, run_id, tokens, "--probes", "tuned_lens", "--lens-steps", str(STEPS))
    (lab,) = store.layers(run_id, "tuned_kl").values()
    want = package_lens_kl(tuned_lens, model, ids, STEPS)
    assert lab == pytest.approx(want, rel=1e-3, abs=1e-6)
    assert all(t < 0.9 * k for t, k in zip(lab[:-1], logit[:-1])), "training lowered every KL"
    events = [m for _, m in store.events(run_id) if m.startswith("tuned lens")]
    assert "trained 40 steps" in events[-1] and "FNV-1a" in events[-1], events
    path = events[-1].split(": ", 1)[1].split(" (")[0]
    assert open(path + ".fnv1a").read().strip() in events[-1]

    # A second analysis reuses the kept lens: the same numbers, no training.
    analyze(cli, db, run_id, tokens, "--probes", "tuned_lens", "--lens-steps", str(STEPS))
    (again,) = store.layers(run_id, "tuned_kl").values()
    assert again == lab
    assert [m for _, m in store.events(run_id) if m.startswith("tuned lens")][-1].startswith(
        "tuned lens reused: " + path)
