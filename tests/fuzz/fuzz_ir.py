#!/usr/bin/env python3
"""Mutation fuzzer for ovpool's IR reader and runtime.

Each case takes one of the valid sample IRs in ``samples/models``, applies one to three
mutations (attributes, dims, edges, ids, element types, Const offsets and sizes, truncated or
corrupted .xml and .bin, random bytes, deep nesting, huge attribute lists, unicode names,
DOCTYPE / entity / XInclude injections, layer duplication, ...) and runs
``read_model`` + ``compile_model`` + ``infer`` (on seeded random inputs) in a worker
subprocess. Outcomes:

* ``ok``: the model ran;
* ``clean``: an ``ovpool.errors.OvpoolError`` was raised;
* anything else: ``crash`` (the worker died, e.g. by a signal), ``hang`` (no answer within
  ``--timeout`` seconds: the worker is killed) or ``exception`` (any other exception type,
  including a builtin ``MemoryError``: the worker runs with a small ovpool memory limit and an
  address-space cap, so an allocation that skips the limit shows up here).

Workers run many cases each and are restarted after a crash or hang. Cases are deterministic
in ``(--seed, case number)``: ``--only K`` reruns case K alone, and ``--keep DIR`` saves the
files of every case in "anything else" (``DIR/case-K/model.xml``, ``model.bin``, ``info.txt``).
The last line printed is the counts, e.g.::

    cases=20000 ok=1234 clean=18766 anything_else=0 crash=0 hang=0 exception=0

and the exit status is 1 when anything_else is not 0.

Usage: python tests/fuzz/fuzz_ir.py --cases 20000 --seed 1 --keep /tmp/fuzz-keep
"""

import argparse
import json
import os
import random
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.normpath(os.path.join(HERE, "..", "..", "samples", "models"))

# ---------------------------------------------------------------------------------------------
# mutations: each takes (rng, xml bytes, bin bytes or None) and returns the new pair plus a
# short description. They never raise (a failing mutation falls back to a byte flip).
# ---------------------------------------------------------------------------------------------

INTERESTING_INTS = [
    "0", "1", "-1", "2", "3", "7", "-2", "255", "256", "65535", "65536", "2147483647",
    "2147483648", "-2147483648", "4294967296", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "-9223372036854775809", "18446744073709551616", "99999999999",
    "1" + "0" * 40, "9" * 5000, "007", " 3 ", "+3", "3.0", "1e3", "0x10", "nan", "inf", "",
    "٣", "²", "１", "3\u00a0", "-0", "--1", "1,", ",1", ",", "1,,2",
]
INTERESTING_STRINGS = [
    "", " ", "explicit", "same_upper", "same_lower", "valid", "notset", "floor", "ceil",
    "ceil_torch", "true", "false", "True", "1", "0", "yes", "i32", "i64", "f32", "numpy",
    "none", "pdpd", "\u202e", "名前", "😀" * 50, "a" * 100000, "\\,", "x\\,y,z", "&amp;&lt;",
    "opset1", "opset8", "opset14", "opset16", "opset999", "opset", "opset-1", "opset٣",
]
ELEMENT_TYPES = ["f32", "f16", "bf16", "f64", "i8", "u8", "i16", "u16", "i32", "u32", "i64",
                 "u64", "boolean", "u1", "u4", "i4", "nf4", "f8e4m3", "f8e5m2", "string",
                 "dynamic", "undefined", "", "F32", "xyz", "f32 "]
PRECISIONS = ["FP32", "FP16", "BF16", "FP64", "I8", "U8", "I16", "I32", "I64", "U64", "BOOL",
              "U1", "UNSPECIFIED", "", "fp32", "Q78"]
OP_TYPES = ["Parameter", "Const", "Result", "AvgPool", "MaxPool", "AdaptiveAvgPool",
            "AdaptiveMaxPool", "Convert", "ConvertLike", "ReduceMean", "ReduceMax",
            "ReduceMin", "ReduceSum", "Transpose", "Reshape", "Squeeze", "Unsqueeze",
            "Concat", "ShapeOf", "Abs", "Sqrt", "Power", "Multiply", "Add", "Subtract",
            "Divide", "Maximum", "Minimum", "Relu", "Softmax", "", "parameter"]
