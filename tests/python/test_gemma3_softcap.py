"""Gemma 3 with attn_logit_softcapping set: transformers' Gemma3Attention never applies it (only
Gemma 2's does), so the lab does not either. `depthlab-cli eval` of the import equals the loss of
transformers on the same token ids; a Gemma 2 with the same cap does apply it (the field is read
there), so the comparison is not vacuous."""
import json
import subprocess

import pytest
import torch

import hf_models

VOCAB = 97


def imported_loss(cli, db, folder, tokens):
    imported = subprocess.run([cli, "import-hf", str(folder), "--db", db, "--json"],
                              capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    run_id = json.loads(imported.stdout)["run_id"]
    evaluated = subprocess.run([cli, "--json", "eval", "--run", str(run_id), "--tokens",
                                str(tokens), "--db", db], capture_output=True, text=True)
    assert evaluated.returncode == 0, evaluated.stderr
    return json.loads(evaluated.stdout)["loss"]


@pytest.mark.parametrize("arch", ["gemma3", "gemma2"])
def test_the_attention_soft_cap_follows_transformers(arch, cli, db, tmp_path):
    pytest.importorskip("transformers")
    common = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=3, num_attention_heads=4,
                  num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=64,
                  rms_norm_eps=1e-5, tie_word_embeddings=True, initializer_range=0.2)
    config, cls = hf_models.config_of(arch, common, None)
    config.attn_logit_softcapping = 1.0  # low enough to change every score
    torch.manual_seed(7)
    model = cls(config).eval()
    folder = tmp_path / arch
    model.save_pretrained(folder, safe_serialization=True)
    ids = torch.randint(VOCAB, (3, 17), generator=torch.Generator().manual_seed(2))
    tokens = tmp_path / "ids.txt"
    tokens.write_text("\n".join(" ".join(str(int(t)) for t in row) for row in ids) + "\n")
    reloaded = cls.from_pretrained(folder, attn_implementation="eager").float().eval()
    with torch.no_grad():
        logits = reloaded(ids[:, :-1]).logits.double()
        want = float(torch.nn.functional.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten()))
        config.attn_logit_softcapping = None
        uncapped = cls.from_pretrained(folder, config=config, attn_implementation="eager").eval()
        plain = float(torch.nn.functional.cross_entropy(
            uncapped(ids[:, :-1]).logits.double().flatten(0, 1), ids[:, 1:].flatten()))
    if arch == "gemma2":
        assert abs(plain - want) > 1e-3, "the cap must matter where it is applied"
    else:
        assert plain == pytest.approx(want, abs=1e-7), "transformers' Gemma 3 applies no cap"
    assert imported_loss(cli, db, folder, tokens) == pytest.approx(want, rel=1e-5)
