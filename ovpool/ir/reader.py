"""Read an OpenVINO IR (``model.xml`` + ``model.bin``) into an :class:`ovpool.ir.model.Model`.

The XML is untrusted: it is parsed with entity resolution, DTD loading and network access off,
and any DOCTYPE is refused before parsing (IR files never have one; a DTD is how entity bombs
and external-file references get in). Every Const's offset and size is checked against the
.bin, and its byte size against the memory limit, before anything is read.

Besides parsing, this module checks the graph's structure (ids, edges, ports, cycles); shape
and op checks happen when the model is compiled (:mod:`ovpool.runtime`).
"""

import math
import os
import re
from types import MappingProxyType

import numpy as np
from lxml import etree

from .._limits import MAX_RANK, check_allocation
from ..errors import ModelError, OvpoolError, UnsupportedError
from .element_types import dtype_for, precision_to_element_type
from .graph import topological_order
from .model import (Attributes, Dimension, Edge, Layer, Model, PartialShape, Port, TensorInfo,
                    int64_or_none, shown as _shown)

__all__ = ["read_model", "parameter_type", "SUPPORTED_IR_VERSIONS"]

SUPPORTED_IR_VERSIONS = (10, 11)
# IR <data> elements carry a handful of attributes. lxml reads an element's attribute values
# in quadratic time (each value is found by name), so a hostile file with 100,000 of them
# is refused before they are read.
MAX_DATA_ATTRIBUTES = 1024
_DIGITS = re.compile(r"[0-9]+")
_SIGNED = re.compile(r"\s*-?[0-9]+\s*")


def _int64(text, what, where):
    """A decimal integer (already matched) that must fit in int64."""
    value = int64_or_none(text)
    if value is None:
        raise ModelError(f"{where}: {what} {_shown(text.strip(), 30)} does not fit in a 64-bit integer")
    return value


def _parser():
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                           huge_tree=False, dtd_validation=False, remove_comments=True,
                           remove_pis=True)


def _line_of(data, position):
    return data.count(b"\n", 0, position) + 1


def _parse_xml(data, path):
    doctype = data.find(b"<!DOCTYPE")
    if doctype >= 0:
        raise ModelError(
            f"{path}:{_line_of(data, doctype)}: the file has a DOCTYPE declaration; IR files "
            "have none, and DTDs (entity definitions, external references) are refused")
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as error:
        raise ModelError(f"{path}:{error.lineno}: not well-formed XML: {error.msg}") from None
    tree = root.getroottree()
    # Catches DOCTYPEs the byte scan cannot see (e.g. UTF-16 files).
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None:
        raise ModelError(f"{path}: the file has a DOCTYPE declaration; DTDs are refused")
    return root


def _dimension(text, where):
    text = (text or "").strip()
    if text in ("-1", "?"):
        return Dimension(0, None)
    match = re.fullmatch(r"([0-9]*)\.\.([0-9]*)", text)
    if match:
        low = _int64(match.group(1), "dimension", where) if match.group(1) else 0
        high = _int64(match.group(2), "dimension", where) if match.group(2) else None
        if high is not None and high < low:
            raise ModelError(f"{where}: dimension {_shown(text)} has an empty range")
        return Dimension(low, high)
    if _DIGITS.fullmatch(text):
        return Dimension.static(_int64(text, "dimension", where))
    raise ModelError(f"{where}: dimension {_shown(text)} is not a length, -1, ? or a range like "
                     "1..10")


def _check_rank(dims, where):
    if len(dims) > MAX_RANK:
        raise UnsupportedError(f"{where}: a shape of rank {len(dims)}; at most {MAX_RANK} "
                               "dimensions are supported")
    return dims


def _shape_attribute(text, where):
    """Parse a ``shape="?,3,8,8"`` attribute; ``""`` is a scalar."""
    text = text.strip()
    if text == "...":
        raise UnsupportedError(f"{where}: shape '...' (dynamic rank) is not supported")
    if not text:
        return PartialShape()
    parts = _check_rank(text.split(","), where)
    return PartialShape(_dimension(part, where) for part in parts)


def _tensor_names(text):
    # Names are comma-separated; a comma inside a name is written as "\,".
    if not text:
        return ()
    names = [n.replace("\\,", ",").strip() for n in re.split(r"(?<!\\),", text)]
    return tuple(n for n in names if n)


