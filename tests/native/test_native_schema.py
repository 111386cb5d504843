"""The native library's table of op versions (src/op_schema.hpp) is the one ovpool/_opschema.py
renders: a version fact changed on the Python side reaches the C++ readers."""

from ovpool.native import schema


def test_op_schema_header_is_generated_from_the_python_table():
    assert schema.HEADER.read_text() == schema.render(), (
        "ovpool/native/src/op_schema.hpp is stale: run python -m ovpool.native.schema")


def test_header_lists_every_native_version_with_its_facts():
    text = schema.HEADER.read_text()
    # Hand-checked against OpenVINO's opset specs: MaxPool-1 has no dilations and one output,
    # MaxPool-8 knows no ceil_torch, AvgPool-16 has dilations.
    assert '{"MaxPool", "opset1", 1, false, 2, 1},' in text
    assert '{"MaxPool", "opset8", 8, true, 2, 2},' in text
    assert '{"AvgPool", "opset16", 16, true, 3, 1},' in text
    assert 'IR_AUTO_PADS[] = {"explicit", "same_upper", "same_lower", "valid", "notset"};' in text
