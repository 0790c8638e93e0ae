"""Parity of the probes that read a model layer by layer (the logit lens; the stream's outliers and
RankMe; the sublayer contributions; the attention sinks; the skip-effect matrix, by skipping a
layer with forward hooks; the effective-depth ratio from the lens). The logit lens: what `depthlab-cli analyze --probes lens` stores for an imported
Hugging Face model equals the lens computed independently here, with transformers' own modules:
forward hooks on each decoder layer give the stream after block l, the model's own final norm and
head (and Gemma 2's final soft-cap) read it. KL(p || q_l), top-1 agreement, entropy,
cross-entropy and the settle depth, per block, to 1e-4 relative. The last block's lens must be the
model's logits (checks the hooks). Families: Llama (RMSNorm, untied), GPT-2 (LayerNorm with bias,
tied, learned positions), Gemma 2 (1 + w norms, sqrt(C) embeddings, final soft-cap) and GPT-NeoX
(parallel residual, untied embed_out)."""
import json
import subprocess

import pytest
import torch

import hf_models

ROWS, LENGTH, VOCAB = 3, 20, 97


def build(transformers, arch, folder):
    common = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=6, num_attention_heads=4,
                  num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=64,
                  rms_norm_eps=1e-5, tie_word_embeddings=arch == "gpt2", initializer_range=0.2)
    config, cls = hf_models.config_of(arch, common, None)
    torch.manual_seed(11)
    model = cls(config).eval()
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith(".bias"):
                p.uniform_(-0.2, 0.2)
            elif "norm" in name or ".ln_" in name:
                p.uniform_(-0.5, 0.5) if arch.startswith("gemma") else p.uniform_(0.5, 1.5)
    model.save_pretrained(folder, safe_serialization=True)
    return model


