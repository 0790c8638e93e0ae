"""Shared set-up of the Python package's tests (run by ctest in the torch2 configuration, with
PYTHONPATH at <build>/python, DEPTHLAB_CLI at the built depthlab-cli and DEPTHLAB_SOURCE at the
repository): a fresh database per test and an independent reader of what the store holds
(plain sqlite3 and the documented float32 blobs, not the lab's own reader)."""
import os
import sqlite3
import struct
import subprocess
import sys

import pytest

REPO = os.environ.get("DEPTHLAB_SOURCE",
                      os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))


class StoreReader:
    def __init__(self, path):
        self.path = path

    def _rows(self, sql, *args):
        con = sqlite3.connect(self.path)
        try:
            return con.execute(sql, args).fetchall()
        finally:
            con.close()

    def run(self, run_id):
        (row,) = self._rows("SELECT name, group_name, scheme, status, config_json, pid FROM runs "
                            "WHERE id=?", run_id)
        return dict(zip(("name", "group", "scheme", "status", "config", "pid"), row))

    def tags(self, run_id):
        return [t for (t,) in self._rows("SELECT tag FROM run_tags WHERE run_id=?", run_id)]

    def scalars(self, run_id, key):
        return dict(self._rows("SELECT step, value FROM scalars WHERE run_id=? AND key=? "
                               "ORDER BY step", run_id, key))

    def layers(self, run_id, metric):
        out = {}
        for step, n, blob in self._rows("SELECT step, n_layers, data FROM layer_series WHERE "
                                        "run_id=? AND metric=? ORDER BY step", run_id, metric):
            out[step] = list(struct.unpack(f"<{n}f", blob))
        return out

    def matrix(self, run_id, kind):
        out = {}
        for step, r, c, blob in self._rows("SELECT step, n_rows, n_cols, data FROM matrices WHERE "
                                           "run_id=? AND kind=? ORDER BY step", run_id, kind):
            out[step] = (r, c, list(struct.unpack(f"<{r * c}f", blob)))
        return out

    def events(self, run_id):
        return [(lvl, msg) for lvl, msg in self._rows(
            "SELECT level, message FROM events WHERE run_id=? ORDER BY id", run_id)]


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "lab.db")


@pytest.fixture
def store(db):
    return StoreReader(db)


@pytest.fixture
def cli():
    path = os.environ.get("DEPTHLAB_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("DEPTHLAB_CLI is not set to a built depthlab-cli")
    return path


def run_python(*args, timeout=300, env=None):
    """Runs a Python script of the repository with this interpreter; returns the process."""
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=REPO)