DATA_ATTRIBUTES = ["kernel", "strides", "pads_begin", "pads_end", "dilations", "auto_pad",
                   "rounding_type", "exclude-pad", "index_element_type", "axis", "keep_dims",
                   "special_zero", "shape", "element_type", "offset", "size",
                   "destination_type", "auto_broadcast", "m_pythondiv", "output_type",
                   "allow_axis_skip"]
DIM_VALUES = ["-1", "?", "0", "1", "2", "3", "4", "8", "16", "1..10", "2..", "..4", "5..2",
              "1..", "..", "100000", "4294967296", "9223372036854775807", "99999999999999999999",
              "-2", "x", "", "1.5", "1 ", "٣"]


def _parse(xml):
    from lxml import etree
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    return etree.fromstring(xml, parser)


def _serialize(root):
    from lxml import etree
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def _elements(root, tag=None):
    return [e for e in root.iter(tag) if isinstance(e.tag, str)]


def _mutate_number_list(rng, value):
    parts = [p.strip() for p in value.split(",")]
    choice = rng.randrange(6)
    if choice == 0 and parts:
        parts[rng.randrange(len(parts))] = rng.choice(INTERESTING_INTS)
    elif choice == 1:
        parts.append(rng.choice(INTERESTING_INTS))
    elif choice == 2 and parts:
        parts.pop(rng.randrange(len(parts)))
    elif choice == 3:
        parts = [rng.choice(INTERESTING_INTS) for _ in range(rng.choice([1, 2, 3, 5, 70]))]
    elif choice == 4 and parts:
        i = rng.randrange(len(parts))
        try:
            parts[i] = str(int(parts[i]) * rng.choice([0, -1, 2, 10, 1000, 2**31, 2**62]))
        except ValueError:
            parts[i] = "1"
    else:
        return rng.choice(INTERESTING_INTS + INTERESTING_STRINGS)
    return ", ".join(parts)


def m_attribute_value(rng, root):
    elements = [e for e in _elements(root) if e.attrib]
    element = rng.choice(elements)
    name = rng.choice(list(element.attrib))
    old = element.get(name)
    if name in ("element_type", "destination_type"):
        new = rng.choice(ELEMENT_TYPES)
    elif name == "precision":
        new = rng.choice(PRECISIONS)
    elif name == "type":
        new = rng.choice(OP_TYPES)
    elif any(ch.isdigit() for ch in old) and rng.random() < 0.8:
        new = _mutate_number_list(rng, old)
    else:
        new = rng.choice(INTERESTING_STRINGS + INTERESTING_INTS)
    element.set(name, new)
    return f"attribute {element.tag}@{name}: {old[:30]!r} -> {new[:30]!r}"


def m_attribute_delete(rng, root):
    elements = [e for e in _elements(root) if e.attrib]
    element = rng.choice(elements)
    name = rng.choice(list(element.attrib))
    del element.attrib[name]
    return f"delete {element.tag}@{name}"


def m_attribute_add(rng, root):
    datas = _elements(root, "data")
    layers = _elements(root, "layer")
    element = rng.choice(datas or layers)
    name = rng.choice(DATA_ATTRIBUTES)
    value = rng.choice(INTERESTING_INTS + INTERESTING_STRINGS + ELEMENT_TYPES)
    element.set(name, value)
    return f"add {element.tag}@{name}={value[:30]!r}"


def m_dim(rng, root):
    dims = _elements(root, "dim")
    dim = rng.choice(dims)
    choice = rng.randrange(4)
    parent = dim.getparent()
    if choice == 0:
        old, dim.text = dim.text, rng.choice(DIM_VALUES)
        return f"dim {old!r} -> {dim.text!r}"
    if choice == 1:
        parent.remove(dim)
        return "delete a dim"
    if choice == 2:
        from copy import deepcopy
        for _ in range(rng.choice([1, 1, 2, 40, 70])):
            parent.append(deepcopy(dim))
        return "duplicate a dim"
    # the same change on every port of a layer
    layer = dim
    while layer is not None and layer.tag != "layer":
        layer = layer.getparent()
    value = rng.choice(DIM_VALUES)
    index = rng.randrange(4)
    for port in _elements(layer, "port"):
        port_dims = list(port.iterchildren("dim"))
        if index < len(port_dims):
            port_dims[index].text = value
    return f"dim {index} of every port -> {value!r}"