def _int_attribute(element, name, where):
    raw = element.get(name)
    if raw is None:
        raise ModelError(f"{where}: <{element.tag}> has no '{name}' attribute")
    if not _SIGNED.fullmatch(raw):
        raise ModelError(f"{where}: attribute '{name}' is {_shown(raw)}; expected an integer")
    return _int64(raw, f"attribute '{name}'", where)


def _ports(section, where):
    if section is None:
        return ()
    ports = []
    for element in section.iterchildren("port"):
        port_where = f"{where} (line {element.sourceline})"
        port_id = _int_attribute(element, "id", port_where)
        dims = _check_rank(list(element.iterchildren("dim")), port_where)
        dims = PartialShape(_dimension(d.text, port_where) for d in dims)
        precision = element.get("precision")
        element_type = precision_to_element_type(precision) if precision else None
        ports.append(Port(port_id, dims, element_type, _tensor_names(element.get("names"))))
    return tuple(ports)


def _rt_info(element):
    """Flatten ``<rt_info>`` into {"name": value} (nested tags as "outer.inner")."""
    info = {}
    if element is None:
        return MappingProxyType(info)

    def walk(node, prefix):
        for child in node.iterchildren():
            if not isinstance(child.tag, str):
                continue
            key = child.get("name") or child.tag
            full = f"{prefix}{key}"
            if child.get("value") is not None or child.get("name") is not None:
                info[full] = child.get("value", "")
            walk(child, full + ".")

    walk(element, "")
    return MappingProxyType(info)


class _BinFile:
    """The .bin, opened on first use; every read is checked against its length first."""

    def __init__(self, path):
        self.path = path
        self._handle = None
        self.size = None

    def _open(self, context):
        if self._handle is None:
            try:
                self._handle = open(self.path, "rb")
            except OSError as error:
                raise ModelError(
                    f"{context}: cannot open weights file {self.path}: {error.strerror}") from None
            self.size = os.fstat(self._handle.fileno()).st_size
        return self._handle

    def read(self, offset, size, context):
        handle = self._open(context)
        if offset < 0 or size < 0 or offset + size > self.size:
            raise ModelError(
                f"{context}: offset={offset} size={size} lies outside the weights file "
                f"{self.path} of {self.size} bytes (truncated or mismatched .bin?)")
        handle.seek(offset)
        data = handle.read(size)
        if len(data) != size:
            raise ModelError(f"{context}: could read only {len(data)} of {size} bytes from {self.path}")
        return data

    def close(self):
        if self._handle is not None:
            self._handle.close()


def _const_value(layer_context, attributes, bin_file):
    dtype = attributes.dtype("element_type")
    shape = _check_rank(tuple(attributes.ints("shape")), "attribute 'shape'")
    if any(d < 0 for d in shape):
        raise ModelError(f"attribute 'shape' is {attributes['shape']!r}; dims must be >= 0")
    check_allocation(shape, dtype, "attribute 'shape'")
    nbytes = math.prod(shape) * dtype.itemsize
    offset = attributes.int("offset")
    size = attributes.int("size")
    if size != nbytes:
        raise ModelError(
            f"attribute 'size' is {size}, but shape {list(shape)} of {dtype} needs {nbytes} bytes")
    data = bin_file.read(offset, size, layer_context)
    return np.frombuffer(data, dtype=dtype).reshape(shape)


