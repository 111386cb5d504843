"""A small seeded batch of the IR fuzzer (tests/fuzz/fuzz_ir.py) in CI.

Every mutated model must either run or be refused with an ``OvpoolError``; a crash, a hang
or any other exception fails the test, which then shows the reproducer's files and traceback.
``pytest --long`` runs a bigger batch.
"""

import os
import subprocess
import sys

import pytest

import fuzz_ir

HERE = os.path.dirname(os.path.abspath(__file__))
FUZZER = os.path.join(HERE, "fuzz_ir.py")

CI_CASES = 500
LONG_CASES = 5000


def _run(arguments, timeout):
    return subprocess.run([sys.executable, FUZZER, *arguments], capture_output=True, text=True,
                          timeout=timeout)


def test_seeded_batch_has_nothing_but_ok_and_clean_errors(request, tmp_path):
    cases = LONG_CASES if request.config.getoption("--long") else CI_CASES
    fuzz_ir.assert_clean_batch(FUZZER, cases, ["--seed", "ci-1", "--timeout", "30",
                                               "--workers", "2"], tmp_path / "keep",
                               timeout=60 + cases, min_ok=cases // 20, min_clean=cases // 4)


def test_cases_are_deterministic():
    samples = fuzz_ir.load_samples()
    assert len(samples) >= 10
    for index in (0, 7, 123):
        assert fuzz_ir.make_case(samples, "s", index) == fuzz_ir.make_case(samples, "s", index)
    assert fuzz_ir.make_case(samples, "s", 1) != fuzz_ir.make_case(samples, "t", 1)


def test_unmutated_samples_run(tmp_path):
    for name, xml, weights in fuzz_ir.load_samples():
        path = fuzz_ir.write_case(str(tmp_path / name), xml, weights)
        assert fuzz_ir.run_model(path, 0) == "ok", name


@pytest.mark.parametrize("outcome", ["crash", "hang", "exception"])
def test_the_fuzzer_reports_what_it_must(tmp_path, monkeypatch, outcome):
    """The harness itself: a worker that dies, hangs or raises something else is counted in
    "anything else", and its reproducer is kept."""
    hook = tmp_path / "sitecustomize.py"
    behaviour = {
        "crash": "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)",
        "hang": "import time; time.sleep(60)",
        "exception": "raise KeyError('planted')",
    }[outcome]
    hook.write_text(
        "import os, sys\n"
        "if '--worker' in sys.argv:\n"
        "    import ovpool\n"
        "    def _planted(*args, **kwargs):\n"
        f"        {behaviour}\n"
        "    ovpool.read_model = _planted\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    keep = tmp_path / "keep"
    cases = 1 if outcome == "hang" else 2
    result = _run(["--cases", str(cases), "--seed", "x", "--keep", str(keep), "--timeout", "2",
                   "--workers", "1"], timeout=60)
    last = result.stdout.strip().splitlines()[-1]
    assert f"anything_else={cases}" in last and f"{outcome}={cases}" in last, result.stdout
    assert result.returncode == 1
    assert sorted(os.listdir(keep)) == [f"case-{i}" for i in range(cases)]
    assert (keep / "case-0" / "model.xml").exists()
    assert outcome in (keep / "case-0" / "info.txt").read_text()
