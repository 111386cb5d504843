"""``ovpool run --profile``: per-layer times from the engines' traces, latency percentiles."""

import functools
import io
import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from ovpool import cli, compile_model, profile as profile_module, read_model
from ovpool.profile import LayerTime, Profile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MODEL = os.path.join(ROOT, "samples", "models", "resnet_stem.xml")
NOT_RUN = {"Parameter", "Const", "Result"}


def run(*args):
    return subprocess.run([sys.executable, "-m", "ovpool", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=300,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})


def test_profile_sums_hand_given_records():
    profile = Profile("test")
    for seconds in (0.001, 0.003):
        profile.trace(LayerTime("a", "a", "AvgPool-opset1", seconds))
    profile.trace(LayerTime("b", "b", "Add-opset1", 0.004))
    for seconds in (0.010, 0.020, 0.030, 0.040):
        profile.add_run(seconds)
    assert [row[:3] for row in profile.layers()] == [("a", "AvgPool-opset1", 2),
                                                     ("b", "Add-opset1", 1)]
    assert [round(row[4], 6) for row in profile.layers()] == [50.0, 50.0]
    latency = profile.latency()
    # numpy's linear percentiles of 10, 20, 30, 40 ms: 25, 37, 39.7
    assert latency["p50_ms"] == pytest.approx(25.0) and latency["p90_ms"] == pytest.approx(37.0)
    assert latency["p99_ms"] == pytest.approx(39.7)
    assert latency["throughput_per_s"] == pytest.approx(4 / 0.1)


def test_runtime_trace_records_every_layer_with_its_time():
    model = read_model(MODEL)
    compiled = compile_model(model)
    records = []
    x = np.random.default_rng(0).standard_normal(
        [d.min for d in model.inputs[0].shape]).astype(np.float32)
    compiled.infer([x], trace=records.append)
    assert all(isinstance(r, LayerTime) and r.seconds >= 0 for r in records)
    # every executed step once (the Convert of a constant is folded at compile time)
    assert [r.name for r in records] == [step.layer.name for step in compiled.plan.steps]
    assert sorted(r.name for r in records) == ["global_mean", "scaled", "shifted", "stem_pool"]
    assert records[0].startswith("layer ")  # still the --debug line


@pytest.mark.parametrize("engine", ["ovpool", "openvino"])
def test_cli_profile_lists_every_layer_once_and_shares_sum_to_100(tmp_path, engine):
    report = tmp_path / "profile.json"
    result = run("run", MODEL, "--profile", "--repeat", "7", "--engine", engine,
                 "--json", str(report))
    assert result.returncode == 0, result.stderr
    assert "latency over 7 runs: p50" in result.stdout and "inferences/s" in result.stdout
    data = json.loads(report.read_text())
    names = [layer["name"] for layer in data["layers"]]
    assert len(names) == len(set(names))
    assert all(layer["calls"] == 7 for layer in data["layers"])
    assert sum(layer["share_percent"] for layer in data["layers"]) == pytest.approx(100.0)
    totals = [layer["total_ms"] for layer in data["layers"]]
    assert totals == sorted(totals, reverse=True)
    lat = data["latency"]
    assert lat["runs"] == 7 and lat["p50_ms"] <= lat["p90_ms"] <= lat["p99_ms"]
    model = read_model(MODEL)
    pooling = [layer.name for layer in model.layers if layer.type == "MaxPool"]
    if engine == "ovpool":
        assert sorted(names) == ["global_mean", "scaled", "shifted", "stem_pool"]
    else:
        # OpenVINO fuses elementwise layers; ovpool's extension node is counted as itself.
        assert [l["type"] for l in data["layers"] if l["name"] in pooling] == ["MaxPool-ovpool"]
    table = [line.split() for line in result.stdout.splitlines() if line.startswith("  ")]
    assert table[0][:2] == ["layer", "type"] and len(table) == 1 + len(names)


def test_cli_json_without_profile_and_profile_with_batches_are_refused():
    result = run("run", MODEL, "--json", "x.json")
    assert result.returncode == 2 and "--profile" in result.stderr
    result = run("run", MODEL, "--profile", "--batch-size", "1")
    assert result.returncode == 2 and "--batch-size" in result.stderr


class _Recorder(io.StringIO):
    """stderr, noting each write in the shared event list."""

    def __init__(self, events):
        super().__init__()
        self.events = events

    def write(self, text):
        if text:
            self.events.append("bar")
        return super().write(text)


class _Clock:
    """The CLI's ``time`` module, noting each perf_counter reading (a timed run is the span
    between two consecutive readings)."""

    def __init__(self, events):
        self.events = events

    def __getattr__(self, name):
        return getattr(time, name)

    def perf_counter(self):
        self.events.append("clock")
        return time.perf_counter()


@pytest.mark.parametrize("bar", ["late", "now", "every_run"])
def test_progress_bar_on_stderr_only_for_long_runs_and_never_inside_a_timed_run(
        monkeypatch, capsys, bar):
    # a run counts as long once it passes PROGRESS_AFTER_SECONDS: an hour makes none long, 0
    # every one; "every_run" also redraws the bar at each update, so an update moved into a
    # timed run would write there
    events = []
    stderr = _Recorder(events)
    monkeypatch.setattr(profile_module, "PROGRESS_AFTER_SECONDS", 3600.0 if bar == "late" else 0)
    if bar == "every_run":
        monkeypatch.setattr(profile_module, "progress", functools.partial(
            profile_module.progress, mininterval=0))
    monkeypatch.setattr(cli, "time", _Clock(events))
    monkeypatch.setattr(sys, "stderr", stderr)
    assert cli.main(["run", MODEL, "--profile", "--repeat", "5"]) == 0
    assert "latency over 5 runs" in capsys.readouterr().out
    assert events.count("clock") == 10
    if bar == "late":
        assert stderr.getvalue() == "" and "bar" not in events
        return
    assert "0/5 " in stderr.getvalue() and "run" in stderr.getvalue()
    if bar == "every_run":
        assert all(f"{k}/5 " in stderr.getvalue() for k in range(1, 6))
    timed = False
    for event in events:
        if event == "clock":
            timed = not timed
        else:
            assert not timed, events