def m_edge(rng, root):
    edges = _elements(root, "edge")
    ids = [e.get("id") for e in _elements(root, "layer")] + ["99", "-1", "x", "0"]
    edge = rng.choice(edges)
    choice = rng.randrange(5)
    if choice == 0:
        edge.getparent().remove(edge)
        return "delete an edge"
    if choice == 1:
        from copy import deepcopy
        edge.addnext(deepcopy(edge))
        return "duplicate an edge"
    if choice == 2:
        name = rng.choice(["from-layer", "to-layer"])
        old = edge.get(name)
        edge.set(name, str(rng.choice(ids)))
        return f"edge {name} {old} -> {edge.get(name)}"
    if choice == 3:
        name = rng.choice(["from-port", "to-port"])
        old = edge.get(name)
        edge.set(name, rng.choice(["0", "1", "2", "3", "-1", "99", ""]))
        return f"edge {name} {old} -> {edge.get(name)}"
    # a new edge between random layers (may close a cycle)
    from lxml import etree
    new = etree.SubElement(edge.getparent(), "edge")
    for name, value in (("from-layer", rng.choice(ids)), ("from-port", rng.choice("0123")),
                        ("to-layer", rng.choice(ids)), ("to-port", rng.choice("0123"))):
        new.set(name, str(value))
    return "add an edge " + " ".join(f"{k}={v}" for k, v in new.attrib.items())


def m_ids(rng, root):
    layers = _elements(root, "layer")
    if rng.random() < 0.5:
        layer = rng.choice(layers)
        old = layer.get("id")
        layer.set("id", rng.choice([l.get("id") for l in layers] + ["-1", "x", "", " 1",
                                                                      "99999999999999999999"]))
        return f"layer id {old} -> {layer.get('id')!r}"
    ports = _elements(root, "port")
    port = rng.choice(ports)
    old = port.get("id")
    port.set("id", rng.choice(["0", "1", "2", "3", "-1", "x", "", "99999999999999999999"]))
    return f"port id {old} -> {port.get('id')!r}"


def m_element_type(rng, root):
    candidates = [(e, n) for e in _elements(root) for n in ("element_type", "precision",
                                                            "destination_type") if e.get(n)]
    element, name = rng.choice(candidates)
    new = rng.choice(PRECISIONS if name == "precision" else ELEMENT_TYPES)
    element.set(name, new)
    return f"{name} -> {new!r}"


def m_const(rng, root):
    consts = [d for d in _elements(root, "data") if d.get("offset") is not None]
    if not consts:
        return m_attribute_value(rng, root)
    data = rng.choice(consts)
    name = rng.choice(["offset", "size", "shape", "shape", "element_type"])
    if name == "shape":
        data.set(name, _mutate_number_list(rng, data.get(name, "")))
    elif name == "element_type":
        data.set(name, rng.choice(ELEMENT_TYPES))
    else:
        data.set(name, rng.choice(INTERESTING_INTS))
    return f"Const {name} -> {data.get(name)[:30]!r}"


def m_layer_type(rng, root):
    layer = rng.choice(_elements(root, "layer"))
    if rng.random() < 0.6:
        old = layer.get("type")
        layer.set("type", rng.choice(OP_TYPES))
        return f"type {old} -> {layer.get('type')}"
    old = layer.get("version")
    layer.set("version", rng.choice(["opset1", "opset3", "opset8", "opset14", "opset15",
                                     "opset16", "opset0", "opset99999999999999999999",
                                     "extension", ""]))
    return f"version {old} -> {layer.get('version')}"


def m_layers(rng, root):
    from copy import deepcopy
    layers = _elements(root, "layer")
    section = layers[0].getparent()
    choice = rng.randrange(4)
    layer = rng.choice(layers)
    if choice == 0:
        section.remove(layer)
        return f"delete layer {layer.get('id')}"
    if choice == 1:
        count = rng.choice([1, 10, 1000])
        base = 100000
        for i in range(count):
            copy = deepcopy(layer)
            copy.set("id", str(base + i))
            section.append(copy)
        return f"copy layer {layer.get('id')} x{count}"
    if choice == 2:
        section.remove(layer)
        section.insert(rng.randrange(len(section) + 1), layer)
        return f"move layer {layer.get('id')}"
    other = rng.choice(layers)
    if layer.find("data") is not None and other is not layer:
        old = other.find("data")
        if old is not None:
            other.remove(old)
        other.insert(0, deepcopy(layer.find("data")))
    return f"copy <data> of {layer.get('id')} to {other.get('id')}"


