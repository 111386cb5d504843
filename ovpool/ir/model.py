"""The parsed IR: frozen dataclasses for dimensions, ports, layers, edges and the model.

Nothing here reads files or runs anything; :mod:`ovpool.ir.reader` builds these objects and
:mod:`ovpool.runtime` compiles them.
"""

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Optional

import numpy as np

from .._limits import INT64_MAX
from ..errors import BadAttributeError, OvpoolError
from .element_types import dtype_for

__all__ = ["Dimension", "PartialShape", "Attributes", "Port", "Layer", "Edge", "TensorInfo",
           "Model"]


@dataclass(frozen=True)
class Dimension:
    """One dimension: static when ``min == max``; ``max`` is None when unbounded."""

    min: int = 0
    max: Optional[int] = None

    @classmethod
    def static(cls, length):
        return cls(length, length)

    @property
    def is_static(self):
        return self.min == self.max

    def admits(self, length):
        return self.min <= length and (self.max is None or length <= self.max)

    def __str__(self):
        if self.is_static:
            return str(self.min)
        if self.min == 0 and self.max is None:
            return "?"
        return f"{self.min}..{'' if self.max is None else self.max}"


class PartialShape(tuple):
    """A tuple of :class:`Dimension`; prints like OpenVINO (``[?,3,1..10,8]``)."""

    @property
    def is_static(self):
        return all(d.is_static for d in self)

    def to_shape(self):
        """The dims as ints (static dims) or None (dynamic ones)."""
        return tuple(d.min if d.is_static else None for d in self)

    def admits(self, shape):
        return len(shape) == len(self) and all(d.admits(n) for d, n in zip(self, shape))

    def __str__(self):
        return "[" + ",".join(str(d) for d in self) + "]"

    def __repr__(self):
        return f"PartialShape({self})"


_INT = re.compile(r"^\s*-?[0-9]+\s*$")
_REQUIRED = object()


def shown(text, limit=60):
    """``text`` (None reads as "") quoted for an error message, cut short when it is long."""
    text = "" if text is None else text
    return repr(text if len(text) <= limit else text[:limit - 3] + "...")


def int64_or_none(text):
    """A decimal integer (already matched, optional sign and surrounding spaces) as an int, or
    None when it does not fit in int64. The digits are counted first, which keeps ``int()``
    away from its slow path on thousands of them."""
    if len(text.strip().lstrip("-").lstrip("0")) > 19:
        return None
    value = int(text)
    return value if -INT64_MAX - 1 <= value <= INT64_MAX else None


def _int64(text, name, raw):
    """``text`` (matched by ``_INT``, part of the attribute's ``raw`` value) as an int."""
    value = int64_or_none(text)
    if value is None:
        raise BadAttributeError(f"attribute '{name}' is {shown(raw)}; {shown(text.strip(), 30)} "
                                "does not fit in a 64-bit integer")
    return value


