"""Every version of the OpenVINO pooling ops ovpool runs, and of its "ovpool" opset, as data.

One table (:data:`VERSIONS`) says what each op version has: its attributes (name, kind,
default, allowed words) in the order OpenVINO's own op visits them, and how many inputs and
outputs it has. Everything that differs between versions is read from it:

* the IR op builders (:mod:`ovpool.ops.pooling`, :mod:`ovpool.ops.onnx_pooling`) parse a
  layer's attributes with :meth:`Version.read`;
* the registry (:mod:`ovpool.ops`) lists the versions and the "ovpool" opset;
* the OpenVINO bridge (:mod:`ovpool._openvino_ops`) visits the attributes in this order.

The words the attributes take are in :mod:`ovpool._vocabulary`. This module imports neither
the kernels' Python API nor openvino.
"""

from dataclasses import dataclass

from ._limits import MAX_RANK
from ._vocabulary import INDEX_TYPES, IR_AUTO_PADS, ONNX_AUTO_PADS, ONNX_FLAGS, ROUNDING_TYPES
from .errors import BadAttributeError

__all__ = ["Attribute", "Version", "VERSIONS", "OPENVINO_OPS", "OVPOOL_OPSET", "OVPOOL_ONLY",
           "REQUIRED", "MAX_AXES", "ONNX_OPSET", "per_axis_attribute", "defaults", "version"]

# The default of an attribute a layer must have.
REQUIRED = object()
# A shape has at most MAX_RANK dimensions, so no pooling attribute has more values than this.
MAX_AXES = MAX_RANK

# Kinds of attribute: how IR text is read, and the Python value OpenVINO's visitor is handed.
INTS = "ints"               # per-axis list of ints ("2,2")
BOOL = "bool"               # true / false
CHOICE = "choice"           # one of ``choices``, case-insensitive, read lower-case
INT = "int"
ONNX_FLAG = "onnx_flag"     # ONNX's 0 / 1, read as an int
ONNX_AUTO_PAD = "onnx_auto_pad"  # NOTSET ... (upper-case; "" is NOTSET)


def per_axis_attribute(attributes, name, default=REQUIRED):
    """A per-axis list of ints, at most :data:`MAX_AXES` long."""
    values = attributes.ints(name) if default is REQUIRED else attributes.ints(name, default)
    if values is not None and len(values) > MAX_AXES:
        raise BadAttributeError(f"attribute '{name}' has {len(values)} values; a shape has at "
                                f"most {MAX_AXES} axes")
    return values


def _onnx_auto_pad(attributes, name, default):
    # auto_pad="" is NOTSET, as in onnxruntime, OpenVINO's ONNX frontend and the onnx checker
    value = attributes.get(name, default).strip() or default
    if value.upper() not in ONNX_AUTO_PADS:
        raise BadAttributeError(f"attribute '{name}' is {value!r}; expected one of "
                                f"{', '.join(ONNX_AUTO_PADS)}")
    return value.strip().upper()


def _read_choice(attributes, attribute):
    if attribute.default is REQUIRED:
        return attributes.choice(attribute.name, attribute.choices)
    return attributes.choice(attribute.name, attribute.choices, attribute.default)


def _read_typed(method):
    def read(attributes, attribute):
        getter = getattr(attributes, method)
        if attribute.default is REQUIRED:
            return getter(attribute.name)
        return getter(attribute.name, attribute.default)
    return read


_READERS = {
    INTS: lambda attributes, a: per_axis_attribute(attributes, a.name, a.default),
    BOOL: _read_typed("bool"),
    INT: _read_typed("int"),
    CHOICE: _read_choice,
    ONNX_FLAG: lambda attributes, a: int(
        attributes.choice(a.name, ONNX_FLAGS, str(a.default)) == "1"),
    ONNX_AUTO_PAD: lambda attributes, a: _onnx_auto_pad(attributes, a.name, a.default),
}


@dataclass(frozen=True)
class Attribute:
    """One attribute: ``default`` is :data:`REQUIRED`, None (optional, no value) or the value
    an absent attribute has."""

    name: str
    kind: str
    default: object = REQUIRED
    choices: tuple = ()

    def read(self, attributes):
        """Its value in a layer's :class:`ovpool.ir.model.Attributes`, checked."""
        return _READERS[self.kind](attributes, self)


# The order in which a layer's attributes are read (and so which error a layer with several
# bad attributes reports): windows first, then what the op does with them.
_READ_ORDER = ("kernel", "kernel_shape", "strides", "pads_begin", "pads_end", "pads",
               "dilations", "rounding_type", "auto_pad", "ceil_mode", "exclude-pad",
               "count_include_pad", "storage_order", "index_element_type", "axis")