def m_unicode(rng, root):
    element = rng.choice(_elements(root, "layer") + _elements(root, "port") + [root])
    name = "names" if element.tag == "port" else "name"
    value = rng.choice(["名前", "\u202eevil", "a\\,b,c", "😀" * 1000, "é" * 5, "x" * 200000,
                        ",", "\\", "\u0301", "\ufeff", "\t\n", "input", "max_pooled", "",
                        "Ω≈ç√∫", "\U0010ffff"])
    element.set(name, value)
    return f"{element.tag}@{name} -> unicode {value[:10]!r}"


def m_nesting(rng, root):
    depth = rng.choice([10, 200, 255, 300, 5000, 100000])
    layers = _elements(root, "layer")
    host = rng.choice([rng.choice(layers), root, rng.choice(layers).find("data")
                       if rng.choice(layers).find("data") is not None else root])
    marker = "NESTMARK"
    from lxml import etree
    etree.SubElement(host, rng.choice(["rt_info", "data", "x"])).text = marker
    xml = _serialize(root).decode("utf-8")
    tag = rng.choice(["attribute", "info", "a"])
    nested = ("<%s name=\"n\" value=\"v\">" % tag) * depth + ("</%s>" % tag) * depth
    return xml.replace(marker, nested, 1).encode("utf-8"), f"nesting depth {depth}"


def m_many_attributes(rng, root):
    count = rng.choice([1000, 20000, 100000])
    element = rng.choice(_elements(root, "data") or _elements(root, "layer"))
    marker = 'NESTMARK="1"'
    element.set("NESTMARK", "1")
    xml = _serialize(root).decode("utf-8")
    extra = " ".join(f'a{i}="{i}"' for i in range(count))
    return xml.replace(marker, extra, 1).encode("utf-8"), f"{count} attributes on <{element.tag}>"


def m_long_list(rng, root):
    datas = [d for d in _elements(root, "data") if d.attrib]
    element = rng.choice(datas or _elements(root, "layer"))
    name = rng.choice(list(element.attrib))
    count = rng.choice([100, 10000, 500000])
    element.set(name, ",".join(["1"] * count))
    return f"{name} as a {count}-long list"


INJECTIONS = [
    '<!DOCTYPE net [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">'
    '<!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">]>',
    '<!DOCTYPE net [<!ENTITY q "' + "q" * 50000 + '">]>',
    '<!DOCTYPE net [<!ENTITY leak SYSTEM "file:///etc/passwd">]>',
    '<!DOCTYPE net [<!ENTITY leak SYSTEM "http://127.0.0.1:9/x">]>',
    '<!DOCTYPE net SYSTEM "http://127.0.0.1:9/net.dtd">',
    '<!DOCTYPE net SYSTEM "/etc/passwd">',
    '<!DOCTYPE net [<!ENTITY % p SYSTEM "file:///etc/passwd"> %p;]>',
    '<!DOCTYPE net [<!ELEMENT net ANY><!ATTLIST layer id CDATA "7">]>',
    '<!DOCTYPE net>',
    '<?xml-stylesheet href="file:///etc/passwd"?>',
]
REFERENCES = ["&a;", "&f;", "&q;", "&leak;", "&amp;", "&#0;", "&#xD800;", "&#65;", "&nope;"]


def m_injection(rng, xml, weights):
    text = xml.decode("utf-8", "replace")
    head, sep, body = text.partition("?>")
    if not sep:
        head, body = "", text
    else:
        head += sep
    choice = rng.randrange(3)
    if choice < 2:
        injection = rng.choice(INJECTIONS)
        reference = rng.choice(REFERENCES)
        body = body.replace('name="', f'name="{reference}', 1)
        text = head + "\n" + injection + body
        description = f"inject {injection[:40]!r} and {reference}"
    else:
        include = rng.choice([
            '<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="/etc/passwd" parse="text"/>',
            '<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="http://127.0.0.1:9/x"/>',
            '<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="model.bin" parse="text"/>',
            '<![CDATA[<layer id="9"/>]]>', "<!-- comment -->", "<?pi data?>"])
        marker = rng.choice(["<layers>", "<edges>", "<data ", "</layer>"])
        text = text.replace(marker, include + marker if marker.startswith("</") else
                            marker + include if marker.endswith(">") else include + marker, 1)
        description = f"insert {include[:40]!r} at {marker!r}"
    return text.encode("utf-8"), weights, description


