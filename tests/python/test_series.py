"""Checkpoint series (`depthlab-cli import-hf --series`): the checkpoint-N folders a Hugging Face
Trainer writes become one run over training, each checkpoint probed at its step with the values a
single import of it gets; run again with more checkpoints it continues; `--hub` fetches revisions
through huggingface_hub (here from a local hub cache, offline: Pythia-style .bin revisions
converted), deletes each after its analysis, and says so clearly when the hub cannot be reached."""
import json
import os
import shutil
import subprocess

import pytest
import torch


def tiny_llama(transformers, seed=0):
    config = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64,
                                      num_hidden_layers=4, num_attention_heads=4,
                                      num_key_value_heads=2, max_position_embeddings=64)
    torch.manual_seed(seed)
    return transformers.LlamaForCausalLM(config)


def probe_ids(path, rows=3, length=16):
    ids = torch.randint(64, (rows, length + 1), generator=torch.Generator().manual_seed(5))
    path.write_text("\n".join(" ".join(str(int(t)) for t in row) for row in ids) + "\n")
    return str(path)


def cli_run(cli, *args, env=None):
    p = subprocess.run([cli, *args], capture_output=True, text=True, env=env, timeout=600)
    return p


def trainer_series(transformers, out):
    """A tiny Llama trained 12 steps by the Trainer, checkpoint-4, -8, -12 in `out`."""
    model = tiny_llama(transformers)
    data = [{"input_ids": list(range(i % 7, i % 7 + 16)), "labels": list(range(i % 7, i % 7 + 16))}
            for i in range(64)]
    args = transformers.TrainingArguments(output_dir=str(out), max_steps=12, save_steps=4,
                                          per_device_train_batch_size=4, learning_rate=3e-3,
                                          report_to=[], logging_steps=4, use_cpu=True,
                                          disable_tqdm=True)
    transformers.Trainer(model=model, args=args, train_dataset=data).train()
    return sorted(p.name for p in out.iterdir() if p.name.startswith("checkpoint-"))


def test_trainer_checkpoints_are_one_run_over_training(cli, db, store, tmp_path):
    transformers = pytest.importorskip("transformers")
    out = tmp_path / "trainer"
    assert trainer_series(transformers, out) == ["checkpoint-12", "checkpoint-4", "checkpoint-8"]
    ids = probe_ids(tmp_path / "ids.txt")
    probe = ["--tokens", ids, "--sequences", "3", "--seq-len", "16", "--probes", "variance",
             "--db", db, "--json"]
    # Two checkpoints first, then all three: the series continues.
    first = cli_run(cli, "import-hf", "--series", str(out / "checkpoint-4"),
                    str(out / "checkpoint-8"), "--name", "trainer", *probe)
    assert first.returncode == 0, first.stderr
    run_id = json.loads(first.stdout)["run_id"]
    again = cli_run(cli, "import-hf", "--series", str(out), "--name", "trainer", *probe)
    assert again.returncode == 0, again.stderr
    result = json.loads(again.stdout)
    assert result["run_id"] == run_id and result["continued"]
    assert result["already_done"] == [4, 8] and result["analyzed_steps"] == [12]
    variance = store.layers(run_id, "variance")
    assert sorted(variance) == [4, 8, 12]
    assert variance[4] != variance[12]
    assert "series" in store.tags(run_id)
    config = json.loads(store.run(run_id)["config"])
    assert [c["step_from"] for c in config["series"]["checkpoints"]] == ["the folder's name"] * 3
    # The last checkpoint imported alone and analysed on the same ids: the same values.
    alone = cli_run(cli, "import-hf", str(out / "checkpoint-12"), "--db", db, "--json")
    alone_id = json.loads(alone.stdout)["run_id"]
    analyzed = cli_run(cli, "analyze", "--run", str(alone_id), *probe[:-1])
    assert analyzed.returncode == 0, analyzed.stderr
    assert store.layers(alone_id, "variance")[0] == variance[12]
    report = cli_run(cli, "report", "--runs", str(run_id), "--db", db, "--json")
    assert json.loads(report.stdout)[0]["steps"] == 12


