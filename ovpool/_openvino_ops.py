"""The OpenVINO bridge's op classes: ``openvino.Op`` subclasses built from ovpool's op table.

Imported by :mod:`ovpool.openvino` when OpenVINO is used (importing this module imports
``openvino``). Two kinds of class, one subclass per row of :mod:`ovpool._opschema`:

* :data:`EXECUTION_OPS`, the "ovpool" opset: an op's newest version (AvgPool-16's attributes and
  semantics for ``AvgPool``, ...) and the ``Onnx*`` ops with ONNX's. Their ``evaluate`` runs
  ovpool's IR-runtime op (:mod:`ovpool.ops`) on numpy views of the tensors OpenVINO hands
  over and writes straight into the output tensors' memory.
* :data:`READERS`, one per native op version: registered with ``core.add_extension``, they make
  ``core.read_model`` build an execution op wherever the IR has that native op.

Each class visits its version's attributes in the table's order (so ``save_model`` writes them
as OpenVINO's own ops do), with values whose Python types tell OpenVINO's attribute visitor the
C++ type to read: a list of ints, a bool, a string or an int. :data:`_NONE` marks a list
attribute the IR does not have (the visitor refuses empty lists and int arrays, and leaves a
value alone when the IR lacks the attribute); absent attributes are neither handed to ovpool's
op factory, which then applies its default or reports them missing, nor written back.
"""

import contextlib
import functools
import os

import numpy as np
import openvino as ov
from openvino.frontend.onnx import ConversionExtension

from ._opschema import BOOL, INTS, OPENVINO_OPS, OVPOOL_ONLY, REQUIRED, VERSIONS
from ._vocabulary import INDEX_TYPES
from .config import get_num_threads
from .errors import OvpoolError
from .ir.element_types import dtype_for
from .ir.model import Attributes, Layer, Port
from .ops import Spec, lookup
from .openvino import OPSET, _context, _recorded

__all__ = ["EXECUTION_OPS", "READERS", "ONNX_CONVERSIONS", "replacement", "onnx_conversion"]

_NONE = [np.iinfo(np.int64).min]
# The visitor's value of an attribute the IR must have, by kind (a list: _NONE).
_BLANK = {BOOL: False}
_OV_INDEX_TYPES = {dtype: getattr(ov.Type, name) for name, dtype in INDEX_TYPES.items()}


def _visited(version):
    """A version's attributes as the visitor takes them: {name: default or stand-in}."""
    return {a.name: _NONE if a.kind == INTS else _BLANK[a.kind] if a.default is REQUIRED
            else a.default for a in version.attributes}


# The CPUs this process may use, read before OpenVINO pins any thread.
_PROCESS_CPUS = frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None


@contextlib.contextmanager
def _unpinned():
    """Let the kernels' threads use every CPU of the process while the calling thread runs
    them. OpenVINO's CPU plugin pins the thread that runs a node to one core
    (ENABLE_CPU_PINNING), and OpenMP threads started from it inherit that mask: ovpool's
    second kernel thread then shared the first one's core (adaptive pooling case 7 took
    12.7 ms inside OpenVINO instead of 6.8 ms)."""
    pinned = None
    if _PROCESS_CPUS is not None and get_num_threads() > 1:
        mask = os.sched_getaffinity(0)
        if mask != _PROCESS_CPUS:
            pinned = mask
            os.sched_setaffinity(0, _PROCESS_CPUS)
    try:
        yield
    finally:
        if pinned is not None:
            os.sched_setaffinity(0, pinned)


def _absent(value):
    return isinstance(value, list) and value == _NONE


def _attribute_text(value):
    """An attribute value as IR XML writes it, which is what ovpool's op factories parse."""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, np.ndarray)):
        return ",".join(str(int(v)) for v in value)
    return str(value)


def _element_dtype(element_type):
    """The numpy dtype of an OpenVINO element type; ovpool's bf16 is ml_dtypes.bfloat16."""
    return dtype_for(element_type.get_type_name())


def _tensor_array(tensor):
    """A numpy view of an ``openvino.Tensor``'s memory with the right dtype (no copy).

    ``Tensor.data`` shows bf16 memory as float16; it is reinterpreted as ml_dtypes.bfloat16,
    which ovpool's kernels recognise.
    """
    data = tensor.data
    dtype = _element_dtype(tensor.get_element_type())
    return data if data.dtype == dtype else data.view(dtype)


def _ovpool_op(version, ir_version, attributes, name):
    """ovpool's IR-runtime op for these attributes of an op :class:`Version`; it parses and
    validates them. ``ir_version`` is the IR's: ``"opset8"`` for a native op, :data:`OPSET`
    for an execution op."""
    type_name, n_inputs, n_outputs = version.op, version.inputs, version.outputs
    texts = {k: _attribute_text(v) for k, v in attributes.items() if not _absent(v)}
    layer = Layer(id=name, name=name, type=type_name, version=ir_version,
                  attributes=Attributes(texts),
                  inputs=tuple(Port(i, ()) for i in range(n_inputs)),
                  outputs=tuple(Port(n_inputs + i, ()) for i in range(n_outputs)))
    try:
        return lookup(layer)(layer)
    except OvpoolError as error:
        raise _recorded(error.with_context(_context(type_name, ir_version, name))) from None