def m_bytes_xml(rng, xml, weights):
    data = bytearray(xml)
    choice = rng.randrange(5)
    if choice == 0:
        cut = rng.randrange(len(data) + 1)
        return bytes(data[:cut]), weights, f"truncate xml at {cut}"
    if choice == 1:
        for _ in range(rng.choice([1, 2, 8, 64])):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data), weights, "flip xml bytes"
    if choice == 2:
        at = rng.randrange(len(data) + 1)
        blob = bytes(rng.randrange(256) for _ in range(rng.choice([1, 16, 256])))
        return bytes(data[:at]) + blob + bytes(data[at:]), weights, "insert random bytes"
    if choice == 3:
        return bytes(rng.randrange(256) for _ in range(rng.choice([0, 10, 4000]))), weights, \
            "random xml"
    text = xml.decode("utf-8")
    encoding = rng.choice(["utf-16", "utf-16-le", "utf-32", "latin-1"])
    text = text.replace('<?xml version="1.0"?>', f'<?xml version="1.0" encoding="{encoding}"?>')
    text = text.replace("<?xml version='1.0' encoding='UTF-8'?>",
                        f'<?xml version="1.0" encoding="{encoding}"?>')
    try:
        return text.encode(encoding), weights, f"re-encode as {encoding}"
    except UnicodeEncodeError:
        return xml, weights, "re-encode failed"


def m_bytes_bin(rng, xml, weights):
    choice = rng.randrange(5)
    weights = weights or b""
    if choice == 0:
        cut = rng.randrange(len(weights) + 1)
        return xml, weights[:cut], f"truncate bin at {cut}"
    if choice == 1:
        data = bytearray(weights)
        for _ in range(min(len(data), rng.choice([1, 8, 1000]))):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return xml, bytes(data), "flip bin bytes"
    if choice == 2:
        return xml, weights + bytes(rng.randrange(256) for _ in range(rng.choice([1, 64]))), \
            "extend bin"
    if choice == 3:
        return xml, None, "remove bin"
    return xml, b"\xff" * len(weights), "bin all 0xff (NaN, -1, huge ints)"


TREE_MUTATIONS = [m_attribute_value, m_attribute_value, m_attribute_value, m_attribute_delete,
                  m_attribute_add, m_dim, m_dim, m_edge, m_edge, m_ids, m_element_type,
                  m_element_type, m_const, m_const, m_layer_type, m_layers, m_unicode,
                  m_long_list]
TEXT_MUTATIONS = [m_nesting, m_many_attributes]
BYTE_MUTATIONS = [m_injection, m_bytes_xml, m_bytes_bin, m_bytes_bin]


def load_samples(directory=SAMPLES):
    samples = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".xml"):
            with open(os.path.join(directory, name), "rb") as handle:
                xml = handle.read()
            bin_path = os.path.join(directory, name[:-4] + ".bin")
            weights = None
            if os.path.exists(bin_path):
                with open(bin_path, "rb") as handle:
                    weights = handle.read()
            samples.append((name, xml, weights))
    return samples


def make_case(samples, seed, index):
    """The (xml, bin, description) of case ``index``: deterministic in (seed, index)."""
    rng = random.Random(f"ovpool-fuzz:{seed}:{index}")
    name, xml, weights = rng.choice(samples)
    steps = [name]
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        kind = rng.random()
        try:
            if kind < 0.7:
                root = _parse(xml)
                steps.append(rng.choice(TREE_MUTATIONS)(rng, root))
                xml = _serialize(root)
            elif kind < 0.78:
                root = _parse(xml)
                xml, description = rng.choice(TEXT_MUTATIONS)(rng, root)
                steps.append(description)
            else:
                xml, weights, description = rng.choice(BYTE_MUTATIONS)(rng, xml, weights)
                steps.append(description)
        except Exception as error:  # noqa: BLE001 - e.g. an earlier mutation broke the XML
            data = bytearray(xml)
            if data:
                data[rng.randrange(len(data))] = rng.randrange(256)
            xml = bytes(data)
            steps.append(f"byte flip (mutation failed: {type(error).__name__})")
    return xml, weights, steps


def dump_case(samples, seed, index, directory):
    xml, weights, steps = make_case(samples, seed, index)
    return write_case(directory, xml, weights), steps


