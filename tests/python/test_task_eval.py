"""Task accuracy by log-likelihood against the `lm-eval` package: a small random Llama with a
byte-level tokenizer.json, imported into the lab, scored on a local multiple-choice task made
here by `depthlab-cli eval --task FILE --template qa` and by lm-eval 0.4's HFLM on the same
weights with the same prompt (its task YAML: `Question: {{question}}\\nAnswer:`, the choices after
a space): the same acc and acc_norm, every choice's log-likelihood to 1e-4. Bad task files get a
clear error naming the line."""
import json
import os
import subprocess

import pytest
import torch

import hf_models

VOCAB = 256


def byte_tokenizer(folder):
    """A byte-level BPE tokenizer.json with no merges (one id per byte, GPT-2's byte map), as the
    lab's export writes one; eos is byte 0's symbol so that lm-eval pads with it."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from tokenizers.pre_tokenizers import ByteLevel
    alphabet = ByteLevel.alphabet()
    byte_map = {}
    n = 256
    for b in range(256):
        printable = (33 <= b <= 126) or (0xA1 <= b <= 0xAC) or b >= 0xAE
        byte_map[chr(b) if printable else chr(n)] = b
        n += 0 if printable else 1
    assert set(byte_map) == set(alphabet)
    tok = Tokenizer(models.BPE(vocab=byte_map, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    tok.save(str(folder / "tokenizer.json"))
    eos = next(s for s, b in byte_map.items() if b == 0)
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": eos, "model_max_length": 256}))


def small_llama(folder):
    import transformers
    common = dict(hidden_size=64, intermediate_size=96, num_hidden_layers=3, num_attention_heads=4,
                  num_key_value_heads=2, vocab_size=VOCAB, max_position_embeddings=256,
                  rms_norm_eps=1e-5, tie_word_embeddings=False, initializer_range=0.2)
    config, cls = hf_models.config_of("llama", common, None)
    torch.manual_seed(21)
    model = cls(config).eval()
    model.save_pretrained(folder, safe_serialization=True)
    byte_tokenizer(folder)
    return model


def task_file(path):
    words = ["red", "green", "blue", "stone", "river", "cloud", "seven", "apple", "north", "glass"]
    g = torch.Generator().manual_seed(4)
    with open(path, "w") as f:
        for i in range(14):
            k = 2 + i % 3
            pick = torch.randperm(len(words), generator=g)[:k].tolist()
            choices = [words[j] * (1 + j % 2) for j in pick]  # lengths differ: acc_norm can differ
            f.write(json.dumps({"question": f"which word comes after {words[i % 10]}?",
                                "choices": choices, "answer": int(torch.randint(k, (1,), generator=g))}) + "\n")


def lm_eval_scores(folder, task, tmp_path):
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    lm_eval = pytest.importorskip("lm_eval")
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager
    yaml = tmp_path / "tasks" / "depthlab_local.yaml"
    yaml.parent.mkdir()
    yaml.write_text(
        "task: depthlab_local\n"
        "dataset_path: json\n"
        f"dataset_kwargs:\n  data_files:\n    test: {task}\n"
        "test_split: test\n"
        "output_type: multiple_choice\n"
        "doc_to_text: \"Question: {{question}}\\nAnswer:\"\n"
        "doc_to_choice: \"{{choices}}\"\n"
        "doc_to_target: answer\n"
        "metric_list:\n  - metric: acc\n  - metric: acc_norm\n")
    out = lm_eval.simple_evaluate(
        model=HFLM(pretrained=str(folder), batch_size=1, device="cpu", dtype="float32"),
        tasks=["depthlab_local"], task_manager=TaskManager(include_path=str(yaml.parent)),
        log_samples=True, num_fewshot=0)
    res = out["results"]["depthlab_local"]
    samples = sorted(out["samples"]["depthlab_local"], key=lambda s: s["doc_id"])
    lls = [[float(r[0]) for r in s["filtered_resps"]] for s in samples]
    return res["acc,none"], res["acc_norm,none"], lls


def test_task_accuracy_equals_lm_eval(cli, db, tmp_path):
    pytest.importorskip("transformers")
    folder = tmp_path / "llama"
    small_llama(folder)
    task = tmp_path / "task.jsonl"
    task_file(task)
    want_acc, want_norm, want_lls = lm_eval_scores(folder, task, tmp_path)
    imported = subprocess.run([cli, "import-hf", str(folder), "--db", db, "--json"],
                              capture_output=True, text=True)
    assert imported.returncode == 0, imported.stderr
    run_id = json.loads(imported.stdout)["run_id"]
    done = subprocess.run([cli, "eval", "--run", str(run_id), "--task", str(task), "--template",
                           "qa", "--db", db, "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lab = json.loads(done.stdout)
    assert lab["documents"] == 14
    got_lls = [d["loglikelihoods"] for d in lab["docs"]]
    for got, want in zip(got_lls, want_lls):
        assert got == pytest.approx(want, rel=1e-4, abs=1e-4)
    assert lab["acc"] == pytest.approx(want_acc)
    assert lab["acc_norm"] == pytest.approx(want_norm)
    assert lab["acc"] != lab["acc_norm"] or want_acc == want_norm
    assert 0.25 < lab["chance"] < 0.5


@pytest.mark.parametrize("line,message", [
    ('{"question": "q", "choices": ["a", "b"]}', 'no "answer"'),
    ('{"question": "q", "answer": 0}', '"choices"'),
    ('{"question": "q", "choices": ["a", "b"], "answer": 2}', "out of range"),
    ('{"choices": ["a", "b"], "answer": 0}', '"question"'),
    ('not json', "not valid JSON"),
])
def test_bad_task_files_name_the_line(cli, db, tmp_path, line, message):
    folder = tmp_path / "llama"
    small_llama(folder)
    imported = subprocess.run([cli, "import-hf", str(folder), "--db", db, "--json"],
                              capture_output=True, text=True)
    run_id = json.loads(imported.stdout)["run_id"]
    task = tmp_path / "bad.jsonl"
    task.write_text('{"question": "fine", "choices": ["x", "y"], "answer": 1}\n' + line + "\n")
    done = subprocess.run([cli, "eval", "--run", str(run_id), "--task", str(task), "--db", db],
                          capture_output=True, text=True)
    assert done.returncode != 0
    assert message in done.stderr and "bad.jsonl:2" in done.stderr, done.stderr


def hf_accuracy(model, task):
    """acc of the `qa` prompt computed here with transformers (byte ids: the tokenizer's)."""
    hits = []
    for line in open(task):
        doc = json.loads(line)
        prompt = f"Question: {doc['question']}\nAnswer:"
        ctx = list(prompt.encode())
        lls = []
        for choice in doc["choices"]:
            cont = list((" " + choice).encode())
            ids = torch.tensor([ctx + cont[:-1]])
            with torch.no_grad():
                logp = model(ids, use_cache=False).logits[0].double().log_softmax(-1)
            lls.append(sum(float(logp[len(ctx) - 1 + k, t]) for k, t in enumerate(cont)))
        hits.append(float(max(range(len(lls)), key=lambda i: lls[i]) == doc["answer"]))
    return sum(hits) / len(hits)


def test_pruned_accuracy_equals_transformers_without_those_layers(cli, db, tmp_path):
    """--prune: the deepest choice removes the blocks before the last; the same layers deleted
    from the transformers model give the same accuracy; n = 0 is the whole model."""
    pytest.importorskip("transformers")
    folder = tmp_path / "llama"
    model = small_llama(folder)
    task = tmp_path / "task.jsonl"
    task_file(task)
    text = tmp_path / "text.txt"
    text.write_text(" ".join(["the curse of depth in language models"] * 100))
    imported = subprocess.run([cli, "import-hf", str(folder), "--db", db, "--json"],
                              capture_output=True, text=True)
    run_id = json.loads(imported.stdout)["run_id"]
    done = subprocess.run([cli, "eval", "--run", str(run_id), "--task", str(task), "--template",
                           "qa", "--prune", "--corpus", str(text), "--db", db, "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    lab = json.loads(done.stdout)
    sweep = lab["pruning"]
    assert [p["removed"] for p in sweep["deepest"]] == [0, 1]  # 3 blocks: up to L/2 = 1
    assert sweep["deepest"][0]["acc"] == lab["acc"] == sweep["angular"][0]["acc"]
    assert sweep["deepest"][1]["first_block"] == 1  # the block before the last
    assert hf_accuracy(model, task) == pytest.approx(lab["acc"])
    del model.model.layers[1]
    assert hf_accuracy(model, task) == pytest.approx(sweep["deepest"][1]["acc"])
    assert sweep["deepest"][1]["loss"] != sweep["deepest"][0]["loss"]
