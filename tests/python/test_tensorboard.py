"""TensorBoard out and in: `depthlab-cli export --tensorboard` read back by TensorBoard's own
reader (EventAccumulator) with the store's values, per-layer metrics one tag a layer; event files
PyTorch's SummaryWriter writes imported as a run (loss, validation loss, learning rate, and
`variance/layer_N` as a per-layer series)."""
import json
import subprocess

import pytest


def cli_run(cli, *args):
    return subprocess.run([cli, *args], capture_output=True, text=True, timeout=300)


def test_summary_writer_logs_import_and_export_back_to_tensorboard(cli, db, store, tmp_path):
    pytest.importorskip("tensorboard")
    from torch.utils.tensorboard import SummaryWriter
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    logs = tmp_path / "logs" / "my-run"
    writer = SummaryWriter(str(logs))
    for step in range(0, 60, 10):
        writer.add_scalar("train/loss", 5.0 - 0.05 * step, step)
        writer.add_scalar("train/learning_rate", 1e-3 * (1 + step / 100), step)
        for layer in range(1, 5):  # counted from 1
            writer.add_scalar(f"variance/layer_{layer}", 0.1 * layer + 0.001 * step, step)
        writer.add_scalar("accuracy", 0.5, step)
    writer.add_scalar("eval/loss", 4.25, 50)
    writer.close()

    p = cli_run(cli, "import-tensorboard", str(tmp_path / "logs"), "--db", db, "--json")
    assert p.returncode == 0, p.stderr
    (result,) = json.loads(p.stdout)
    run_id = result["run_id"]
    assert result["skipped_tags"] == ["accuracy"]
    assert store.scalars(run_id, "loss_train") == pytest.approx(
        {s: 5.0 - 0.05 * s for s in range(0, 60, 10)})
    assert store.scalars(run_id, "loss_val") == {50: 4.25}
    assert len(store.scalars(run_id, "lr")) == 6
    variance = store.layers(run_id, "variance")
    assert sorted(variance) == [0, 10, 20, 30, 40, 50]
    assert variance[20] == pytest.approx([0.12, 0.22, 0.32, 0.42], rel=1e-6)
    assert "tensorboard" in store.tags(run_id)

    out = tmp_path / "export"
    e = cli_run(cli, "export", "--tensorboard", str(out), "--runs", str(run_id), "--db", db,
                "--json")
    assert e.returncode == 0, e.stderr
    exported = json.loads(e.stdout)
    (folder,) = [p for p in out.iterdir() if p.is_dir()]  # the figures' scratch folder is gone
    acc = EventAccumulator(str(folder), size_guidance={"images": 0})
    acc.Reload()
    tags = acc.Tags()["scalars"]
    assert {"loss_train", "loss_val", "lr", "variance/layer_01", "variance/layer_04"} <= set(tags)
    read = {ev.step: ev.value for ev in acc.Scalars("loss_train")}
    assert read == pytest.approx(store.scalars(run_id, "loss_train"), rel=1e-6)
    layer3 = {ev.step: ev.value for ev in acc.Scalars("variance/layer_03")}
    assert layer3 == pytest.approx({s: v[2] for s, v in variance.items()}, rel=1e-6)
    # The paper figures as images where depthlab-export is built (it comes with the GUI): the
    # variance figure; the others are said to be left out (no angular or pruning rows here).
    if exported["images"]:
        assert acc.Tags()["images"] == ["figures/variance"]
        (image,) = acc.Images("figures/variance")
        assert image.step == 50 and image.width > 100 and image.height > 100
        assert image.encoded_image_string[:8] == b"\x89PNG\r\n\x1a\n"
    assert any("angular" in why for why in exported["left_out"])