class Attributes(Mapping):
    """A layer's ``<data>`` attributes (strings), with typed getters that validate.

    Each getter raises :class:`ovpool.errors.BadAttributeError` naming the attribute and the
    offending value (the runtime adds the layer's location). Without a ``default`` the attribute
    is required.
    """

    __slots__ = ("_values",)

    def __init__(self, mapping=None):
        self._values = dict(mapping or {})

    def __getitem__(self, name):
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def __repr__(self):
        return f"Attributes({self._values!r})"

    def _raw(self, name, default):
        raw = self.get(name)
        if raw is None and default is _REQUIRED:
            raise BadAttributeError(f"attribute '{name}' is required")
        return raw

    def ints(self, name, default=_REQUIRED):
        """A comma-separated list of ints (``"2, 2"``); ``""`` is the empty list."""
        raw = self._raw(name, default)
        if raw is None:
            return default
        parts = raw.split(",") if raw.strip() else []
        if not all(_INT.match(p) for p in parts):
            raise BadAttributeError(
                f"attribute '{name}' is {shown(raw)}; expected comma-separated integers")
        return tuple(_int64(p, name, raw) for p in parts)

    def int(self, name, default=_REQUIRED):
        raw = self._raw(name, default)
        if raw is None:
            return default
        if not _INT.match(raw):
            raise BadAttributeError(f"attribute '{name}' is {shown(raw)}; expected an integer")
        return _int64(raw, name, raw)

    def bool(self, name, default=_REQUIRED):
        raw = self._raw(name, default)
        if raw is None:
            return default
        value = {"true": True, "1": True, "false": False, "0": False}.get(raw.strip().lower())
        if value is None:
            raise BadAttributeError(f"attribute '{name}' is {shown(raw)}; expected true or false")
        return value

    def choice(self, name, choices, default=_REQUIRED):
        """One of ``choices`` (case-insensitive), returned lower-case."""
        raw = self._raw(name, default)
        if raw is None:
            return default
        value = raw.strip().lower()
        if value not in choices:
            raise BadAttributeError(
                f"attribute '{name}' is {shown(raw)}; expected one of {', '.join(choices)}")
        return value

    def dtype(self, name, default=_REQUIRED):
        """An element type name (``f32``) as a numpy dtype."""
        raw = self._raw(name, default)
        if raw is None:
            return default
        try:
            return dtype_for(raw.strip())
        except OvpoolError as error:
            raise error.with_context(f"attribute '{name}'") from None


@dataclass(frozen=True)
class Port:
    id: int
    dims: PartialShape
    element_type: Optional[str] = None      # from `precision`, when present
    names: tuple = ()                      # tensor names from the `names` attribute


@dataclass(frozen=True, eq=False)
class Layer:
    id: str
    name: str
    type: str
    version: str
    attributes: Attributes
    inputs: tuple      # of Port, in XML order
    outputs: tuple     # of Port, in XML order
    file: str = ""
    line: Optional[int] = None
    constant: Optional[np.ndarray] = None   # Const layers: the value read from the .bin
    rt_info: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    def __repr__(self):
        return f"<Layer id={self.id} {self.name!r} {self.type}-{self.version}>"

    @property
    def opset(self):
        """The opset number of ``version="opsetN"`` (None for other versions)."""
        match = re.fullmatch(r"opset(\d+)", self.version or "")
        return int(match.group(1)) if match else None

    @property
    def context(self):
        """Where this layer is, for error messages: file, line, id, name, type and version."""
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: layer id={self.id} name={self.name!r} type={self.type} version={self.version}"


@dataclass(frozen=True)
class Edge:
    from_layer: str
    from_port: int
    to_layer: str
    to_port: int
    line: Optional[int] = None


@dataclass(frozen=True)
class TensorInfo:
    """A model input or output: its name (first tensor name, else the layer name), every tensor
    name, element type, numpy dtype and partial shape."""

    name: str
    names: tuple
    element_type: str
    dtype: np.dtype
    shape: PartialShape
    layer: Layer

    def __str__(self):
        return f"{self.name}: {self.element_type}{self.shape}"


@dataclass(frozen=True, eq=False)
class Model:
    """A parsed IR model. ``layers`` keeps XML order; ``inputs`` are the Parameters in XML
    order; ``outputs`` the Results in XML order."""

    path: str
    bin_path: Optional[str]
    ir_version: int
    name: str
    layers: tuple
    edges: tuple
    inputs: tuple
    outputs: tuple
    rt_info: MappingProxyType = field(default_factory=lambda: MappingProxyType({}))

    def layer(self, layer_id):
        return self._by_id[layer_id]

    @property
    def _by_id(self):
        by_id = self.__dict__.get("_by_id_cache")
        if by_id is None:
            by_id = {layer.id: layer for layer in self.layers}
            object.__setattr__(self, "_by_id_cache", by_id)
        return by_id

    def __repr__(self):
        inputs = ", ".join(str(t) for t in self.inputs)
        outputs = ", ".join(str(t) for t in self.outputs)
        return f"<ovpool.Model {self.name!r} ({inputs}) -> ({outputs}), {len(self.layers)} layers>"
