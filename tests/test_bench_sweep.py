"""The sweep benchmark: its configurations cover what it claims, and a --quick run prints its
table and summary and writes the JSON it documents (no timing is checked)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import bench_sweep
import ovpool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "bench_sweep.py")


def test_configurations_cover_the_space():
    sweep = bench_sweep
    configs = sweep.configurations(160)
    assert len(configs) == 160 and [c["id"] for c in configs] == list(range(1, 161))
    assert configs == sweep.configurations(160)   # drawn the same way every run
    assert {c["dtype"] for c in configs} == set(sweep.DTYPES)
    assert {len(c["shape"]) - 2 for c in configs} == {1, 2, 3}
    fixed = [c for c in configs if "kernel" in c]
    assert {k for c in fixed for k in c["kernel"]} >= set(range(1, 8))
    assert {s for c in fixed for s in c["strides"]} >= {1, 2, 3, 4}
    assert any(s > k for c in fixed for k, s in zip(c["kernel"], c["strides"]))
    assert {d for c in fixed for d in c["dilations"]} == {1, 2, 3}
    assert {c["auto_pad"] for c in fixed} == {"explicit", "same_upper", "same_lower", "valid"}
    assert {c["rounding"] for c in fixed} == {"floor", "ceil", "ceil_torch"}
    assert {c["exclude_pad"] for c in fixed if c["op"] == "avg"} == {True, False}
    assert any(c["op"] == "onnx_avg" for c in configs)
    maxes = [c for c in configs if c["op"] == "max"]
    assert {(c["indices"], c["axis"]) for c in maxes if c["indices"] != "none"} == {
        ("i32", 0), ("i32", 2), ("i64", 0), ("i64", 2)}
    assert any(c["indices"] == "none" for c in maxes)
    adaptive = [c for c in configs if c["op"] in ("aavg", "amax")]
    assert any(o > s for c in adaptive for o, s in zip(c["output_size"], c["shape"][2:]))
    assert any(o < s for c in adaptive for o, s in zip(c["output_size"], c["shape"][2:]))
    assert any(c["op"] == "aavg" and set(c["output_size"]) == {1} for c in configs)
    assert any(tuple(c["kernel"]) == tuple(c["shape"][2:]) for c in fixed)
    assert any(np.prod(c["shape"][2:]) <= 64 and np.prod(c["shape"][:2]) > 1000 for c in configs)
    assert any(np.prod(c["shape"][:2]) < 2 for c in configs)
    assert any(c["shape"][-1] % 8 for c in configs)


def test_quick_run_prints_the_table_and_writes_json(tmp_path):
    path = tmp_path / "sweep.json"
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, SCRIPT, "--quick", "--count", "12", "--only",
                           "1,3,7,8", "--json", str(path)], capture_output=True, text=True,
                          env=env, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # the timed ovpool is this checkout's, whatever else is on the path
    assert lines[1] == "ovpool: %s, kernel build %s" % (os.path.join(ROOT, "ovpool"),
                                                        ovpool.kernel_variant())
    assert lines[-2].startswith("ovpool/roofline: geomean ")
    assert lines[-2].endswith("(4 configurations)")
    assert lines[-1].startswith("ovpool/best_peer: ")
    assert any(line.startswith("ten worst against the roofline: #") for line in lines)
    head = next(i for i, line in enumerate(lines) if line.lstrip().startswith("#  family"))
    rows = lines[head + 2:head + 6]
    assert [row.split()[0] for row in rows] == ["1", "3", "7", "8"]
    doc = json.loads(path.read_text())
    assert [c["id"] for c in doc["configurations"]] == [1, 3, 7, 8]
    assert doc["quick"] is True and doc["threads"] == 2
    for c in doc["configurations"]:
        assert c["times_ms"]["ovpool"] > 0 and c["times_ms"]["roofline"] > 0
        assert c["ratios"]["ovpool/roofline"] == c["times_ms"]["ovpool"] / c["times_ms"]["roofline"]
        assert c["bytes"] > 0 and c["config"].startswith(c["settings"]["dtype"])
    roof = doc["summary"]["ovpool/roofline"]
    ratios = sorted(c["ratios"]["ovpool/roofline"] for c in doc["configurations"])
    assert roof["worst"] == ratios[-1] and roof["count"] == 4
    assert min(ratios) <= roof["geomean"] <= ratios[-1]
    assert sorted(doc["worst_roofline"]) == [1, 3, 7, 8]


def test_onnxruntime_sessions_of_the_sweep_do_not_spin():
    # A spinning onnxruntime worker outlasts the pause between the engines' batches and takes
    # a core from the batch after it; the sweep's sessions turn that off, other runs keep
    # onnxruntime's default.
    import harness
    assert harness.ort is not None, "onnxruntime is part of the test requirements"
    quiet = harness.ort_options(2, spinning=False)
    assert quiet.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert quiet.intra_op_num_threads == 2
    default = harness.ort_options(2)
    with pytest.raises(RuntimeError, match="does not have configuration"):
        default.get_session_config_entry("session.intra_op.allow_spinning")
    cfg = next(c for c in bench_sweep.configurations(160) if c["op"] == "onnx_avg")
    x = bench_sweep._input(cfg)
    out_shapes = [o.shape for o in bench_sweep.ovpool_outputs(cfg, x)]
    made = []
    real = harness.ort.InferenceSession

    def recording(model, options, **kw):
        made.append(options.get_session_config_entry("session.intra_op.allow_spinning"))
        return real(model, options, **kw)
    harness.ort.InferenceSession = recording
    try:
        label, fn, outs = bench_sweep.onnxruntime_peer(cfg, x, out_shapes, 2)
    finally:
        harness.ort.InferenceSession = real
    fn()
    assert made == ["0"]
    np.testing.assert_allclose(outs[0].astype(np.float64),
                               bench_sweep.ovpool_call(cfg, x).astype(np.float64),
                               rtol=2e-3, atol=2e-3)
