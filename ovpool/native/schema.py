"""``src/op_schema.hpp``, the native library's table of op versions, written from ovpool's.

The native OpenVINO extension reads the same facts as the Python side: which native op
versions it takes over, which of them have dilations and the indices output, which rounding
types each knows, the words auto_pad and index_element_type take, and the ONNX opset of the
Onnx* ops with the element types it accepts. They are written once, in :mod:`ovpool._opschema`,
:mod:`ovpool._vocabulary` and :mod:`ovpool.onnx`; this module renders them as C++.
The header is kept in the source tree, so that building the library with CMake alone needs no
Python; ``python -m ovpool.native.schema`` rewrites it, and the test suite checks that it is
current.
"""

import argparse
import pathlib
import re

from .. import onnx
from .._opschema import ONNX_OPSET, OPENVINO_OPS, OVPOOL_ONLY
from .._vocabulary import INDEX_TYPES, IR_AUTO_PADS, ROUNDING_TYPES

HEADER = pathlib.Path(__file__).resolve().parent / "src" / "op_schema.hpp"


def _words(words):
    return "{" + ", ".join(f'"{w}"' for w in words) + "}"


def _onnx_dtypes():
    """The element types (numpy names) each ONNX operator accepts at :data:`ONNX_OPSET`."""
    lines = []
    for version in OVPOOL_ONLY.values():
        name = re.sub(r"(?<!^)(?=[A-Z])", "_", version.converts).upper()
        dtypes = sorted(onnx.op_version(version.converts, ONNX_OPSET).dtypes)
        lines.append(f"inline constexpr const char* ONNX_{name}_DTYPES[] = {_words(dtypes)};")
    return lines


def render():
    """The text of ``src/op_schema.hpp``."""
    rows = []
    for (op, opset), version in OPENVINO_OPS.items():
        rounding = version.attribute("rounding_type")
        rows.append(f'    {{"{op}", "opset{opset}", {opset}, '
                    f'{"true" if version.attribute("dilations") else "false"}, '
                    f'{len(rounding.choices) if rounding else 0}, {version.outputs}}},')
    return "\n".join([
        "// The op versions the native library takes over, and the words their attributes take.",
        "// Generated from ovpool/_opschema.py and ovpool/_vocabulary.py by",
        "// `python -m ovpool.native.schema`: edit those, not this file.",
        "#pragma once",
        "",
        "namespace ovpool {",
        "namespace native {",
        "namespace schema {",
        "",
        "struct NativeVersion {",
        "    const char* name;",
        "    const char* opset;",
        "    int version;",
        "    bool dilations;   // has the dilations attribute",
        "    int roundings;    // knows the first `roundings` of ROUNDING_TYPES",
        "    int outputs;      // 2: values and indices",
        "};",
        "",
        "inline constexpr NativeVersion NATIVE_VERSIONS[] = {",
        *rows,
        "};",
        "",
        f"inline constexpr const char* ROUNDING_TYPES[] = {_words(ROUNDING_TYPES)};",
        f"inline constexpr const char* IR_AUTO_PADS[] = {_words(IR_AUTO_PADS)};",
        f"inline constexpr const char* INDEX_TYPES[] = {_words(INDEX_TYPES)};",
        "",
        "// The ai.onnx opset whose rules the Onnx* ops carry, and the element types (numpy names)",
        "// its operators accept.",
        f"inline constexpr int ONNX_OPSET = {ONNX_OPSET};",
        *_onnx_dtypes(),
        "",
        "}  // namespace schema",
        "}  // namespace native",
        "}  // namespace ovpool",
        "",
    ])


def main(argv=None):
    parser = argparse.ArgumentParser(description="Write ovpool/native/src/op_schema.hpp.")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the header is not current instead of writing it")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        raise SystemExit(0 if HEADER.read_text() == text else 1)
    HEADER.write_text(text)


if __name__ == "__main__":
    main()