def imported_and_analyzed(cli, db, folder, tmp_path, seed, probes="lens"):
    """Random probe ids (ROWS, LENGTH + 1) from `seed`, written as a tokens file; the model in
    `folder` imported and analysed on them with `--probes lens` (the lens and, with it, the
    outliers, contributions and sinks) or the `probes` given. Returns (run id, ids)."""
    ids = torch.randint(VOCAB, (ROWS, LENGTH + 1), generator=torch.Generator().manual_seed(seed))
    tokens = tmp_path / "probe.txt"
    tokens.write_text("\n".join(" ".join(str(int(t)) for t in row) for row in ids) + "\n")
    imported = subprocess.run([cli, "import-hf", str(folder), "--db", db, "--json"],
                              capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    run_id = json.loads(imported.stdout)["run_id"]
    analyzed = subprocess.run([cli, "analyze", "--run", str(run_id), "--tokens", str(tokens),
                               "--sequences", str(ROWS), "--seq-len", str(LENGTH), "--probes",
                               probes, "--db", db], capture_output=True, text=True)
    assert analyzed.returncode == 0, analyzed.stderr
    return run_id, ids


def parts(model):
    """(decoder layers, final norm, head) of a transformers causal LM."""
    base = getattr(model, "model", None) or getattr(model, "transformer", None) or model.gpt_neox
    layers = getattr(base, "layers", None) or base.h
    norm = getattr(base, "norm", None) or getattr(base, "ln_f", None) or base.final_layer_norm
    head = getattr(model, "lm_head", None) or model.embed_out
    return layers, norm, head


def reference_lens(model, ids):
    """The five statistics from transformers' modules, in float64 after the head."""
    layers, norm, head = parts(model)
    streams = []
    hooks = [layer.register_forward_hook(
        lambda _m, _i, out: streams.append(out[0] if isinstance(out, tuple) else out))
        for layer in layers]
    inputs, targets = ids[:, :-1], ids[:, 1:]
    with torch.no_grad():
        logits = model(inputs).logits.double()
        cap = getattr(model.config, "final_logit_softcapping", None)
        lens = []
        for x in streams:
            z = head(norm(x)).double()
            lens.append(torch.tanh(z / cap) * cap if cap else z)
    for h in hooks:
        h.remove()
    assert len(lens) == len(layers)
    assert torch.allclose(lens[-1], logits, rtol=1e-5, atol=1e-5), "the hooks miss the output"
    logp_final = torch.log_softmax(lens[-1], -1).flatten(0, 1)  # (N, V)
    top = logp_final.argmax(-1)
    out = {"lens_kl": [], "lens_top1": [], "lens_entropy": [], "lens_ce": []}
    agree = []
    for z in lens:
        logq = torch.log_softmax(z, -1).flatten(0, 1)
        out["lens_kl"].append(float((logp_final.exp() * (logp_final - logq)).sum(-1).mean()))
        agree.append(logq.argmax(-1) == top)
        out["lens_top1"].append(float(agree[-1].double().mean()))
        out["lens_entropy"].append(float(-(logq.exp() * logq).sum(-1).mean()))
        out["lens_ce"].append(float(-logq.gather(1, targets.reshape(-1, 1)).mean()))
    settle = []
    for n in range(top.numel()):
        s = len(lens)
        while s > 1 and bool(agree[s - 2][n]):
            s -= 1
        settle.append(s)
    return out, sum(settle) / len(settle)


@pytest.mark.parametrize("arch", ["llama", "gpt2", "gemma2", "gpt_neox"])
def test_the_lens_equals_transformers_modules(arch, cli, db, store, tmp_path):
    transformers = pytest.importorskip("transformers")
    folder = tmp_path / arch
    model = build(transformers, arch, folder)
    run_id, ids = imported_and_analyzed(cli, db, folder, tmp_path, 5)
    want, settle = reference_lens(model.float().eval(), ids)
    assert want["lens_kl"][0] > 0.01, "a model whose first blocks already say the output"
    for metric, values in want.items():
        (lab,) = store.layers(run_id, metric).values()
        assert lab == pytest.approx(values, rel=1e-4, abs=1e-5), metric
    assert store.scalars(run_id, "lens_settle")[0] == pytest.approx(settle, rel=1e-6)
    # Hu et al.'s effective depth: the first block whose KL is under a tenth of the largest.
    kl = want["lens_kl"]
    first = next((l for l in range(len(kl) - 1) if kl[l] < 0.1 * max(kl)), len(kl) - 1)
    assert store.scalars(run_id, "effective_depth")[0] == pytest.approx((first + 1) / len(kl))


def reference_outliers(model, ids):
    """Massive activations, the first token's norm ratio and RankMe of each block's output."""
    layers, _, _ = parts(model)
    streams = []
    hooks = [layer.register_forward_hook(
        lambda _m, _i, out: streams.append(out[0] if isinstance(out, tuple) else out))
        for layer in layers]
    with torch.no_grad():
        model(ids[:, :-1])
    for h in hooks:
        h.remove()
    out = {"act_max": [], "act_max_ratio": [], "first_token_ratio": [], "rankme": []}
    for x in streams:
        x = x.double()  # (B, T, C)
        a = x.abs().flatten()
        out["act_max"].append(float(a.max()))
        out["act_max_ratio"].append(float(a.max() / a.median()))
        norms = x.norm(dim=-1)  # (B, T)
        out["first_token_ratio"].append(float((norms[:, 0] / norms[:, 1:].mean(1)).mean()))
        sv = torch.linalg.svdvals(x.flatten(0, 1))
        p = sv / sv.sum() + 1e-7
        out["rankme"].append(float(torch.exp(-(p * p.log()).sum())))
    return out


@pytest.mark.parametrize("arch", ["llama", "gemma2"])
def test_the_stream_outliers_equal_transformers_hidden_states(arch, cli, db, store, tmp_path):
    transformers = pytest.importorskip("transformers")
    folder = tmp_path / arch
    model = build(transformers, arch, folder)
    run_id, ids = imported_and_analyzed(cli, db, folder, tmp_path, 6)
    want = reference_outliers(model.float().eval(), ids)
    for metric, values in want.items():
        (lab,) = store.layers(run_id, metric).values()
        assert lab == pytest.approx(values, rel=1e-4), metric


def test_sublayer_contributions_equal_transformers_hooks(cli, db, store, tmp_path):
    """Llama: x enters the layer, the attention adds a, the MLP adds m to h = x + a."""
    transformers = pytest.importorskip("transformers")
    model = build(transformers, "llama", tmp_path / "llama")
    run_id, ids = imported_and_analyzed(cli, db, tmp_path / "llama", tmp_path, 8)
    seen = {"x": [], "a": [], "m": []}
    hooks = []
    for layer in model.model.layers:
        hooks.append(layer.register_forward_pre_hook(
            lambda _m, args, kwargs: seen["x"].append(
                (args[0] if args else kwargs["hidden_states"]).detach()), with_kwargs=True))
        hooks.append(layer.self_attn.register_forward_hook(
            lambda _m, _i, out: seen["a"].append(out[0] if isinstance(out, tuple) else out)))
        hooks.append(layer.mlp.register_forward_hook(lambda _m, _i, out: seen["m"].append(out)))
    with torch.no_grad():
        model.float().eval()(ids[:, :-1])
    for h in hooks:
        h.remove()

    def rel_cos(delta, stream):
        delta, stream = delta.double().flatten(0, 1), stream.double().flatten(0, 1)
        dn, sn = delta.norm(dim=-1), stream.norm(dim=-1)
        return float((dn / sn).mean()), float(((delta * stream).sum(-1) / (dn * sn)).mean())

    want = {"attn_contrib": [], "attn_cos": [], "mlp_contrib": [], "mlp_cos": []}
    for x, a, m in zip(seen["x"], seen["a"], seen["m"]):
        rel, cos = rel_cos(a, x)
        want["attn_contrib"].append(rel)
        want["attn_cos"].append(cos)
        rel, cos = rel_cos(m, x + a)
        want["mlp_contrib"].append(rel)
        want["mlp_cos"].append(cos)
    for metric, values in want.items():
        (lab,) = store.layers(run_id, metric).values()
        assert lab == pytest.approx(values, rel=1e-4, abs=1e-6), metric


@pytest.mark.parametrize("arch", ["llama", "gemma2"])
def test_attention_sinks_equal_transformers_attentions(arch, cli, db, store, tmp_path):
    """transformers' eager attention returns each layer's probabilities (B, H, T, T)."""
    transformers = pytest.importorskip("transformers")
    build(transformers, arch, tmp_path / arch)
    run_id, ids = imported_and_analyzed(cli, db, tmp_path / arch, tmp_path, 9)
    model = transformers.AutoModelForCausalLM.from_pretrained(
        tmp_path / arch, attn_implementation="eager").float().eval()
    with torch.no_grad():
        attentions = model(ids[:, :-1], output_attentions=True).attentions
    want = {"attn_entropy": [], "attn_sink": [], "sink_rate": []}
    for p in attentions:  # (B, H, T, T)
        p = p.double()[:, :, 1:, :]  # queries after the first
        entropy = -torch.special.xlogy(p, p).sum(-1)  # (B, H, T-1)
        first = p[..., 0]
        want["attn_entropy"].append(float(entropy.mean()))
        per_head = first.mean((0, 2))
        want["attn_sink"].append(float(per_head.mean()))
        want["sink_rate"].append(float((per_head > 0.3).double().mean()))
    for metric, values in want.items():
        (lab,) = store.layers(run_id, metric).values()
        assert lab == pytest.approx(values, rel=1e-4, abs=1e-6), metric


def layer_deltas(model, inputs, skip=None):
    """What each decoder layer adds to the stream, (B, T, C) float64 per layer, with layer
    `skip`'s output replaced by its input after the first position (Csordás et al.'s skip)."""
    layers, _, _ = parts(model)
    ins, outs, hooks = [], [], []

    def pre(_m, args, kwargs):
        ins.append((args[0] if args else kwargs["hidden_states"]).detach())

    def post(i):
        def hook(_m, _i, out):
            h = out[0] if isinstance(out, tuple) else out
            if i == skip:
                h = torch.cat([h[:, :1], ins[-1][:, 1:]], 1)
                out = (h,) + tuple(out[1:]) if isinstance(out, tuple) else h
            outs.append(h.detach())
            return out
        return hook

    for i, layer in enumerate(layers):
        hooks.append(layer.register_forward_pre_hook(pre, with_kwargs=True))
        hooks.append(layer.register_forward_hook(post(i)))
    with torch.no_grad():
        model(inputs)
    for h in hooks:
        h.remove()
    return [o.double() - i.double() for i, o in zip(ins, outs)]


@pytest.mark.parametrize("arch", ["llama", "gemma2"])
def test_the_skip_effect_equals_skipping_a_transformers_layer(arch, cli, db, store, tmp_path):
    """`analyze --probes skip_effect` stores the (skipped s, later l) matrix: the largest relative
    change of layer l's contribution over the positions after the first, mean over rows."""
    transformers = pytest.importorskip("transformers")
    model = build(transformers, arch, tmp_path / arch).float().eval()
    run_id, ids = imported_and_analyzed(cli, db, tmp_path / arch, tmp_path, 10, "skip_effect")
    base = layer_deltas(model, ids[:, :-1])
    L = len(base)
    ((rows, cols, lab),) = store.matrix(run_id, "skip_effect").values()
    assert (rows, cols) == (L, L)
    for s in range(L):
        changed = layer_deltas(model, ids[:, :-1], skip=s)
        for l in range(L):
            got = lab[s * L + l]
            if l <= s:
                assert got != got, (s, l)  # NaN
                continue
            rel = (changed[l] - base[l]).norm(dim=-1) / base[l].norm(dim=-1).clamp_min(1e-6)
            want = float(rel[:, 1:].amax(1).mean())
            assert want > 1e-3, "a random layer's skip reaches every later one"
            assert got == pytest.approx(want, rel=1e-4, abs=1e-6), (s, l)
