"""The IR reader: what it parses from OpenVINO-written files, and every validation rule on
hand-written bad IRs (each must give its own clear error, quickly, reading nothing outside
the model)."""

import os
import time

import ml_dtypes
import numpy as np
import pytest

import ovpool
from ovpool.errors import MemoryLimitError, ModelError, OvpoolError, UnsupportedError
from ovpool.ir import Dimension, read_model

from helpers import GOOD, WEIGHTS, edit, write

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "..", "samples", "models")


def error_of(tmp_path, xml, weights=WEIGHTS, compile_too=False, kind=OvpoolError):
    path = write(tmp_path, xml, weights)
    with pytest.raises(kind) as info:
        model = read_model(path)
        if compile_too:
            ovpool.compile_model(model)
    return str(info.value)


# ---- what a good file gives --------------------------------------------------------------

def test_good_model_parses_names_types_shapes_attributes_and_weights(tmp_path):
    model = read_model(write(tmp_path, GOOD))
    assert model.ir_version == 11 and model.name == "good"
    assert [t.name for t in model.inputs] == ["x"]
    assert str(model.inputs[0].shape) == "[?,2,4,4]" and model.inputs[0].dtype == np.float32
    assert [t.name for t in model.outputs] == ["pooled", "w"]
    pool = model.layer("1")
    assert (pool.type, pool.opset, pool.line) == ("MaxPool", 1, 8)
    assert pool.attributes.ints("kernel") == (2, 2)
    assert pool.outputs[0].names == ("pooled",) and pool.outputs[0].element_type == "f32"
    np.testing.assert_array_equal(model.layer("3").constant, [1.5, -2.0, 3.25])
    assert not model.layer("3").constant.flags.writeable
    assert model.rt_info["OpenVINO Runtime"] == "test"


def test_dimension_spellings(tmp_path):
    xml = edit("<dim>-1</dim><dim>2</dim><dim>4</dim><dim>4</dim></port></output>",
               "<dim>?</dim><dim>1..10</dim><dim>4..</dim><dim>4</dim></port></output>")
    model = read_model(write(tmp_path, xml))
    dims = model.layer("0").outputs[0].dims
    assert list(dims) == [Dimension(0, None), Dimension(1, 10), Dimension(4, None),
                          Dimension(4, 4)]
    assert str(dims) == "[?,1..10,4..,4]"
    assert dims.admits((7, 10, 4, 4)) and not dims.admits((7, 11, 4, 4))


def test_every_sample_parses():
    names = sorted(f for f in os.listdir(SAMPLES) if f.endswith(".xml"))
    assert len(names) >= 10
    for name in names:
        model = read_model(os.path.join(SAMPLES, name))
        assert model.inputs and model.outputs, name


def test_weights_compressed_to_f16_are_read_as_f16():
    model = read_model(os.path.join(SAMPLES, "resnet_stem_fp16_weights.xml"))
    consts = [l for l in model.layers if l.type == "Const" and l.name.endswith("_compressed")]
    assert len(consts) == 2 and all(l.constant.dtype == np.float16 for l in consts)
    decompression = [l for l in model.layers if "decompression" in l.rt_info]
    assert decompression and all(l.type == "Convert" for l in decompression)


@pytest.mark.parametrize("element_type,dtype", [
    ("f64", np.float64), ("f32", np.float32), ("f16", np.float16), ("i64", np.int64),
    ("i32", np.int32), ("i16", np.int16), ("i8", np.int8), ("u64", np.uint64),
    ("u32", np.uint32), ("u16", np.uint16), ("u8", np.uint8), ("boolean", np.bool_),
    ("bf16", "bfloat16")])
def test_const_element_types(tmp_path, element_type, dtype):
    if dtype == "bfloat16":
        dtype = ml_dtypes.bfloat16
    values = np.array([1, 0, 1], dtype=dtype)
    xml = edit('element_type="f32" shape="3" offset="0" size="12"',
               f'element_type="{element_type}" shape="3" offset="0" size="{values.nbytes}"')
    xml = xml.replace('<port id="0" precision="FP32" names="w">', '<port id="0" names="w">')
    xml = xml.replace('<input><port id="0" precision="FP32"><dim>3</dim>', '<input><port id="0"><dim>3</dim>')
    model = read_model(write(tmp_path, xml, values.tobytes()))
    constant = model.layer("3").constant
    assert constant.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(constant.astype(np.float64), [1, 0, 1])
    compiled = ovpool.compile_model(model)
    out = compiled(np.zeros((1, 2, 4, 4), np.float32))
    assert out["w"].dtype == np.dtype(dtype)