def hub_cache(root, repo, revisions):
    """A Hugging Face hub cache as huggingface_hub lays it out: refs/<revision> -> a commit,
    snapshots/<commit>/ its files; `revisions` maps a revision to the files to put there."""
    folder = root / "hub" / ("models--" + repo.replace("/", "--"))
    for n, (revision, write) in enumerate(revisions.items()):
        commit = f"{n:040x}"
        (folder / "refs").mkdir(parents=True, exist_ok=True)
        (folder / "refs" / revision).write_text(commit)
        snapshot = folder / "snapshots" / commit
        snapshot.mkdir(parents=True)
        write(snapshot)
    return folder


def test_hub_revisions_are_fetched_converted_and_deleted(cli, db, store, tmp_path):
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("huggingface_hub")
    config = transformers.GPTNeoXConfig(vocab_size=64, hidden_size=32, intermediate_size=64,
                                        num_hidden_layers=3, num_attention_heads=4,
                                        max_position_embeddings=64, rotary_pct=0.25,
                                        tie_word_embeddings=False)
    torch.manual_seed(1)
    early = transformers.GPTNeoXForCausalLM(config)
    torch.manual_seed(2)
    late = transformers.GPTNeoXForCausalLM(config)

    early.save_pretrained(tmp_path / "early")  # the checkpoint's own names (embed_out, ...)
    from safetensors.torch import load_file

    def pytorch_bin(snapshot):  # Pythia's step branches: only pytorch_model.bin
        config.save_pretrained(snapshot)
        torch.save(load_file(tmp_path / "early" / "model.safetensors"),
                   snapshot / "pytorch_model.bin")

    hub = hub_cache(tmp_path / "hf", "tiny/neox", {
        "step0": pytorch_bin,
        "step1000": lambda snapshot: late.save_pretrained(snapshot)})
    ids = probe_ids(tmp_path / "ids.txt")
    env = dict(os.environ, HF_HOME=str(tmp_path / "hf"), HF_HUB_OFFLINE="1")
    fetched = tmp_path / "fetched"
    p = cli_run(cli, "import-hf", "--series", "--hub", "tiny/neox", "--revisions", "step0,step1000",
                "--tokens", ids, "--sequences", "3", "--seq-len", "16", "--probes", "variance",
                "--download-dir", str(fetched), "--delete-after", "--db", db, "--json", env=env)
    assert p.returncode == 0, p.stderr
    results = json.loads(p.stdout)  # one object a revision analysed
    assert [r["analyzed_steps"] for r in results] == [[0], [1000]]
    run_id = results[0]["run_id"]
    assert results[1]["run_id"] == run_id and results[1]["continued"]
    variance = store.layers(run_id, "variance")
    assert sorted(variance) == [0, 1000]
    assert not any(fetched.iterdir())       # each revision deleted after its analysis
    assert not (hub / "snapshots").exists() or not any((hub / "snapshots").iterdir())
    # The converted .bin equals the same weights saved as safetensors and imported alone.
    alone = json.loads(cli_run(cli, "import-hf", str(tmp_path / "early"), "--db", db,
                               "--json").stdout)["run_id"]
    assert cli_run(cli, "analyze", "--run", str(alone), "--tokens", ids, "--sequences", "3",
                   "--seq-len", "16", "--probes", "variance", "--db", db).returncode == 0
    assert store.layers(alone, "variance")[0] == variance[0]
    # Run again: both steps are done, nothing is fetched (the cache is gone: it would fail).
    again = cli_run(cli, "import-hf", "--series", "--hub", "tiny/neox", "--revisions",
                    "step0,step1000", "--tokens", ids, "--sequences", "3", "--seq-len", "16",
                    "--probes", "variance", "--download-dir", str(fetched), "--db", db, env=env)
    assert again.returncode == 0, again.stderr
    assert "step 1000 already analysed" in again.stderr


def test_offline_the_hub_says_so_and_nothing_is_written(cli, db, store, tmp_path):
    pytest.importorskip("huggingface_hub")
    env = dict(os.environ, HF_HOME=str(tmp_path / "empty-cache"), HF_HUB_OFFLINE="1")
    p = cli_run(cli, "import-hf", "--series", "--hub", "EleutherAI/pythia-14m", "--revisions",
                "step0", "--tokens", probe_ids(tmp_path / "ids.txt"), "--db", db, env=env)
    assert p.returncode != 0
    assert "cannot reach the Hugging Face hub" in p.stderr, p.stderr
    assert "EleutherAI/pythia-14m revision step0" in p.stderr
    assert "Traceback" not in p.stderr
    assert store._rows("SELECT count(*) FROM runs") == [(0,)]
