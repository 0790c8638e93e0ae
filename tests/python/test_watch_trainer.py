"""The Hugging Face Trainer example (examples/watch_trainer.py): a tiny random Llama trained by
the Trainer with depthlab.TrainerCallback is recorded as a watched run, its loss and learning
rate as the Trainer logs them, the probes at the callback's cadence, gradient norms per block."""
import json

import pytest

from conftest import run_python


def test_a_trainer_run_is_watched_through_the_callback(db, store, tmp_path):
    pytest.importorskip("transformers")
    p = run_python("examples/watch_trainer.py", "--text", "README.md", "--steps", "20",
                   "--every", "10", "--db", db, "--out", str(tmp_path / "out"))
    assert p.returncode == 0, p.stderr[-3000:]
    run_id = int(p.stdout.split("run ")[-1].split()[0])
    run = store.run(run_id)
    assert run["status"] == "finished" and run["name"] == "trainer-llama"
    config = json.loads(run["config"])
    assert config["watch"]["model_class"] == "LlamaForCausalLM"
    assert config["watch"]["layers"] == "model.layers"
    assert config["optim"]["steps"] == 20
    assert sorted(store.layers(run_id, "variance")) == [10, 20]
    assert sorted(store.layers(run_id, "grad_norm")) == [9, 19]  # the update's index
    assert sorted(store.scalars(run_id, "loss_train")) == [4, 9, 14, 19]
    assert len(store.scalars(run_id, "lr")) == 4
    assert sorted(store.scalars(run_id, "grad_norm")) == [4, 9, 14, 19]  # the Trainer's, logged
    attn = store.layers(run_id, "norm_var_attn")[20]
    assert len(attn) == 4 and all(v == v for v in attn)