def write_case(directory, xml, weights):
    os.makedirs(directory, exist_ok=True)
    bin_path = os.path.join(directory, "model.bin")
    with open(os.path.join(directory, "model.xml"), "wb") as handle:
        handle.write(xml)
    if weights is None:
        if os.path.exists(bin_path):
            os.unlink(bin_path)
    else:
        with open(bin_path, "wb") as handle:
            handle.write(weights)
    return os.path.join(directory, "model.xml")


# ---------------------------------------------------------------------------------------------
# worker: runs cases sent on stdin ("seed index"), answers one JSON line each
# ---------------------------------------------------------------------------------------------

def _random_inputs(compiled, rng):
    import numpy as np
    arrays = []
    for info in compiled.inputs:
        shape = []
        for dim in info.shape:
            if dim.is_static:
                shape.append(dim.min)
            else:
                high = dim.max if dim.max is not None else dim.min + 3
                shape.append(int(rng.integers(dim.min, max(dim.min, min(high, dim.min + 3)) + 1)))
        dtype = info.dtype
        if dtype is None:
            arrays.append(np.zeros(shape, np.float32))
        elif dtype.kind == "b":
            arrays.append(rng.random(shape) < 0.5)
        elif dtype.kind in "iu":
            arrays.append(rng.integers(0, 5, size=shape).astype(dtype))
        else:
            arrays.append(rng.standard_normal(shape).astype(dtype))
    return arrays


def run_model(path, index):
    """read + compile + infer one model; returns "ok" or raises."""
    import numpy as np
    import ovpool
    model = ovpool.read_model(path)
    compiled = ovpool.compile_model(model)
    rng = np.random.default_rng(index)
    compiled(_random_inputs(compiled, rng))
    if compiled.inputs and rng.random() < 0.3:
        # A second call with dynamic dims drawn again: exercises re-inference.
        compiled(_random_inputs(compiled, rng))
    return "ok"


_CORE = []


def run_model_native(path, index):
    """read + compile + infer one model with OpenVINO, ovpool's native extension library
    loaded (its pooling and ovpool-opset layers); returns "ok" or raises. OpenVINO refusing
    the model (a RuntimeError) is a clean refusal; a crash is a finding."""
    import numpy as np
    if not _CORE:
        import openvino as ov
        import ovpool.openvino
        core = ov.Core()
        core.set_property("CPU", {"INFERENCE_NUM_THREADS": 1})
        core.add_extension(str(ovpool.openvino.extension_path()))
        _CORE.append(core)
    core = _CORE[0]
    compiled = core.compile_model(core.read_model(path), "CPU")
    rng = np.random.default_rng(index)
    arrays = []
    for port in compiled.inputs:
        shape = port.get_partial_shape()
        if not shape.is_static:
            return "ok"        # compiled; the dynamic dims are exercised by ovpool's own runs
        dtype = np.dtype(port.get_element_type().to_dtype())
        if dtype.kind in "iub":
            # Integer inputs of mutated models are shapes, axes and permutations (a Const made a
            # Parameter) that OpenVINO's CPU plugin trusts: random ones crash OpenVINO itself,
            # with or without ovpool loaded. Compiling the model is the test here.
            return "ok"
        dims = [int(d) for d in shape.to_shape()]
        if np.prod(dims, dtype=object) * dtype.itemsize > 64 << 20:
            return "ok"
        arrays.append((rng.standard_normal(dims) * 3).astype(dtype))
    compiled(arrays)
    return "ok"


def run_case(samples, workdir, seed, index, native=False):
    """Make case ``index``, write its files in ``workdir`` and run them: "ok" or raises."""
    xml, weights, _ = make_case(samples, seed, index)
    path = write_case(workdir, xml, weights)
    return (run_model_native if native else run_model)(path, index)


def worker_main(memory_limit, address_space, native=False, fuzzer=None):
    import resource
    import warnings
    warnings.simplefilter("ignore")
    if address_space:
        resource.setrlimit(resource.RLIMIT_AS, (address_space, address_space))
    # Never dump core files on a crash (the parent counts it).
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    import ovpool
    from ovpool.errors import OvpoolError
    ovpool.set_memory_limit(memory_limit)
    fuzzer = fuzzer or sys.modules[__name__]
    samples = fuzzer.load_samples()
    workdir = tempfile.mkdtemp(prefix="ovpool-fuzz-worker-")
    try:
        for line in sys.stdin:
            seed, index = line.split()
            try:
                outcome = fuzzer.run_case(samples, workdir, seed, int(index), native)
                detail = ""
            except OvpoolError as error:
                outcome, detail = "clean", f"{type(error).__name__}: {str(error)[:200]}"
            except BaseException as error:  # noqa: BLE001 - everything else is a finding
                outcome = "exception"
                if native and type(error) in (RuntimeError, UnicodeDecodeError):
                    # OpenVINO's own refusal (its exceptions are plain RuntimeErrors, and a
                    # message quoting bytes of the model that are not UTF-8 cannot be decoded)
                    outcome = "clean"
                detail = "".join(traceback.format_exception(type(error), error,
                                                            error.__traceback__))[-4000:]
            sys.stdout.write(json.dumps({"index": int(index), "outcome": outcome,
                                         "detail": detail}) + "\n")
            sys.stdout.flush()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# driver
