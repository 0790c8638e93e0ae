"""Parity: what depthlab.watch stores for a Hugging Face model equals `depthlab-cli analyze` of
the same weights saved and imported (the lab's own decoder over them), on the same token ids."""
import json
import subprocess

import pytest
import torch

import depthlab


def test_watch_equals_analyze_of_the_imported_weights(db, store, cli, tmp_path):
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(vocab_size=96, hidden_size=48, intermediate_size=96,
                                      num_hidden_layers=5, num_attention_heads=4,
                                      num_key_value_heads=2, max_position_embeddings=64,
                                      rms_norm_eps=1e-5)
    torch.manual_seed(7)
    model = transformers.LlamaForCausalLM(config)
    with torch.no_grad():  # gains away from 1, so that the norms' outputs differ by block
        for layer in model.model.layers:
            layer.input_layernorm.weight.uniform_(0.5, 1.5)
            layer.post_attention_layernorm.weight.uniform_(0.5, 1.5)
    folder = tmp_path / "tiny-llama"
    model.save_pretrained(folder, safe_serialization=True)
    rows, length = 4, 24
    ids = torch.randint(96, (rows, length + 1), generator=torch.Generator().manual_seed(3))
    tokens = tmp_path / "probe.txt"
    tokens.write_text("\n".join(" ".join(str(int(t)) for t in row) for row in ids) + "\n")

    probe = depthlab.watch(model, probe_batch=ids[:, :length], db=db, every=1, prune_every=0,
                           name="watched-llama")
    probe.step(1)
    probe.finish()

    imported = subprocess.run([cli, "import-hf", str(folder), "--db", db, "--json"],
                              capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    run_id = json.loads(imported.stdout)["run_id"]
    analyzed = subprocess.run([cli, "analyze", "--run", str(run_id), "--tokens", str(tokens),
                               "--sequences", str(rows), "--seq-len", str(length), "--probes",
                               "variance", "--db", db], capture_output=True, text=True)
    assert analyzed.returncode == 0, analyzed.stderr
    for metric in ("variance", "norm_var_attn", "norm_var_ffn", "angular_adjacent",
                   "block_influence", "effectiveness"):
        (lab,) = store.layers(run_id, metric).values()
        watched = store.layers(probe.run_id, metric)[1]
        assert watched == pytest.approx(lab, rel=1e-5, abs=1e-6), metric
