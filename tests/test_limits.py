"""Resource limits: ovpool._limits (the allocation check and the --memory-limit parser) and
the runtime refusing outputs and intermediates over the memory limit before allocating."""

import argparse
import contextlib

import numpy as np
import pytest

import ovpool
from ovpool._limits import check_allocation, memory_limit_argument, parse_memory_size
from ovpool.errors import BadArgumentError, BadDtypeError, BadShapeError, MemoryLimitError


@contextlib.contextmanager
def memory_limit(nbytes):
    saved = ovpool.get_memory_limit()
    ovpool.set_memory_limit(nbytes)
    try:
        yield
    finally:
        ovpool.set_memory_limit(saved)


@pytest.mark.parametrize("text, nbytes", [
    ("1", 1), ("4000000000", 4_000_000_000), ("512M", 512 << 20), ("512m", 512 << 20),
    ("2G", 2 << 30), ("2 GiB", 2 << 30), ("2GB", 2_000_000_000), ("1.5g", 3 << 29),
    ("64k", 65536), ("64KB", 64000), ("1T", 1 << 40), (".5M", 1 << 19), (" 3 MiB ", 3 << 20),
])
def test_parse_memory_size(text, nbytes):
    assert parse_memory_size(text) == nbytes
    assert memory_limit_argument(text) == nbytes


def test_parse_memory_size_percent_of_physical_memory():
    half = parse_memory_size("50%")
    assert 0 < half <= parse_memory_size("100%")


@pytest.mark.parametrize("text", ["", "0", "-1G", "2X", "G", "1e9", "0.1", "nan", "inf",
                                  "200%", "0%", "9" * 40, "1" + "0" * 25 + "T", "2G2", None, 5])
def test_parse_memory_size_refuses(text):
    with pytest.raises(BadArgumentError):
        parse_memory_size(text)
    if isinstance(text, str):
        with pytest.raises(argparse.ArgumentTypeError):
            memory_limit_argument(text)


def test_memory_limit_argument_in_argparse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--memory-limit", type=memory_limit_argument)
    assert parser.parse_args(["--memory-limit", "1G"]).memory_limit == 1 << 30


def test_check_allocation():
    with memory_limit(1000):
        check_allocation((10, 25), np.float32, "x")               # 1000 bytes: fits
        check_allocation((None, 10**12), np.float32, "x")         # unknown dims: later
        check_allocation(None, np.float32, "x")
        with pytest.raises(MemoryLimitError, match="1004 bytes"):
            check_allocation((251,), np.float32, "the output")
        with pytest.raises(MemoryLimitError, match="overflows"):
            check_allocation((2**40, 2**40), np.uint8, "x")
        with pytest.raises(MemoryLimitError, match="rank 65"):
            check_allocation((1,) * 65, np.uint8, "x")


ADAPTIVE_RUNTIME_SIZE = """<?xml version="1.0"?>
<net name="m" version="11">
  <layers>
    <layer id="0" name="x" type="Parameter" version="opset1">
      <data shape="1,2,?,?" element_type="f32"/>
      <output><port id="0" precision="FP32" names="x"><dim>1</dim><dim>2</dim><dim>-1</dim><dim>-1</dim></port></output>
    </layer>
    <layer id="1" name="size" type="Parameter" version="opset1">
      <data shape="2" element_type="{size_type}"/>
      <output><port id="0" names="size"><dim>2</dim></port></output>
    </layer>
    <layer id="2" name="pool" type="AdaptiveMaxPool" version="opset8">
      <data index_element_type="i64"/>
      <input><port id="0"><dim>1</dim><dim>2</dim><dim>-1</dim><dim>-1</dim></port><port id="1"><dim>2</dim></port></input>
      <output><port id="2" names="y"><dim>1</dim><dim>2</dim><dim>-1</dim><dim>-1</dim></port>
              <port id="3" names="i"><dim>1</dim><dim>2</dim><dim>-1</dim><dim>-1</dim></port></output>
    </layer>
    <layer id="3" name="y/sink" type="Result" version="opset1">
      <input><port id="0"><dim>1</dim><dim>2</dim><dim>-1</dim><dim>-1</dim></port></input>
    </layer>
    <layer id="4" name="i/sink" type="Result" version="opset1">
      <input><port id="0"><dim>1</dim><dim>2</dim><dim>-1</dim><dim>-1</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
    <edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
    <edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
    <edge from-layer="2" from-port="3" to-layer="4" to-port="0"/>
  </edges>
</net>
"""