# ---------------------------------------------------------------------------------------------

class Worker:
    def __init__(self, args):
        self.args = args
        self.process = None
        self.case = None
        self.started = None
        self.buffer = b""

    def start(self):
        command = [sys.executable, getattr(self.args, "script", os.path.abspath(__file__)),
                   "--worker", "--memory-limit", str(self.args.memory_limit),
                   "--address-space", str(self.args.address_space),
                   *getattr(self.args, "worker_arguments", [])]
        env = dict(os.environ, OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "2"))
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, env=env)
        self.buffer = b""

    def send(self, seed, index):
        if self.process is None or self.process.poll() is not None:
            self.start()
        self.case = index
        self.started = time.monotonic()
        self.process.stdin.write(f"{seed} {index}\n".encode())
        self.process.stdin.flush()

    def kill(self):
        if self.process is not None:
            try:
                self.process.kill()
            except OSError:
                pass
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
        self.process = None


def keep_case(args, samples, index, outcome, detail, dump=None):
    """Save case ``index``'s files (with ``dump``, this fuzzer's :func:`dump_case` by
    default) and an info.txt with its mutations, a rerun command and ``detail``."""
    directory = os.path.join(args.keep, f"case-{index}")
    _, steps = (dump or dump_case)(samples, args.seed, index, directory)
    with open(os.path.join(directory, "info.txt"), "w", encoding="utf-8") as handle:
        handle.write(f"seed={args.seed} case={index} outcome={outcome}\n")
        handle.write("mutations:\n  " + "\n  ".join(steps) + "\n\n")
        script = getattr(args, "script", __file__)
        handle.write(f"rerun: python {os.path.relpath(script)} --seed {args.seed} "
                     f"--only {index}\n\n{detail}\n")
    return directory


def drive(args, samples=None, dump=None):
    """Run the cases in worker processes; ``samples`` and ``dump`` (which writes a case's
    files) default to this fuzzer's, and other fuzzers pass their own."""
    samples = load_samples() if samples is None else samples
    indices = [args.only] if args.only is not None else list(range(args.start,
                                                                   args.start + args.cases))
    counts = {"ok": 0, "clean": 0, "crash": 0, "hang": 0, "exception": 0}
    workers = [Worker(args) for _ in range(max(1, min(args.workers, len(indices))))]
    pending = list(reversed(indices))
    busy = {}
    last_report = time.monotonic()
    findings = []

    def record(index, outcome, detail):
        counts[outcome] += 1
        if outcome in ("crash", "hang", "exception"):
            where = keep_case(args, samples, index, outcome, detail, dump) if args.keep else "-"
            first = detail.strip().splitlines()[-1] if detail.strip() else ""
            findings.append(index)
            print(f"case {index}: {outcome}: {first[:200]} (kept: {where})", flush=True)

    try:
        while pending or busy:
            idle = [w for w in workers if all(w is not b for b in busy.values())]
            for worker in idle:
                if pending:
                    worker.send(args.seed, pending.pop())
                    busy[worker.process.stdout.fileno()] = worker
            now = time.monotonic()
            deadline = min(w.started + args.timeout for w in busy.values())
            ready, _, _ = select.select(list(busy), [], [], max(0.0, deadline - now))
            for fd in ready:
                worker = busy[fd]
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    code = worker.process.wait()
                    del busy[fd]
                    record(worker.case, "crash", f"worker exited with status {code} "
                                                 f"(signal {-code if code < 0 else 'none'})")
                    worker.kill()
                    continue
                worker.buffer += chunk
                if b"\n" in worker.buffer:
                    line, worker.buffer = worker.buffer.split(b"\n", 1)
                    answer = json.loads(line)
                    del busy[fd]
                    record(answer["index"], answer["outcome"], answer["detail"])
            now = time.monotonic()
            for fd, worker in list(busy.items()):
                if now - worker.started > args.timeout:
                    del busy[fd]
                    worker.kill()
                    record(worker.case, "hang", f"no answer within {args.timeout} s")
            if args.progress and now - last_report > args.progress:
                last_report = now
                done = sum(counts.values())
                print(f"progress: {done}/{len(indices)} " + _counts_line(counts, done),
                      file=sys.stderr, flush=True)
    finally:
        for worker in workers:
            worker.kill()
    total = sum(counts.values())
    print(_counts_line(counts, total), flush=True)
    return 1 if findings else 0


