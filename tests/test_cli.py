"""The ``ovpool`` command, run the way users run it: ``python -m ovpool ...`` in a subprocess."""

import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MODELS = os.path.join(ROOT, "samples", "models")
INPUTS = os.path.join(ROOT, "samples", "inputs")
EXPECTED = os.path.join(ROOT, "samples", "expected")


def ovpool(*args, code=None):
    command = code is not None and [sys.executable, "-c", code, *args] or \
        [sys.executable, "-m", "ovpool", *args]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})


def model(name):
    return os.path.join(MODELS, f"{name}.xml")


def test_run_the_main_job_sample():
    result = ovpool("run", model("resnet_stem"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.split()[:3] == ["embedding", "1x3", "float32"] for line in lines), result.stdout
    assert "inference time:" in result.stdout and result.stderr == ""


def test_run_with_input_and_npz_output_matches_expected(tmp_path):
    out = tmp_path / "out.npz"
    result = ovpool("run", model("max_pool_8"), "--input", os.path.join(INPUTS, "max_pool_8.npy"),
                    "--output", str(out), "--repeat", "3", "--threads", "1")
    assert result.returncode == 0, result.stderr
    assert "over 3 runs" in result.stdout
    written, expected = np.load(out), np.load(os.path.join(EXPECTED, "max_pool_8.npz"))
    assert sorted(written.files) == ["indices", "pooled"]
    for key in expected.files:
        np.testing.assert_array_equal(written[key], expected[key])


def test_run_named_input_from_npz_and_table_statistics(tmp_path):
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    np.savez(tmp_path / "in.npz", input=x)
    result = ovpool("run", model("onnx_global_max_pool"), "--input", f"input={tmp_path / 'in.npz'}")
    assert result.returncode == 0, result.stderr
    row = next(line.split() for line in result.stdout.splitlines() if line.startswith("pooled"))
    # Per-plane maxima of 0..119 in planes of 20: 19, 39, ..., 119 (mean 69).
    assert row[:6] == ["pooled", "2x3x1x1", "float32", "19", "119", "69"]


def test_run_dynamic_model_needs_a_shape_then_runs():
    result = ovpool("run", model("pooling_chain"))
    assert result.returncode == 2
    assert "dynamic shape [?,3,32,32]" in result.stderr and "--shape" in result.stderr
    result = ovpool("run", model("pooling_chain"), "--shape", "input=4,3,32,32")
    assert result.returncode == 0, result.stderr
    assert "4x3x3x3" in result.stdout


def test_debug_prints_a_layer_trace():
    result = ovpool("run", model("resnet_stem"), "--debug")
    assert result.returncode == 0
    assert "MaxPool-opset8" in result.stderr and "->" in result.stderr


def test_info_lists_layers_and_flags_what_cannot_run(tmp_path):
    result = ovpool("info", model("pooling_chain"))
    assert result.returncode == 0, result.stderr
    assert "IR version 11" in result.stdout and "input  f32  [?,3,32,32]" in result.stdout
    assert "AdaptiveAvgPool" in result.stdout and "ovpool can run this model" in result.stdout
    text = open(model("max_pool_1")).read().replace('type="MaxPool"', 'type="Softmax"')
    (tmp_path / "m.xml").write_text(text)
    (tmp_path / "m.bin").write_bytes(b"")
    result = ovpool("info", str(tmp_path / "m.xml"))
    assert result.returncode == 0
    assert "cannot run" in result.stdout and "supported types:" in result.stdout


@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["info", "--help"]])
def test_help(args):
    result = ovpool(*args)
    assert result.returncode == 0 and "usage: ovpool" in result.stdout


def _one_line_error(result, *words):
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ovpool: error:"), result.stderr
    for word in words:
        assert word in lines[0], lines[0]
    assert "Traceback" not in result.stderr


def test_missing_model_is_exit_2():
    _one_line_error(ovpool("run", "nope.xml"), "cannot read model nope.xml")


def test_bad_model_is_exit_2(tmp_path):
    (tmp_path / "bomb.xml").write_text('<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY a "a">]>\n<net/>')
    _one_line_error(ovpool("info", str(tmp_path / "bomb.xml")), "DOCTYPE")


def test_input_of_the_wrong_dtype_is_exit_2(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((1, 3, 7, 8), np.float64))
    _one_line_error(ovpool("run", model("max_pool_1"), "--input", str(tmp_path / "x.npy")),
                    "float64", "f32")


def test_unreadable_input_is_exit_2(tmp_path):
    (tmp_path / "x.npy").write_text("not numpy")
    _one_line_error(ovpool("run", model("max_pool_1"), "--input", str(tmp_path / "x.npy")),
                    "cannot read input file")


def test_unknown_input_name_is_exit_2(tmp_path):
    _one_line_error(ovpool("run", model("max_pool_1"), "--shape", "nope=1,2"), "nope")


def test_bad_arguments_are_exit_2():
    result = ovpool("run", model("max_pool_1"), "--threads", "0")
    assert result.returncode == 2 and "positive integer" in result.stderr
    assert ovpool("frobnicate").returncode == 2


INTERNAL_ERROR = (
    "import sys, ovpool.cli as cli\n"
    "def boom(args, out): raise RuntimeError('kaboom')\n"
    "cli._command_info = boom\n"
    "sys.exit(cli.main(sys.argv[1:]))\n")


def test_internal_error_is_exit_1_with_a_traceback_only_under_debug():
    result = ovpool("info", model("max_pool_1"), code=INTERNAL_ERROR)
    assert result.returncode == 1
    assert result.stderr.strip() == ("ovpool: internal error: RuntimeError: kaboom (rerun with "
                                     "--debug for a traceback)")
    result = ovpool("info", model("max_pool_1"), "--debug", code=INTERNAL_ERROR)
    assert result.returncode == 1 and "Traceback" in result.stderr