@dataclass(frozen=True)
class Version:
    """One version of an op: ``opset`` is its number in OpenVINO's opsets ("opset8"), or
    "ovpool" for the ops only ovpool's opset has; ``converts`` names the ONNX operator an
    "ovpool" op stands for in OpenVINO's ONNX frontend."""

    op: str
    opset: object
    attributes: tuple
    inputs: int = 1
    outputs: int = 1
    converts: str = None

    @property
    def name(self):
        return f"{self.op}-{self.opset}"

    def attribute(self, name):
        return next((a for a in self.attributes if a.name == name), None)

    def read(self, attributes):
        """{name: value} of every attribute of this version, read from a layer's attributes."""
        ordered = sorted(self.attributes, key=lambda a: _READ_ORDER.index(a.name))
        return {a.name: a.read(attributes) for a in ordered}


def _ints(name, default=REQUIRED):
    return Attribute(name, INTS, default)


def _rounding(known):
    return Attribute("rounding_type", CHOICE, "floor", ROUNDING_TYPES[:known])


_AUTO_PAD = Attribute("auto_pad", CHOICE, "explicit", IR_AUTO_PADS)
_INDEX_TYPE = Attribute("index_element_type", CHOICE, "i64", tuple(INDEX_TYPES))
_DILATIONS = _ints("dilations", None)
_KERNEL, _STRIDES, _PADS_BEGIN, _PADS_END = (_ints(n) for n in ("kernel", "strides",
                                                                "pads_begin", "pads_end"))


def _avg_pool(opset, rounding, dilations=()):
    return Version("AvgPool", opset, (_KERNEL, _STRIDES, _PADS_BEGIN, _PADS_END,
                                      Attribute("exclude-pad", BOOL), _AUTO_PAD, rounding)
                   + dilations)


def _max_pool(opset, rounding):
    return Version("MaxPool", opset, (_STRIDES, _DILATIONS, _PADS_BEGIN, _PADS_END, _KERNEL,
                                      rounding, _AUTO_PAD, _INDEX_TYPE,
                                      Attribute("axis", INT, 0)), outputs=2)


def _onnx_pool(onnx_op, flag, outputs):
    """The "ovpool" op standing for an ONNX operator: ONNX's attributes (names, spelling and
    defaults of the operator spec, in the order ONNX lists them) and ``flag``, its own one."""
    return Version(f"Onnx{onnx_op}", "ovpool", tuple(sorted(
        (Attribute("auto_pad", ONNX_AUTO_PAD, "NOTSET"), _DILATIONS, _ints("kernel_shape"),
         _ints("pads", None), _ints("strides", None),
         *(Attribute(name, ONNX_FLAG, 0) for name in ("ceil_mode", flag))),
        key=lambda a: a.name)), outputs=outputs, converts=onnx_op)


# The ai.onnx opset whose rules (attributes, element types) the Onnx* ops carry: the newest
# version of both operators; every older one is a special case of it.
ONNX_OPSET = 22

# Every version, oldest first; an op's last version is the one its "ovpool" opset form has.
VERSIONS = {
    "AvgPool": (_avg_pool(1, _rounding(2)), _avg_pool(14, _rounding(3)),
                _avg_pool(16, _rounding(3), (_DILATIONS,))),
    "MaxPool": (Version("MaxPool", 1, (_STRIDES, _PADS_BEGIN, _PADS_END, _KERNEL, _rounding(2),
                                       _AUTO_PAD)),
                _max_pool(8, _rounding(2)), _max_pool(14, _rounding(3))),
    "AdaptiveAvgPool": (Version("AdaptiveAvgPool", 8, (), inputs=2),),
    "AdaptiveMaxPool": (Version("AdaptiveMaxPool", 8, (_INDEX_TYPE,), inputs=2, outputs=2),),
    # ONNX's pooling operators with ONNX's attributes: see ovpool.ops.onnx_pooling.
    "OnnxAveragePool": (_onnx_pool("AveragePool", "count_include_pad", 1),),
    "OnnxMaxPool": (_onnx_pool("MaxPool", "storage_order", 2),),
}

# The OpenVINO op versions ovpool runs, by (type, opset number).
OPENVINO_OPS = {(op, v.opset): v for op, versions in VERSIONS.items() for v in versions
                if v.opset != "ovpool"}
# The "ovpool" opset: AvgPool, MaxPool, AdaptiveAvgPool and AdaptiveMaxPool carry the
# attributes and semantics of the newest native version of their op; the Onnx* ops carry ONNX's.
OVPOOL_OPSET = {op: versions[-1].opset for op, versions in VERSIONS.items()
                if versions[-1].opset != "ovpool"}
OVPOOL_ONLY = {op: versions[-1] for op, versions in VERSIONS.items()
               if versions[-1].opset == "ovpool"}


def defaults(op):
    """{name: default} of the attributes of ``op``'s newest version that have a default value:
    the keyword defaults of the numpy API (:mod:`ovpool.pooling`)."""
    return {a.name: a.default for a in VERSIONS[op][-1].attributes
            if a.default is not REQUIRED and a.default is not None}


def version(op, opset):
    """The :class:`Version` of ``op`` in an IR's opset number (or "ovpool")."""
    if opset == "ovpool":
        return OVPOOL_ONLY.get(op) or OPENVINO_OPS[(op, OVPOOL_OPSET[op])]
    return OPENVINO_OPS[(op, opset)]