def _compile(tmp_path, text):
    path = tmp_path / "model.xml"
    path.write_text(text)
    return ovpool.compile_model(str(path))


def test_output_size_known_only_at_run_time_is_checked_before_pooling(tmp_path):
    compiled = _compile(tmp_path, ADAPTIVE_RUNTIME_SIZE.format(size_type="i64"))
    x = np.ones((1, 2, 4, 4), np.float32)
    out = compiled([x, np.array([2, 3], np.int64)])
    assert out["y"].shape == (1, 2, 2, 3) and out["i"].shape == (1, 2, 2, 3)
    with memory_limit(1 << 20):
        for size in ([10**6, 10**6], [10**12, 1]):
            with pytest.raises(MemoryLimitError):
                compiled([x, np.array(size, np.int64)])
        with pytest.raises(ovpool.errors.OvpoolError):
            compiled([x, np.array([2**62, 2**62], np.int64)])
    with pytest.raises(ovpool.errors.OvpoolError):
        compiled([x, np.array([0, -3], np.int64)])


def test_float_output_size_is_refused_when_compiling(tmp_path):
    with pytest.raises(BadDtypeError, match="must be integers"):
        _compile(tmp_path, ADAPTIVE_RUNTIME_SIZE.format(size_type="f32"))


def test_dynamic_input_over_the_limit_is_refused_before_running(tmp_path):
    compiled = _compile(tmp_path, ADAPTIVE_RUNTIME_SIZE.format(size_type="i64"))
    x = np.ones((1, 2, 300, 300), np.float32)        # 720 kB
    with memory_limit(100_000):
        with pytest.raises(MemoryLimitError, match="memory limit"):
            compiled([x, np.array([2, 2], np.int64)])


def test_static_shapes_over_the_limit_are_refused_when_compiling(tmp_path):
    text = ADAPTIVE_RUNTIME_SIZE.replace('shape="1,2,?,?"', 'shape="1,2,100000,100000"')
    text = text.replace("<dim>-1</dim><dim>-1</dim></port></output>\n    </layer>\n    <layer id=\"1\"",
                        "<dim>100000</dim><dim>100000</dim></port></output>\n    </layer>\n    <layer id=\"1\"", 1)
    with memory_limit(1 << 30):
        with pytest.raises(MemoryLimitError, match="memory limit"):
            _compile(tmp_path, text.format(size_type="i64"))


def test_runtime_axes_inputs_must_be_small_integer_vectors(tmp_path):
    """A Reduce whose axes come from a Parameter: checked when compiling (type, rank) and
    when running (values), never handed to numpy unchecked."""
    text = """<?xml version="1.0"?>
<net name="m" version="11"><layers>
<layer id="0" name="x" type="Parameter" version="opset1"><data shape="2,3" element_type="f32"/>
<output><port id="0" names="x"><dim>2</dim><dim>3</dim></port></output></layer>
<layer id="1" name="axes" type="Parameter" version="opset1"><data shape="?" element_type="{t}"/>
<output><port id="0" names="axes"><dim>-1</dim></port></output></layer>
<layer id="2" name="r" type="ReduceMax" version="opset1"><data keep_dims="true"/>
<input><port id="0"><dim>2</dim><dim>3</dim></port><port id="1"><dim>-1</dim></port></input>
<output><port id="2" names="y"><dim>-1</dim><dim>-1</dim></port></output></layer>
<layer id="3" name="y/sink" type="Result" version="opset1"><input><port id="0"><dim>-1</dim><dim>-1</dim></port></input></layer>
</layers><edges>
<edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
<edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
<edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
</edges></net>"""
    with pytest.raises(BadDtypeError):
        _compile(tmp_path, text.format(t="f32"))
    compiled = _compile(tmp_path, text.format(t="i64"))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert compiled([x, np.array([1], np.int64)])["y"].tolist() == [[2.0], [5.0]]
    with pytest.raises(BadShapeError):
        compiled([x, np.zeros(1000, np.int64)])
    with pytest.raises(ovpool.errors.OvpoolError):
        compiled([x, np.array([5], np.int64)])
