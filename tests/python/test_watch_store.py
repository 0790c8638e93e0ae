"""A watched loop is an ordinary run of the lab's store: the example's run as the CLI reads it,
its status when the process ends well, is killed or is asked to stop, and bad input or a locked
database that never stops the training loop."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch
from torch import nn

import depthlab
from conftest import REPO, run_python

sys.path.insert(0, os.path.join(REPO, "examples"))
from watch_gpt import GPT  # noqa: E402


def test_the_example_loop_is_a_run_the_lab_reads(db, store, cli):
    p = run_python("examples/watch_gpt.py", "--text", "README.md", "--steps", "40", "--every",
                   "10", "--prune-every", "20", "--layers", "4", "--db", db, "--name", "gpt-demo")
    assert p.returncode == 0, p.stderr
    run_id = int(p.stdout.split("run ")[1].split()[0])
    run = store.run(run_id)
    assert (run["name"], run["group"], run["scheme"], run["status"]) == (
        "gpt-demo", "watch-gpt-demo", "pre_ln", "finished")
    assert "watched" in store.tags(run_id)
    config = json.loads(run["config"])
    assert config["watch"]["model_class"] == "GPT" and config["watch"]["layers"] == "blocks"
    assert config["model"]["nLayers"] == 4 and config["model"]["dModel"] == 64
    assert sorted(store.scalars(run_id, "loss_train")) == list(range(0, 40))  # update index
    assert sorted(store.layers(run_id, "variance")) == [10, 20, 30, 40]
    assert sorted(store.layers(run_id, "prune_delta")) == [20, 40]
    assert sorted(store.layers(run_id, "grad_norm")) == [9, 19, 29, 39]
    assert sorted(store.matrix(run_id, "angular")) == [40]
    assert all(len(v) == 4 for v in store.layers(run_id, "variance").values())
    # the lab's own CLI reads it as any run: the run list and the report
    listed = subprocess.run([cli, "runs", "list", "--db", db], capture_output=True, text=True)
    assert listed.returncode == 0 and "gpt-demo" in listed.stdout, listed.stderr
    report = subprocess.run([cli, "report", "--db", db, "--runs", str(run_id)],
                            capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    # ... and never trains it: resume refuses with the reason
    resumed = subprocess.run([cli, "resume", str(run_id), "--db", db],
                             capture_output=True, text=True)
    assert resumed.returncode != 0 and "Python training loop" in resumed.stderr + resumed.stdout


def test_a_killed_loop_reads_crashed_and_stop_reaches_the_loop(db, store, cli):
    script = textwrap.dedent(f"""
        import os, signal, sys, torch
        sys.path.insert(0, {os.path.join(REPO, 'examples')!r})
        import depthlab
        from watch_gpt import GPT
        probe = depthlab.watch(GPT(layers=2, context=8), probe_batch=torch.zeros(2, 8).long(),
                               db={db!r}, every=1)
        probe.step(1, loss=1.0)
        print(probe.run_id, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert p.returncode == -signal.SIGKILL
    run_id = int(p.stdout.split()[0])
    assert store.run(run_id)["status"] == "running"  # until a reader looks at it
    subprocess.run([cli, "runs", "list", "--db", db], capture_output=True, text=True, check=True)
    assert store.run(run_id)["status"] == "crashed"

    probe = depthlab.watch(GPT(layers=2, context=8), probe_batch=torch.zeros(2, 8).long(), db=db)
    assert not probe.should_stop
    con = sqlite3.connect(db)  # what the window's Stop button writes (RunStore::requestStop)
    con.execute("UPDATE runs SET stop_requested=1 WHERE id=?", (probe.run_id,))
    con.commit()
    con.close()
    assert probe.should_stop
    probe.finish("stopped")
    assert store.run(probe.run_id)["status"] == "stopped"


def test_bad_input_gets_a_clear_message(db):
    class NoBlocks(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 8)

        def forward(self, x):
            return self.emb(x)

    with pytest.raises(ValueError, match="layers="):
        depthlab.watch(NoBlocks(), probe_batch=torch.zeros(2, 4).long(), db=db)
    model = GPT(layers=2, context=8)
    with pytest.raises(ValueError, match="probe_batch"):
        depthlab.watch(model, db=db)
    with pytest.raises(ValueError, match=r"token ids \(B, T\)"):
        depthlab.watch(model, probe_batch=torch.zeros(2, 8), db=db)
    with pytest.raises(ValueError, match="every"):
        depthlab.watch(model, probe_batch=torch.zeros(2, 8).long(), db=db, every=0)
    with pytest.raises(ValueError, match="unknown scheme"):
        depthlab.watch(model, probe_batch=torch.zeros(2, 8).long(), db=db, scheme="nope")
    # layers= that are not the blocks the forward pass runs through
    probe = depthlab.watch(model, probe_batch=torch.zeros(2, 8).long(), db=db,
                           layers=nn.ModuleList([nn.Linear(64, 64)]))
    with pytest.raises(ValueError, match="did not reach block"):
        probe.probe(1)
    probe.finish("stopped")


def test_a_locked_database_skips_writes_and_training_goes_on(db, store):
    model = GPT(layers=2, context=8)
    probe = depthlab.watch(model, probe_batch=torch.zeros(2, 8).long(), db=db, every=1)
    probe._run.set_flush_seconds(0)
    locker = sqlite3.connect(db, timeout=0)
    locker.execute("BEGIN EXCLUSIVE")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        probe.step(1, loss=2.0)  # would write now: the database is locked
        probe.step(2, loss=1.5)
    assert any("skipped writing" in str(w.message) for w in caught)
    locker.rollback()
    locker.close()
    probe.step(3, loss=1.0)  # the kept rows go in with this write
    probe.finish()
    assert store.scalars(probe.run_id, "loss_train") == {0: 2.0, 1: 1.5, 2: 1.0}
    assert sorted(store.layers(probe.run_id, "variance")) == [1, 2, 3]


def test_hugging_face_blocks_and_norms_are_found_by_family(db, store):
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=3, num_attention_heads=4,
                                      num_key_value_heads=2, max_position_embeddings=32)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(config)
    ids = torch.randint(64, (2, 12))
    probe = depthlab.watch(model, probe_batch=ids, db=db, every=1)
    probe.step(1)
    probe.finish()
    run = store.run(probe.run_id)
    assert json.loads(run["config"])["watch"]["layers"] == "model.layers"
    with torch.no_grad():
        hidden = model(ids, output_hidden_states=True).hidden_states
    # transformers' last hidden state is after the final norm: the streams are 0..L-1, then the
    # last block's output, which the variance of block L-1 reads
    variance = store.layers(probe.run_id, "variance")[1]
    for l in range(2):
        assert variance[l] == pytest.approx(hidden[l + 1].double().var(unbiased=False).item(),
                                            rel=1e-5)
    attn = store.layers(probe.run_id, "norm_var_attn")[1]
    ffn = store.layers(probe.run_id, "norm_var_ffn")[1]
    assert all(v == v for v in attn + ffn)  # input_layernorm and post_attention_layernorm found


def test_a_store_that_cannot_be_opened_leaves_training_unrecorded(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    model = GPT(layers=2, context=8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        probe = depthlab.watch(model, probe_batch=torch.zeros(2, 8).long(),
                               db=str(blocker / "lab.db"), every=1)
        probe.step(1, loss=1.0)
        probe.finish()
    assert probe.run_id is None
    assert any("training goes on unrecorded" in str(w.message) for w in caught)