class _ExecutionOp(ov.Op):
    """An op of the "ovpool" opset; each one is a subclass naming its :class:`Version`
    (:data:`EXECUTION_OPS`)."""

    VERSION = None          # its ovpool._opschema.Version
    DEFAULTS = {}           # its attributes as the visitor takes them (_visited)

    def __init__(self, inputs=None, attributes=None):
        # OpenVINO's OpExtension calls this without arguments, then sets the inputs, visits
        # the attributes read from the IR and validates.
        super().__init__(self)
        # Built empty by OpExtension, the first visit reads every attribute from the IR.
        self._reading = attributes is None
        self._attributes = {**self.DEFAULTS, **(attributes or {})}
        self._op = None
        self._out_shapes = {}
        self._indices_read = None
        if inputs is not None:
            self.set_arguments(inputs)
            self.constructor_validate_and_infer_types()

    def get_type_info(self):
        return type(self).class_type_info

    @property
    def attributes(self):
        """The attributes, as ``get_attributes()`` of OpenVINO's native ops gives them."""
        return {k: v for k, v in self._attributes.items() if not _absent(v)}

    def visit_attributes(self, visitor):
        # The visitor does not say whether it reads (read_model) or writes (save_model,
        # clone); both leave the dict holding the current values. Only a node built empty
        # by OpExtension reads, and absent attributes are never written.
        values = {k: v for k, v in self._attributes.items()
                  if self._reading or not _absent(v)}
        visitor.on_attributes(values)
        self._reading = False
        values = {**self._attributes, **values}
        if values != self._attributes:
            self._attributes = values
            self._op, self._out_shapes = None, {}
        return True

    def _ovpool_op(self):
        if self._op is None:
            self._op = _ovpool_op(self.VERSION, OPSET, self._attributes,
                                  self.get_friendly_name())
        return self._op

    def _raise(self, error):
        context = _context(self.VERSION.op, OPSET, self.get_friendly_name())
        if error.context and context in error.context:
            return _recorded(error)     # raised by _ovpool_op, which named the layer
        return _recorded(error.with_context(context))

    def _input_specs(self):
        shape = self.get_input_partial_shape(0)
        dims = None if shape.rank.is_dynamic else tuple(
            d.get_length() if d.is_static else None for d in shape)
        specs = [Spec(dims, _element_dtype(self.get_input_element_type(0)))]
        if self.VERSION.inputs == 2:
            specs.append(self._output_size_spec())
        return specs

    def _output_size_spec(self):
        # The output size is usually a Constant; otherwise only the output rank is known.
        source = self.input_value(1).get_node()
        value = None
        if source.get_type_name() == "Constant":
            value = np.asarray(source.get_data())
        dtype = _element_dtype(self.get_input_element_type(1))
        return Spec(None if value is None else value.shape, dtype, value)

    def validate_and_infer_types(self):
        try:
            specs = self._ovpool_op().infer(*self._input_specs())
        except OvpoolError as error:
            raise self._raise(error) from None
        if self.VERSION.inputs == 2 and specs[0].shape is None:
            specs = self._adaptive_rank_only(specs)
        element_type = self.get_input_element_type(0)
        for index, spec in enumerate(specs):
            shape = ov.PartialShape.dynamic() if spec.shape is None else ov.PartialShape(
                [ov.Dimension() if d is None else ov.Dimension(d) for d in spec.shape])
            self.set_output_type(index, element_type if index == 0 else
                                 _OV_INDEX_TYPES[spec.dtype], shape)

    def _adaptive_rank_only(self, specs):
        # Data rank unknown but the output-size input has a static length: the output rank
        # is 2 + that length, as OpenVINO's own adaptive ops infer.
        sizes = self.get_input_partial_shape(1)
        if sizes.rank.is_static and sizes.rank.get_length() == 1 and sizes[0].is_static:
            shape = (None,) * (2 + sizes[0].get_length())
            return [Spec(shape, s.dtype) for s in specs]
        return specs

    def clone_with_new_inputs(self, new_inputs):
        clone = type(self)(new_inputs, self._attributes)
        clone.set_friendly_name(self.get_friendly_name())
        return clone

    def has_evaluate(self):
        return True

    def _output_shape(self, arrays):
        key = (arrays[0].shape, *(tuple(a.reshape(-1).tolist()) for a in arrays[1:]))
        shape = self._out_shapes.get(key)
        if shape is None:
            specs = [Spec(a.shape, a.dtype, a if i else None) for i, a in enumerate(arrays)]
            shape = self._out_shapes[key] = self._ovpool_op().infer(*specs)[0].shape
        return shape

    def _indices_used(self):
        # Asked of the node the plugin runs, whose graph no longer changes.
        if self._indices_read is None:
            self._indices_read = bool(self.output(1).get_target_inputs())
        return self._indices_read

    def evaluate(self, outputs, inputs):
        # By index: iterating OpenVINO's TensorVector costs ~100 us per call.
        arrays = [_tensor_array(inputs[i]) for i in range(len(inputs))]
        try:
            shape = self._output_shape(arrays)
            results = []
            for tensor in (outputs[i] for i in range(len(outputs))):
                # The numpy view's shape: reading Tensor.shape costs ~70 us per call.
                result = _tensor_array(tensor)
                if result.shape != shape:
                    # Dynamic models hand over output tensors of a placeholder shape;
                    # set_shape reallocates them before ovpool writes into their memory.
                    tensor.shape = list(shape)
                    result = _tensor_array(tensor)
                results.append(result)
            op = self._ovpool_op()
            with _unpinned():
                if len(results) == 2 and self._indices_used():
                    op.run(*arrays, out=results[0], out_indices=results[1])
                else:
                    # Single-output ops, or a max pool whose indices nothing reads: the
                    # CPU plugin may still hand over an indices tensor, left unwritten.
                    (op.run_first or op.run)(*arrays, out=results[0])
        except OvpoolError as error:
            raise self._raise(error) from None
        return True