def test_model_without_const_needs_no_bin(tmp_path):
    xml = GOOD.split('    <layer id="3"')[0] + "  </layers>\n  <edges>\n" + \
        '    <edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>\n' + \
        '    <edge from-layer="1" from-port="1" to-layer="2" to-port="0"/>\n  </edges>\n</net>\n'
    model = read_model(write(tmp_path, xml, weights=None))
    assert model.bin_path is None and [t.name for t in model.outputs] == ["pooled"]


# ---- security ----------------------------------------------------------------------------

BOMB = """<?xml version="1.0"?>
<!DOCTYPE net [
 <!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">
 <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
 <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
 <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
 <!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">
 <!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">
 <!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">
]>
""" + GOOD.split("\n", 1)[1].replace('name="x" type="Parameter"', 'name="&g;" type="Parameter"')


def test_billion_laughs_is_refused_quickly(tmp_path):
    start = time.perf_counter()
    message = error_of(tmp_path, BOMB, kind=ModelError)
    assert time.perf_counter() - start < 2
    assert "DOCTYPE" in message and "model.xml:2" in message


def test_external_entity_reads_no_file(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    xml = (f'<?xml version="1.0"?>\n<!DOCTYPE net [<!ENTITY leak SYSTEM "file://{secret}">]>\n'
           + GOOD.split("\n", 1)[1].replace('name="x" type="Parameter"',
                                            'name="&leak;" type="Parameter"'))
    message = error_of(tmp_path, xml, kind=ModelError)
    assert "DOCTYPE" in message and "TOP-SECRET" not in message


def test_doctype_in_utf16_file_is_refused_after_parsing(tmp_path):
    # The byte scan cannot see "<!DOCTYPE" in UTF-16; the parsed tree's docinfo must catch it.
    text = ('<?xml version="1.0" encoding="UTF-16"?>\n<!DOCTYPE net [<!ENTITY x "y">]>\n'
            + GOOD.split("\n", 1)[1])
    message = error_of(tmp_path, text.encode("utf-16"), kind=ModelError)
    assert "DOCTYPE" in message


def test_malformed_xml_names_the_line(tmp_path):
    message = error_of(tmp_path, edit("</layers>", "</layerz>"), kind=ModelError)
    assert "model.xml:" in message and "not well-formed" in message


# ---- structure ---------------------------------------------------------------------------

def test_duplicate_layer_id(tmp_path):
    message = error_of(tmp_path, edit('<layer id="2" name="pooled/sink"', '<layer id="1" name="pooled/sink"'),
                       kind=ModelError)
    assert "duplicate layer id 1" in message and "name='pooled/sink'" in message
    assert "first used at line 8" in message


def test_edge_to_missing_layer(tmp_path):
    message = error_of(tmp_path, edit('to-layer="2" to-port="0"', 'to-layer="9" to-port="0"'),
                       kind=ModelError)
    assert "to-layer 9 does not exist" in message and "model.xml:" in message


def test_edge_from_missing_port(tmp_path):
    message = error_of(tmp_path, edit('from-layer="1" from-port="1"', 'from-layer="1" from-port="5"'),
                       kind=ModelError)
    assert "has no output port 5" in message and "[1]" in message


def test_edge_to_missing_port(tmp_path):
    message = error_of(tmp_path, edit('to-layer="1" to-port="0"', 'to-layer="1" to-port="3"'),
                       kind=ModelError)
    assert "has no input port 3" in message


def test_two_edges_into_one_port(tmp_path):
    xml = edit("  </edges>", '    <edge from-layer="3" from-port="0" to-layer="1" to-port="0"/>\n  </edges>')
    message = error_of(tmp_path, xml, kind=ModelError)
    assert "already has an edge" in message


def test_unconnected_input(tmp_path):
    message = error_of(tmp_path, edit('    <edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>\n', ""),
                       kind=ModelError)
    assert "input port 0 is not connected" in message
    assert "layer id=1 name='pool' type=MaxPool version=opset1" in message


def test_cycle(tmp_path):
    # pool feeds itself through a second MaxPool: 1 -> 5 -> 1.
    xml = edit('<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>',
               '<edge from-layer="5" from-port="1" to-layer="1" to-port="0"/>\n'
               '    <edge from-layer="1" from-port="1" to-layer="5" to-port="0"/>\n'
               '    <edge from-layer="0" from-port="0" to-layer="6" to-port="0"/>')
    extra = """    <layer id="5" name="loop" type="MaxPool" version="opset1">
      <data kernel="1, 1" strides="1, 1" pads_begin="0, 0" pads_end="0, 0"/>
      <input><port id="0"><dim>-1</dim><dim>2</dim><dim>2</dim><dim>2</dim></port></input>
      <output><port id="1"><dim>-1</dim><dim>2</dim><dim>2</dim><dim>2</dim></port></output>
    </layer>
    <layer id="6" name="x/sink" type="Result" version="opset1">
      <input><port id="0"><dim>-1</dim><dim>2</dim><dim>4</dim><dim>4</dim></port></input>
    </layer>
  </layers>"""
    message = error_of(tmp_path, edit("  </layers>", extra, xml), kind=ModelError)
    assert "cycle" in message and "'pool'" in message and "'loop'" in message


def test_no_result(tmp_path):
    xml = GOOD.replace('type="Result"', 'type="Relu"')
    message = error_of(tmp_path, xml, kind=ModelError)
    assert "no Result" in message


def test_unsupported_ir_version(tmp_path):
    message = error_of(tmp_path, edit('version="11"', 'version="7"'), kind=UnsupportedError)
    assert "IR version '7'" in message and "10, 11" in message


def test_bad_dimension_text(tmp_path):
    message = error_of(tmp_path, edit("<dim>4</dim></port></output>", "<dim>four</dim></port></output>"),
                       kind=ModelError)
    assert "'four'" in message and "name='x'" in message


# ---- checks that need shape inference (done when compiling) ------------------------------

def test_declared_dims_contradict_inferred_shape(tmp_path):
    xml = edit('names="pooled"><dim>-1</dim><dim>2</dim><dim>2</dim><dim>2</dim>',
               'names="pooled"><dim>-1</dim><dim>2</dim><dim>3</dim><dim>2</dim>')
    message = error_of(tmp_path, xml, compile_too=True, kind=ModelError)
    assert "declared dims [?,2,3,2]" in message and "inferred shape [?,2,2,2]" in message
    assert "name='pool' type=MaxPool version=opset1" in message and "model.xml:8" in message


def test_unknown_type_lists_supported_types(tmp_path):
    message = error_of(tmp_path, GOOD.replace('type="MaxPool"', 'type="Softmax"'),
                       compile_too=True, kind=UnsupportedError)
    assert "cannot run layer type Softmax" in message and "AvgPool" in message and "ReduceMean" in message


def test_unknown_version_lists_supported_versions(tmp_path):
    message = error_of(tmp_path, GOOD.replace('version="opset1">\n      <data kernel', 'version="opset3">\n      <data kernel'),
                       compile_too=True, kind=UnsupportedError)
    assert "MaxPool versions opset1, opset8, opset14, not opset3" in message


def test_bad_attribute_value_is_named(tmp_path):
    message = error_of(tmp_path, edit('strides="2, 2"', 'strides="2, x"'), compile_too=True)
    assert "attribute 'strides' is '2, x'" in message and "name='pool'" in message


def test_invalid_attribute_found_by_shape_inference(tmp_path):
    message = error_of(tmp_path, edit('strides="2, 2"', 'strides="0, 2"'), compile_too=True)
    assert "strides" in message and "[0, 2]" in message and "type=MaxPool" in message


# ---- the .bin ----------------------------------------------------------------------------

def test_truncated_bin(tmp_path):
    message = error_of(tmp_path, GOOD, weights=WEIGHTS[:7], kind=ModelError)
    assert "offset=0 size=12" in message and "7 bytes" in message and "name='weights'" in message


def test_offset_past_the_end(tmp_path):
    message = error_of(tmp_path, edit('offset="0" size="12"', 'offset="4" size="12"'), kind=ModelError)
    assert "offset=4 size=12" in message and "12 bytes" in message


def test_negative_offset(tmp_path):
    message = error_of(tmp_path, edit('offset="0" size="12"', 'offset="-4" size="12"'), kind=ModelError)
    assert "offset=-4" in message


def test_size_disagrees_with_shape(tmp_path):
    message = error_of(tmp_path, edit('offset="0" size="12"', 'offset="0" size="8"'), kind=ModelError)
    assert "attribute 'size' is 8" in message and "needs 12 bytes" in message


def test_missing_bin(tmp_path):
    message = error_of(tmp_path, GOOD, weights=None, kind=ModelError)
    assert "cannot open weights file" in message and "model.bin" in message


def test_const_over_memory_limit_is_refused_before_reading(tmp_path):
    xml = edit('shape="3" offset="0" size="12"', 'shape="1000000, 1000000" offset="0" size="4000000000000"')
    message = error_of(tmp_path, xml, kind=MemoryLimitError)
    assert "4000000000000 bytes" in message and "memory limit" in message


def test_const_element_count_overflow(tmp_path):
    xml = edit('shape="3" offset="0" size="12"',
               'shape="4294967296, 4294967296, 4294967296" offset="0" size="12"')
    message = error_of(tmp_path, xml, kind=MemoryLimitError)
    assert "overflows" in message


def test_packed_element_type_is_unsupported(tmp_path):
    message = error_of(tmp_path, edit('element_type="f32" shape="3"', 'element_type="u1" shape="3"'),
                       kind=UnsupportedError)
    assert "'u1' is not supported" in message and "attribute 'element_type'" in message
    assert "name='weights' type=Const" in message