def assert_clean_batch(script, cases, arguments, keep, timeout, min_ok, min_clean, env=None):
    """Run ``cases`` cases of a fuzzer script (with ``arguments``, its findings kept in
    ``keep``) and assert that every one ran or was refused cleanly, with at least ``min_ok``
    runs and ``min_clean`` refusals (or the mutations have stopped meaning anything). For
    the CI batches."""
    result = subprocess.run([sys.executable, script, "--cases", str(cases), *arguments,
                             "--keep", str(keep)],
                            capture_output=True, text=True, timeout=timeout, env=env)
    last = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    counts = {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", last)}
    findings = []
    if os.path.isdir(keep):
        for case in sorted(os.listdir(keep)):
            with open(os.path.join(keep, case, "info.txt"), encoding="utf-8") as handle:
                findings.append(handle.read()[-3000:])
    assert counts.get("cases") == cases, result.stdout[-2000:] + result.stderr[-2000:]
    assert counts["anything_else"] == 0, "\n\n".join(findings) or result.stdout[-3000:]
    assert result.returncode == 0, result.stderr[-2000:]
    assert counts["ok"] >= min_ok and counts["clean"] >= min_clean, last
    return counts


def _counts_line(counts, total):
    other = counts["crash"] + counts["hang"] + counts["exception"]
    return (f"cases={total} ok={counts['ok']} clean={counts['clean']} anything_else={other} "
            f"crash={counts['crash']} hang={counts['hang']} exception={counts['exception']}")


def main(argv=None, fuzzer=None):
    """The command line of this fuzzer, or of ``fuzzer`` (a module with ``__doc__``,
    ``__file__``, ``load_samples``, ``run_case`` and ``dump_case``), which
    then shares this driver and its workers."""
    fuzzer = fuzzer or sys.modules[__name__]
    parser = argparse.ArgumentParser(description=fuzzer.__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000, help="number of cases (default 1000)")
    parser.add_argument("--seed", default="0", help="seed of the mutations (default 0)")
    parser.add_argument("--start", type=int, default=0, help="first case number (default 0)")
    parser.add_argument("--only", type=int, help="run case K alone (a reproducer)")
    parser.add_argument("--keep", metavar="DIR", help="save the files of findings here")
    parser.add_argument("--timeout", type=float, default=20.0,
                        help="seconds per case before it counts as a hang (default 20)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="worker processes (default: the number of CPUs)")
    parser.add_argument("--memory-limit", type=int, default=256 << 20,
                        help="ovpool.set_memory_limit in the workers (default 256 MiB)")
    parser.add_argument("--address-space", type=int, default=4 << 30,
                        help="RLIMIT_AS of the workers in bytes, 0 for none (default 4 GiB)")
    parser.add_argument("--progress", type=float, default=0,
                        help="print progress on stderr every this many seconds")
    parser.add_argument("--dump", metavar="DIR", help="write case --only K's files to DIR and exit")
    parser.add_argument("--native", action="store_true",
                        help="run the cases with OpenVINO and ovpool's native extension library "
                             "(ovpool build-extension) instead of ovpool's runtime")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.script = os.path.abspath(fuzzer.__file__)
    if args.native:
        args.worker_arguments = ["--native"]
    if args.worker:
        worker_main(args.memory_limit, args.address_space, args.native, fuzzer)
        return 0
    if args.dump:
        path, steps = fuzzer.dump_case(fuzzer.load_samples(), args.seed, args.only or 0,
                                       args.dump)
        print(path)
        print("\n".join(steps))
        return 0
    return drive(args, fuzzer.load_samples(), fuzzer.dump_case)


if __name__ == "__main__":
    sys.exit(main())
