"""depthlab.watch's probes on a user's own model equal an independent computation in torch, and
leave the training loop as it was (RNG, gradients, train mode)."""
import math
import os
import sys

import pytest
import torch
from torch import nn

import depthlab

sys.path.insert(0, os.path.join(os.environ.get("DEPTHLAB_SOURCE", "."), "examples"))
from watch_gpt import GPT  # noqa: E402  (the example's model: a plain PyTorch GPT)


def batch_of(seed, rows=4, length=16, vocab=256):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(vocab, (rows, length), generator=g)


def streams_of(model, ids):
    """x_0..x_L by running the blocks by hand (no hooks), and the logits."""
    with torch.no_grad():
        x = model.tok(ids) + model.pos(torch.arange(ids.shape[1]))
        xs = [x]
        for block in model.blocks:
            x = block(x)
            xs.append(x)
        return xs, model.head(model.ln_f(x))


def reference_stats(xs):
    """The lab's definitions (docs/probes.md), written out in float64."""
    out = {"variance": [], "angular_adjacent": [], "block_influence": [], "effectiveness": []}
    for a, b in zip(xs[:-1], xs[1:]):
        a, b = a.double().flatten(0, 1), b.double().flatten(0, 1)
        out["variance"].append(b.var(unbiased=False).item())
        cos = (nn.functional.cosine_similarity(a, b, dim=-1)).clamp(-1, 1)
        out["angular_adjacent"].append((torch.acos(cos) / math.pi).mean().item())
        out["block_influence"].append((1 - cos).mean().item())
        out["effectiveness"].append(((b - a).pow(2).sum() / b.pow(2).sum()).item())
    return out


def test_stored_probes_equal_an_independent_computation(db, store):
    torch.manual_seed(0)
    model = GPT(layers=5, context=16)
    ids = batch_of(1)
    probe = depthlab.watch(model, probe_batch=ids, db=db, every=1, prune_every=1, name="parity")
    probe.step(1)
    probe.finish()
    xs, logits = streams_of(model.eval(), ids)
    ref = reference_stats(xs)
    for metric, values in ref.items():
        stored = store.layers(probe.run_id, metric)[1]
        assert stored == pytest.approx(values, rel=1e-5, abs=1e-6), metric
    # the norm outputs: what enters each block's attention (ln_1's output times the scale, 1)
    attn = store.layers(probe.run_id, "norm_var_attn")[1]
    with torch.no_grad():
        want = [b.ln_1(x).double().var(unbiased=False).item() for b, x in zip(model.blocks, xs)]
    assert attn == pytest.approx(want, rel=1e-5)
    # the probe loss: next-token cross-entropy over the T-1 targets of each row
    loss = nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten())
    assert store.scalars(probe.run_id, "loss_probe")[1] == pytest.approx(loss.item(), rel=1e-5)


def test_pruning_sweep_equals_removing_each_block_by_hand(db, store):
    torch.manual_seed(1)
    model = GPT(layers=4, context=16).eval()
    ids = batch_of(2)
    probe = depthlab.watch(model, probe_batch=ids, db=db, every=1, prune_every=1)
    probe.step(1)
    probe.finish()

    def row_losses(blocks):
        with torch.no_grad():
            x = model.tok(ids) + model.pos(torch.arange(ids.shape[1]))
            for b in blocks:
                x = b(x)
            logits = model.head(model.ln_f(x))
            ce = nn.functional.cross_entropy(logits[:, :-1].transpose(1, 2), ids[:, 1:],
                                             reduction="none")
            return ce.mean(1).double()

    full = row_losses(model.blocks)
    stored = store.layers(probe.run_id, "prune_delta")[1]
    errors = store.layers(probe.run_id, "prune_delta_se")[1]
    for l in range(4):
        d = row_losses([b for i, b in enumerate(model.blocks) if i != l]) - full
        assert stored[l] == pytest.approx(d.mean().item(), rel=1e-4, abs=1e-6)
        assert errors[l] == pytest.approx((d.std() / math.sqrt(len(d))).item(), rel=1e-3)


def test_the_probes_leave_rng_gradients_and_mode_as_they_were(db):
    def train(watched):
        torch.manual_seed(3)
        model = GPT(layers=3, context=16)
        for m in model.modules():  # dropout draws from the RNG in train mode
            if isinstance(m, nn.MultiheadAttention):
                m.dropout = 0.1
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        probe = depthlab.watch(model, probe_batch=batch_of(4), db=db, every=1,
                               prune_every=2) if watched else None
        losses, grads = [], []
        for step in range(4):
            ids = batch_of(10 + step, rows=8)
            logits = model(ids[:, :-1])
            loss = nn.functional.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())
            opt.zero_grad()
            loss.backward()
            if probe:
                probe.step(step + 1, loss=loss.item())  # probes between backward and update
            grads.append(model.blocks[0].mlp[0].weight.grad.clone())
            assert model.training
            opt.step()
            losses.append(loss.item())
        if probe:
            probe.finish()
        return losses, grads, torch.rand(3)

    plain, watched = train(False), train(True)
    assert plain[0] == watched[0]
    assert all(torch.equal(a, b) for a, b in zip(plain[1], watched[1]))
    assert torch.equal(plain[2], watched[2])


def test_per_block_gradient_norms_are_read_before_the_update(db, store):
    torch.manual_seed(4)
    model = GPT(layers=3, context=16)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    probe = depthlab.watch(model, probe_batch=batch_of(5), db=db, every=2, optimizer=opt)
    want = {}
    for step in range(1, 5):
        ids = batch_of(20 + step, rows=4)
        loss = nn.functional.cross_entropy(model(ids[:, :-1]).flatten(0, 1), ids[:, 1:].flatten())
        opt.zero_grad()
        loss.backward()
        want[step] = [torch.sqrt(sum(p.grad.double().pow(2).sum() for p in b.parameters())).item()
                      for b in model.blocks]
        opt.step()
    probe.finish()
    stored = store.layers(probe.run_id, "grad_norm")  # at the update's index, as the lab's
    assert sorted(stored) == [1, 3]
    for step in (2, 4):
        assert stored[step - 1] == pytest.approx(want[step], rel=1e-5)
    assert sorted(store.layers(probe.run_id, "variance")) == [2, 4]