def _layer(element, path, bin_file):
    where = f"{path}:{element.sourceline}: layer"
    layer_id = element.get("id")
    if layer_id is None or not _DIGITS.fullmatch(layer_id.strip()):
        raise ModelError(f"{where} has id {_shown(layer_id)}; expected a non-negative integer")
    layer_id = layer_id.strip()
    for required in ("type", "version"):
        if element.get(required) is None:
            raise ModelError(f"{where} id={layer_id} has no '{required}' attribute")
    data = element.find("data")
    if data is not None and len(data.attrib) > MAX_DATA_ATTRIBUTES:
        raise ModelError(f"{where} id={layer_id} name={_shown(element.get('name', ''))}: <data> "
                         f"has {len(data.attrib)} attributes; at most {MAX_DATA_ATTRIBUTES} "
                         "are read")
    attributes = Attributes(dict(data.items()) if data is not None else {})
    layer = Layer(
        id=layer_id, name=element.get("name", ""), type=element.get("type"),
        version=element.get("version"), attributes=attributes,
        inputs=(), outputs=(), file=path, line=element.sourceline,
        rt_info=_rt_info(element.find("rt_info")))
    try:
        inputs = _ports(element.find("input"), "input port")
        outputs = _ports(element.find("output"), "output port")
        for kind, ports in (("input", inputs), ("output", outputs)):
            ids = [p.id for p in ports]
            if len(set(ids)) != len(ids):
                raise ModelError(f"duplicate {kind} port ids {ids}")
        overlap = {p.id for p in inputs} & {p.id for p in outputs}
        if overlap:
            raise ModelError(f"port ids {sorted(overlap)} are used for an input and an output")
        constant = None
        if layer.type == "Const":
            constant = _const_value(layer.context, attributes, bin_file)
    except OvpoolError as error:
        raise error.with_context(layer.context) from None
    return Layer(layer.id, layer.name, layer.type, layer.version, attributes, inputs, outputs,
                 path, element.sourceline, constant, layer.rt_info)


def _edges(net, path):
    edges = []
    section = net.find("edges")
    for element in (section.iterchildren("edge") if section is not None else ()):
        where = f"{path}:{element.sourceline}: edge"
        values = []
        for name in ("from-layer", "from-port", "to-layer", "to-port"):
            raw = (element.get(name) or "").strip()
            if not _DIGITS.fullmatch(raw):
                raise ModelError(f"{where}: attribute '{name}' is {_shown(element.get(name))}; "
                                 "expected a non-negative integer")
            values.append(raw)
        edges.append(Edge(values[0], _int64(values[1], "from-port", where), values[2],
                          _int64(values[3], "to-port", where), element.sourceline))
    return tuple(edges)


def _edge_text(edge, path):
    return (f"{path}:{edge.line}: edge from-layer={edge.from_layer} from-port={edge.from_port} "
            f"to-layer={edge.to_layer} to-port={edge.to_port}")


def _check_structure(layers, edges, path):
    by_id, output_ports, input_ports = {}, {}, {}
    for layer in layers:
        if layer.id in by_id:
            raise ModelError(f"{layer.context}: duplicate layer id {layer.id} (first used at "
                             f"line {by_id[layer.id].line})")
        by_id[layer.id] = layer
        output_ports[layer.id] = {p.id for p in layer.outputs}
        input_ports[layer.id] = {p.id for p in layer.inputs}
    feeding = {}
    for edge in edges:
        source, target = by_id.get(edge.from_layer), by_id.get(edge.to_layer)
        for role, layer in (("from-layer", source), ("to-layer", target)):
            if layer is None:
                missing = edge.from_layer if role == "from-layer" else edge.to_layer
                raise ModelError(f"{_edge_text(edge, path)}: {role} {missing} does not exist")
        if edge.from_port not in output_ports[source.id]:
            raise ModelError(
                f"{_edge_text(edge, path)}: layer {source.id} ({source.name!r}) has no output "
                f"port {edge.from_port}; its output ports are {[p.id for p in source.outputs]}")
        if edge.to_port not in input_ports[target.id]:
            raise ModelError(
                f"{_edge_text(edge, path)}: layer {target.id} ({target.name!r}) has no input "
                f"port {edge.to_port}; its input ports are {[p.id for p in target.inputs]}")
        key = (edge.to_layer, edge.to_port)
        if key in feeding:
            raise ModelError(f"{_edge_text(edge, path)}: input port {edge.to_port} of layer "
                             f"{edge.to_layer} already has an edge (line {feeding[key].line})")
        feeding[key] = edge
    for layer in layers:
        for port in layer.inputs:
            if (layer.id, port.id) not in feeding:
                raise ModelError(f"{layer.context}: input port {port.id} is not connected "
                                 "(no edge leads to it)")
    _check_acyclic(layers, edges)


