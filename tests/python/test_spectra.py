"""Parity of the weight spectra: `depthlab-cli analyze --probes spectra` on an imported Hugging
Face model (no text: the weights alone) against the `weightwatcher` package on the same model.
Per block, the mean power-law alpha of its seven projections to +-0.05 (the issue's tolerance; the
fit is WeightWatcher's own method, so the difference is the SVD's precision) and the mean stable
rank to 1e-4 relative."""
import json
import subprocess

import pytest
import torch

LAYERS = 3


def test_spectra_equal_weightwatcher(cli, db, store, tmp_path):
    transformers = pytest.importorskip("transformers")
    ww = pytest.importorskip("weightwatcher")
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=96, intermediate_size=256,
                                      num_hidden_layers=LAYERS, num_attention_heads=4,
                                      num_key_value_heads=4, max_position_embeddings=32)
    torch.manual_seed(13)
    model = transformers.LlamaForCausalLM(config).eval()
    with torch.no_grad():  # heavy-tailed weights, as training makes them: alphas of a few
        for name, p in model.named_parameters():
            if p.dim() == 2 and ".layers." in name:
                p.copy_(torch.distributions.StudentT(2.5).sample(p.shape) * 0.02)
    folder = tmp_path / "llama"
    model.save_pretrained(folder, safe_serialization=True)
    imported = subprocess.run([cli, "import-hf", str(folder), "--db", db, "--json"],
                              capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    run_id = json.loads(imported.stdout)["run_id"]
    analyzed = subprocess.run([cli, "analyze", "--run", str(run_id), "--probes", "spectra",
                               "--db", db], capture_output=True, text=True)
    assert analyzed.returncode == 0, analyzed.stderr  # no --corpus: the weights alone

    details = ww.WeightWatcher(model=model).analyze()
    (alpha,) = store.layers(run_id, "spectral_alpha").values()
    (rank,) = store.layers(run_id, "stable_rank").values()
    assert len(alpha) == LAYERS
    all_alphas = []
    for layer in range(LAYERS):
        rows = details[details["longname"].str.contains(f"layers.{layer}.", regex=False)]
        assert len(rows) == 7, rows["longname"].tolist()  # q, k, v, o, gate, up, down
        all_alphas += rows["alpha"].tolist()
        assert alpha[layer] == pytest.approx(rows["alpha"].mean(), abs=0.05), layer
        assert rank[layer] == pytest.approx(rows["stable_rank"].mean(), rel=1e-4), layer
    assert 1.5 < sum(all_alphas) / len(all_alphas) < 8  # a heavy tail was fitted, not a failure
    assert store.scalars(run_id, "spectral_alpha_mean")[0] == pytest.approx(
        sum(all_alphas) / len(all_alphas), abs=0.05)