def _execution_attributes(version, attributes):
    """A native op's attributes as its execution op's: the version-specific attributes a
    version lacks take the values that make it a special case of the latest one."""
    values = {k: v for k, v in attributes.items() if not _absent(v)}
    kernel = values.get("kernel")
    latest = VERSIONS[version.op][-1]
    if latest.attribute("dilations") and "dilations" not in values and kernel is not None:
        values["dilations"] = [1] * len(kernel)
    return values


def replacement(version, inputs, attributes, name):
    """The execution node standing in for a node of a native op :class:`Version` with these
    inputs and attributes, and how many of its outputs the native node has."""
    # The native version's own rules first (AvgPool-1 knows no ceil_torch, ...).
    _ovpool_op(version, f"opset{version.opset}", attributes, name)
    node = EXECUTION_OPS[version.op](inputs, _execution_attributes(version, attributes))
    node.set_friendly_name(name)
    return node, version.outputs


class _Reader(ov.Op):
    """Builds the execution op for a native layer while ``core.read_model`` reads it; each
    native op version has a subclass naming its :class:`Version` (:data:`READERS`)."""

    VERSION = None
    DEFAULTS = {}

    def __init__(self):
        super().__init__(self)
        self._attributes = dict(self.DEFAULTS)
        self._node = None
        self._n_outputs = 1

    def get_type_info(self):
        return type(self).class_type_info

    def visit_attributes(self, visitor):
        values = dict(self._attributes)
        visitor.on_attributes(values)
        self._attributes = values
        return True

    def validate_and_infer_types(self):
        if self._node is None:
            self._node, self._n_outputs = replacement(
                self.VERSION, self.input_values(), self._attributes, self.get_friendly_name())

    def outputs(self):
        # OpenVINO's OpExtension puts the nodes of these outputs in the graph.
        return self._node.outputs()[:self._n_outputs]

    def clone_with_new_inputs(self, new_inputs):
        return self._node.clone_with_new_inputs(new_inputs)


def _subclass(base, name, version, type_info):
    return type(name, (base,), {"__module__": __name__, "__qualname__": name,
                                "class_type_info": type_info, "VERSION": version,
                                "DEFAULTS": _visited(version)})


# {"AvgPool": class, ...}: the execution ops, each with its op's newest version.
EXECUTION_OPS = {op: _subclass(_ExecutionOp, f"Ovpool{op}", versions[-1],
                               ov.DiscreteTypeInfo(op, OPSET))
                 for op, versions in VERSIONS.items()}
# {("MaxPool", 8): class, ...}: the readers of the native op versions.
READERS = {(op, opset): _subclass(_Reader, f"Ovpool{op}{opset}Reader", version,
                                  ov.DiscreteTypeInfo(op, f"opset{opset}"))
           for (op, opset), version in OPENVINO_OPS.items()}
# {"AveragePool": "OnnxAveragePool", ...}: the ONNX operators the ONNX frontend converts.
ONNX_CONVERSIONS = {version.converts: op for op, version in OVPOOL_ONLY.items()}


@functools.lru_cache(maxsize=None)
def onnx_conversion(onnx_type):
    """OpenVINO's ONNX frontend extension turning ``onnx_type`` nodes into ovpool ops."""
    type_name = ONNX_CONVERSIONS[onnx_type]
    defaults = EXECUTION_OPS[type_name].DEFAULTS

    def convert(node):
        # The node's attributes as written in the ONNX model; absent ones keep ONNX's defaults.
        attributes = {name: node.get_attribute(name) for name in defaults
                      if node.has_attribute(name)}
        for name, value in attributes.items():
            if isinstance(value, (list, tuple)):
                attributes[name] = [int(v) for v in value]
        # Errors name the attribute; OpenVINO adds the ONNX node they come from.
        op = EXECUTION_OPS[type_name]([node.get_input(0)], attributes)
        # The frontend maps the node's outputs in order: an ONNX MaxPool without the Indices
        # output uses the values output only.
        return op.outputs()

    return ConversionExtension(onnx_type, convert)