# ---- the OpenVINO bridge: --engine and check --------------------------------------------------

def test_run_engine_openvino_matches_engine_ovpool(tmp_path):
    outputs = {}
    for engine in ("ovpool", "openvino"):
        out = tmp_path / f"{engine}.npz"
        result = ovpool("run", model("pooling_chain"), "--engine", engine, "--input",
                        os.path.join(INPUTS, "pooling_chain.npy"), "--output", str(out))
        assert result.returncode == 0, result.stderr
        assert f"engine: {engine}" in result.stdout
        outputs[engine] = np.load(out)
    assert sorted(outputs["openvino"].files) == ["features", "mean"]
    for key in ("features", "mean"):
        np.testing.assert_allclose(outputs["openvino"][key], outputs["ovpool"][key], rtol=1e-5,
                                   atol=1e-6)


def test_check_agrees_on_a_sample_and_reports_each_output():
    result = ovpool("check", model("pooling_chain"), "--shape", "input=2,3,32,32")
    assert result.returncode == 0, result.stdout + result.stderr
    rows = [line.split() for line in result.stdout.splitlines() if line.startswith(("features", "mean"))]
    assert len(rows) == 4 and all(row[-1] == "ok" for row in rows)
    assert "all engines agree" in result.stdout


def test_check_exit_3_when_the_engines_disagree(tmp_path):
    # Average of a window with no input element: OpenVINO NaN, ovpool 0 (README, Differences).
    import openvino as ov
    from openvino import opset1, opset8
    param = opset8.parameter([1, 1, 4], ov.Type.f32, name="x")
    node = opset1.avg_pool(param, [2], [0], [1], [2], True, "ceil")
    ov.save_model(ov.Model([node.output(0)], [param]), str(tmp_path / "m.xml"))
    np.save(tmp_path / "x.npy", np.arange(4, dtype=np.float32).reshape(1, 1, 4))
    result = ovpool("check", str(tmp_path / "m.xml"), "--input", str(tmp_path / "x.npy"))
    assert result.returncode == 3, result.stdout + result.stderr
    assert "DIFFERENT" in result.stdout and "the engines disagree" in result.stdout


def test_check_an_ovpool_opset_model_against_openvino_running_ovpool():
    # OpenVINO alone cannot read OnnxMaxPool; the runtime is checked against the bridge, and
    # both against ONNX Runtime's outputs stored with the sample.
    name = "ovpool_onnx_max_pool_storage_order"
    result = ovpool("check", model(name), "--input", os.path.join(INPUTS, f"{name}.npy"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "openvino: skipped, it cannot read the ovpool-opset layer(s) 1 (OnnxMaxPool-ovpool)" \
        in result.stdout
    rows = [line.split() for line in result.stdout.splitlines()
            if line.startswith(("pooled", "indices"))]
    assert [row[3:6] for row in rows] == [["ovpool", "vs", "openvino+ovpool"]] * 2
    assert all(row[-1] == "ok" for row in rows)


NO_OPENVINO = (
    "import sys\n"
    "sys.modules['openvino'] = None  # as if it were not installed\n"
    "import ovpool, ovpool.cli as cli\n"
    "sys.exit(cli.main(sys.argv[1:]))\n")


def test_engine_openvino_without_openvino_says_how_to_install():
    result = ovpool("run", model("max_pool_1"), "--engine", "openvino", code=NO_OPENVINO)
    _one_line_error(result, "--engine openvino needs the openvino package",
                    "pip install 'ovpool[openvino]'")
    _one_line_error(ovpool("check", model("max_pool_1"), code=NO_OPENVINO), "pip install")
    result = ovpool("run", model("max_pool_1"), code=NO_OPENVINO)   # auto: ovpool runs it
    assert result.returncode == 0 and "engine: ovpool" in result.stdout, result.stderr


def test_auto_without_openvino_lists_the_layers_ovpool_cannot_run(tmp_path):
    text = open(model("max_pool_1")).read().replace('type="MaxPool"', 'type="Softmax"')
    (tmp_path / "m.xml").write_text(text)
    (tmp_path / "m.bin").write_bytes(b"")
    result = ovpool("run", str(tmp_path / "m.xml"), code=NO_OPENVINO)
    _one_line_error(result, "cannot run layer(s)", "(Softmax-opset1)", "pip install")


def test_output_never_overwrites_an_input_and_memory_limit_is_applied(tmp_path):
    import shutil

    xml = tmp_path / "m.xml"
    shutil.copy(model("max_pool_1"), xml)
    shutil.copy(os.path.join(MODELS, "max_pool_1.bin"), tmp_path / "m.bin")
    x = np.load(os.path.join(INPUTS, "max_pool_1.npy"))
    np.save(tmp_path / "x.npy", x)
    before = (tmp_path / "x.npy").read_bytes()
    result = ovpool("run", str(xml), "--input", str(tmp_path / "x.npy"),
                    "--output", str(tmp_path / "x.npy"))
    assert result.returncode == 2 and "refusing to overwrite" in result.stderr
    assert (tmp_path / "x.npy").read_bytes() == before
    result = ovpool("run", str(xml), "--input", str(tmp_path / "x.npy"), "--memory-limit", "16")
    assert result.returncode == 2 and "memory limit of 16 bytes" in result.stderr
    result = ovpool("run", str(xml), "--input", str(tmp_path / "x.npy"),
                    "--output", str(tmp_path / "out.npz"))
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path)) == ["m.bin", "m.xml", "out.npz", "x.npy"]  # no temp left
