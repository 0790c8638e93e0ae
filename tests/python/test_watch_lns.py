"""The LNS no-op case (OLMo-core PR #698): a model declared LNS whose 1/sqrt(l) scale is silently
dropped trains exactly as Pre-LN; the watched runs show it (the same variance curve as the Pre-LN
run of the same seed) and the lab's report says so; a real LNS model draws no warning."""
import subprocess

from conftest import run_python


def watched(db, name, *flags):
    p = run_python("examples/watch_gpt.py", "--text", "README.md", "--steps", "20", "--every",
                   "10", "--prune-every", "0", "--layers", "6", "--db", db, "--name", name, *flags)
    assert p.returncode == 0, p.stderr[-3000:]
    return int(p.stdout.split("run ")[1].split()[0])


def test_a_dropped_lns_scale_shows_pre_ln_and_the_report_says_so(db, store, cli):
    pre, lns, dropped = (watched(db, "pre"), watched(db, "lns", "--lns"),
                         watched(db, "dropped", "--lns-dropped"))
    assert store.run(dropped)["scheme"] == "lns"
    assert store.layers(dropped, "variance") == store.layers(pre, "variance")
    assert store.layers(lns, "variance") != store.layers(pre, "variance")
    # LNS keeps the deep residual stream's variance lower than Pre-LN's
    assert store.layers(lns, "variance")[20][-1] < store.layers(pre, "variance")[20][-1]
    report = subprocess.run([cli, "report", "--runs", f"{pre},{lns},{dropped}", "--db", db],
                            capture_output=True, text=True)
    assert report.returncode == 0, report.stderr
    warnings = [line for line in report.stdout.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and f"run {dropped} is declared LNS" in warnings[0], report.stdout