def _check_acyclic(layers, edges):
    ordered = set(topological_order(layers, edges))
    stuck = [layer for layer in layers if layer.id not in ordered]
    if stuck:
        listed = ", ".join(f"{l.id} ({l.name!r}, line {l.line})" for l in stuck[:10])
        raise ModelError(f"{stuck[0].file}: the graph has a cycle through layers {listed}")


def parameter_type(layer):
    """A Parameter's (dtype, PartialShape), from its element_type and shape attributes."""
    try:
        dtype = layer.attributes.dtype("element_type")
        if "shape" in layer.attributes:
            shape = _shape_attribute(layer.attributes["shape"], "attribute 'shape'")
        elif layer.outputs:
            shape = layer.outputs[0].dims
        else:
            raise ModelError("a Parameter needs a 'shape' attribute or an output port")
    except OvpoolError as error:
        raise error.with_context(layer.context) from None
    return dtype, shape


def _input_info(layer):
    dtype, shape = parameter_type(layer)
    names = layer.outputs[0].names if layer.outputs else ()
    return TensorInfo(names[0] if names else layer.name, names or (layer.name,),
                      layer.attributes["element_type"].strip(), dtype, shape, layer)


def _output_info(layer, layers_by_id, edge_into):
    port = layer.inputs[0] if layer.inputs else None
    if port is None:
        raise ModelError(f"{layer.context}: a Result needs one input port")
    edge = edge_into[(layer.id, port.id)]
    producer = layers_by_id[edge.from_layer]
    producer_port = next(p for p in producer.outputs if p.id == edge.from_port)
    names = producer_port.names or (layer.name,)
    element_type = port.element_type or producer_port.element_type
    try:
        dtype = dtype_for(element_type) if element_type else None
    except UnsupportedError:
        dtype = None
    return TensorInfo(names[0], names, element_type, dtype, port.dims, layer)


def read_model(xml_path, bin_path=None):
    """Read an IR model.

    Parameters
    ----------
    xml_path : str or os.PathLike
        The ``.xml`` file written by OpenVINO (IR version 10 or 11).
    bin_path : str or os.PathLike, optional
        The weights; default: the ``.xml``'s sibling with the ``.bin`` suffix. Only needed
        when the model has Const layers.

    Returns
    -------
    ovpool.Model

    Raises
    ------
    ovpool.errors.ModelError
        The file is unreadable, malformed, unsafe or structurally inconsistent.
    ovpool.errors.UnsupportedError
        The IR version or an element type is not supported.
    """
    path = os.fspath(xml_path)
    if bin_path is None:
        root_name, _ = os.path.splitext(path)
        bin_path = root_name + ".bin"
    bin_path = os.fspath(bin_path)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as error:
        raise ModelError(f"cannot read model {path}: {error.strerror}") from None

    net = _parse_xml(data, path)
    if net.tag != "net":
        raise ModelError(f"{path}:{net.sourceline}: the root element is <{net.tag}>, not <net>")
    version = net.get("version", "")
    if not _DIGITS.fullmatch(version.strip()) or len(version.strip()) > 4 \
            or int(version) not in SUPPORTED_IR_VERSIONS:
        raise UnsupportedError(
            f"{path}:{net.sourceline}: IR version {_shown(version)} is not supported; supported: "
            f"{', '.join(map(str, SUPPORTED_IR_VERSIONS))}")

    bin_file = _BinFile(bin_path)
    try:
        section = net.find("layers")
        elements = section.iterchildren("layer") if section is not None else ()
        layers = tuple(_layer(element, path, bin_file) for element in elements)
    finally:
        bin_file.close()
    if not layers:
        raise ModelError(f"{path}: the model has no layers")
    edges = _edges(net, path)
    _check_structure(layers, edges, path)

    by_id = {layer.id: layer for layer in layers}
    inputs = tuple(_input_info(l) for l in layers if l.type == "Parameter")
    edge_into = {(e.to_layer, e.to_port): e for e in edges}
    outputs = tuple(_output_info(l, by_id, edge_into) for l in layers if l.type == "Result")
    if not outputs:
        raise ModelError(f"{path}: the model has no Result layer, so it has no outputs")
    return Model(path, bin_path if bin_file.size is not None else None, int(version),
                 net.get("name", ""), layers, edges, inputs, outputs,
                 _rt_info(net.find("rt_info")))

