"""The OpenVINO bridge: ovpool's pooling kernels as OpenVINO operations.

OpenVINO stays optional: importing this module does not import ``openvino``; the operation
classes are built on first use. The module is named after what it bridges to; inside it,
``import openvino`` still means the installed package, because Python 3 imports are absolute.

Three kinds of classes, all ``openvino.Op`` subclasses:

* **Execution ops**, the "ovpool" opset: ``AvgPool``, ``MaxPool``, ``AdaptiveAvgPool`` and
  ``AdaptiveMaxPool`` with ``version="ovpool"`` and the attributes (and semantics) of AvgPool-16,
  MaxPool-14 (both outputs), AdaptiveAvgPool-8 and AdaptiveMaxPool-8. Their ``evaluate`` runs
  :mod:`ovpool.pooling` on numpy views of the tensors OpenVINO hands over and writes straight
  into the output tensors' memory. ``openvino.save_model`` writes them as ``version="ovpool"``
  layers, which a Core with :func:`add_extensions` reads back.
* **ONNX execution ops**, also of the "ovpool" opset: ``OnnxAveragePool`` and ``OnnxMaxPool``,
  carrying an ONNX node's attributes and ONNX's semantics (:mod:`ovpool.ops.onnx_pooling`),
  which OpenVINO's own ops cannot express exactly. :func:`onnx_extensions` gives the ONNX
  frontend conversions that build them from ONNX AveragePool and MaxPool nodes.
* **Readers**, one per native op version (``("MaxPool", "opset8")`` ...): registered with
  ``core.add_extension``, they make ``core.read_model`` build an execution op wherever the IR
  has that native op. A reader never stays in the graph: OpenVINO's Python OpExtension takes the
  new node's ``outputs()``, and a reader returns those of its execution op.

Why not one class carrying the native type info: OpenVINO identifies ops by (type name, version)
string, so the CPU plugin takes a Python op typed ``("AvgPool", "opset1")`` for its own AvgPool,
casts it and fails ("Unsupported pooling type", or garbage read from the wrong object). The
execution ops therefore carry a type info OpenVINO does not know. See README, "OpenVINO bridge".

Attribute parsing, validation and shape inference are those of ovpool's IR runtime
(:mod:`ovpool.ops.pooling`, built on :mod:`ovpool._shapes`): each node builds the runtime's op
from its attributes, once.
"""

import contextlib
import functools
import importlib.util
import os
import re
import threading

import numpy as np

from ._limits import check_allocation
from .config import get_num_threads
from .errors import BadArgumentError, OvpoolError, UnsupportedError
from .ir.element_types import dtype_for
from .ir.model import Attributes, Layer, Port
from .ops import OVPOOL_ONLY, Spec, lookup

__all__ = ["OPS", "OPSET", "ONNX_OPS", "IMPLEMENTATIONS", "available", "op_classes",
           "add_extensions", "onnx_extensions", "replace_pooling", "extension_path",
           "Extensions", "compile_model", "CompiledModel", "INSTALL_HINT", "BUILD_HINT"]

INSTALL_HINT = "install it with: pip install 'ovpool[openvino]' (or pip install openvino)"
BUILD_HINT = "build it with: ovpool build-extension (needs the openvino package, cmake and a C++17 compiler)"
# Which ops run ovpool's pooling inside OpenVINO: the native extension library (C++, loaded with
# core.add_extension(path)) or the openvino.Op subclasses of this module. "auto" picks the
# native library when it is built for the installed OpenVINO.
IMPLEMENTATIONS = ("auto", "native", "python")

# Attributes in the order OpenVINO's own ops visit them (so save_model writes them in the same
# order), with defaults whose Python types tell OpenVINO's attribute visitor the C++ type to
# read: a list of ints, a bool, a string or an int. _NONE marks a list attribute the IR does
# not have (the visitor refuses empty lists and int arrays, and leaves a value alone when the
# IR lacks the attribute); absent attributes are neither handed to ovpool's op factory, which
# then applies its default or reports them missing, nor written back.
_NONE = [np.iinfo(np.int64).min]
_AVG = {"kernel": _NONE, "strides": _NONE, "pads_begin": _NONE, "pads_end": _NONE,
        "exclude-pad": False, "auto_pad": "explicit", "rounding_type": "floor"}
_MAX1 = {"strides": _NONE, "pads_begin": _NONE, "pads_end": _NONE, "kernel": _NONE,
         "rounding_type": "floor", "auto_pad": "explicit"}
_MAX8 = {"strides": _NONE, "dilations": _NONE, "pads_begin": _NONE, "pads_end": _NONE,
         "kernel": _NONE, "rounding_type": "floor", "auto_pad": "explicit",
         "index_element_type": "i64", "axis": 0}
# The native ops the bridge takes over: their attributes, and the execution op standing in.
_NATIVE = {
    ("AvgPool", 1): _AVG,
    ("AvgPool", 14): _AVG,
    ("AvgPool", 16): {**_AVG, "dilations": _NONE},
    ("MaxPool", 1): _MAX1,
    ("MaxPool", 8): _MAX8,
    ("MaxPool", 14): _MAX8,
    ("AdaptiveAvgPool", 8): {},
    ("AdaptiveMaxPool", 8): {"index_element_type": "i64"},
}
OPS = tuple(f"{name}-{opset}" for name, opset in _NATIVE)

# ONNX's pooling attributes, spelled and defaulted as in the operator specs (see
# ovpool.ops.onnx_pooling), in the order ONNX lists them.
_ONNX_AVG = {"auto_pad": "NOTSET", "ceil_mode": 0, "count_include_pad": 0, "dilations": _NONE,
             "kernel_shape": _NONE, "pads": _NONE, "strides": _NONE}
_ONNX_MAX = {"auto_pad": "NOTSET", "ceil_mode": 0, "dilations": _NONE, "kernel_shape": _NONE,
             "pads": _NONE, "storage_order": 0, "strides": _NONE}
# The ONNX operators whose conversion ovpool takes over, and the ovpool op standing in.
_ONNX_CONVERSIONS = {"AveragePool": "OnnxAveragePool", "MaxPool": "OnnxMaxPool"}
ONNX_OPS = tuple(_ONNX_CONVERSIONS)

OPSET = "ovpool"
# Execution ops: attributes and input / output counts. The first four have the semantics of
# the newest native version of their op (every native version above is a special case); the
# Onnx* ops have ONNX's (ovpool.ops.onnx_pooling).
_EXECUTION = {
    "AvgPool": (_NATIVE[("AvgPool", 16)], 1, 1),
    "MaxPool": (_MAX8, 1, 2),
    "AdaptiveAvgPool": ({}, 2, 1),
    "AdaptiveMaxPool": (_NATIVE[("AdaptiveMaxPool", 8)], 2, 2),
    "OnnxAveragePool": (_ONNX_AVG, 1, 1),
    "OnnxMaxPool": (_ONNX_MAX, 1, 2),
}
assert set(OVPOOL_ONLY) <= set(_EXECUTION)


def available():
    """True when the ``openvino`` package is installed (checked without importing it)."""
    return importlib.util.find_spec("openvino") is not None


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


def _openvino():
    try:
        import openvino
    except ImportError as error:
        raise UnsupportedError(f"the OpenVINO bridge needs the openvino package ({error}); "
                               f"{INSTALL_HINT}") from None
    return openvino


def _select(ops):
    """``ops`` (None: all) as a list of (type, opset) keys. Names are ``"MaxPool-8"`` or a
    bare type (``"MaxPool"``: every version ovpool provides)."""
    if ops is None:
        return list(_NATIVE)
    if isinstance(ops, str):
        ops = [ops]
    keys = []
    for name in ops:
        matched = [key for key in _NATIVE if name in (key[0], f"{key[0]}-{key[1]}")]
        if not isinstance(name, str) or not matched:
            raise BadArgumentError(f"unknown ovpool OpenVINO op {name!r}; expected one of "
                                   f"{', '.join(OPS)} or a type name such as 'MaxPool'")
        keys.extend(k for k in matched if k not in keys)
    return keys


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


def _context(type_name, version, name):
    return f"layer {name!r} type={type_name} version={version} (ovpool's OpenVINO bridge)"


# The last OvpoolError the bridge raised inside OpenVINO, with a sequence number: OpenVINO
# reports it as a RuntimeError whose text ends with the Python frame it came from, so the
# callers below raise the recorded error itself (naming layer and attribute) instead.
_RAISED = {"count": 0, "error": None}
_RAISED_LOCK = threading.Lock()


def _recorded(error):
    with _RAISED_LOCK:
        _RAISED["count"] += 1
        _RAISED["error"] = error
    return error


def _raised_count():
    with _RAISED_LOCK:
        return _RAISED["count"]


def _raised_since(count):
    """The error the bridge raised since ``_raised_count()`` was ``count``, else None."""
    with _RAISED_LOCK:
        return _RAISED["error"] if _RAISED["count"] != count else None


def _ovpool_op(type_name, version, attributes, name, n_inputs, n_outputs):
    """ovpool's IR-runtime op for these attributes; it parses and validates them. ``version``
    is the IR's: ``"opset8"`` for a native op, :data:`OPSET` for an execution op."""
    texts = {k: _attribute_text(v) for k, v in attributes.items() if not _absent(v)}
    layer = Layer(id=name, name=name, type=type_name, version=version,
                  attributes=Attributes(texts),
                  inputs=tuple(Port(i, ()) for i in range(n_inputs)),
                  outputs=tuple(Port(n_inputs + i, ()) for i in range(n_outputs)))
    try:
        return lookup(layer)(layer)
    except OvpoolError as error:
        raise _recorded(error.with_context(_context(type_name, version, name))) from None


@functools.lru_cache(maxsize=None)
def op_classes():
    """{"AvgPool": class, ...}: the execution ops of the "ovpool" opset, built on first use."""
    return {name: _execution_class(name) for name in _EXECUTION}


@functools.lru_cache(maxsize=None)
def _reader_classes():
    return {(name, opset): _reader_class(name, opset) for name, opset in _NATIVE}


def _execution_class(type_name):
    ov = _openvino()
    defaults, n_inputs, n_outputs = _EXECUTION[type_name]
    ov_index_types = {np.dtype(np.int32): ov.Type.i32, np.dtype(np.int64): ov.Type.i64}

    class ExecutionOp(ov.Op):
        class_type_info = ov.DiscreteTypeInfo(type_name, OPSET)

        def __init__(self, inputs=None, attributes=None):
            # OpenVINO's OpExtension calls this without arguments, then sets the inputs, visits
            # the attributes read from the IR and validates.
            super().__init__(self)
            # Built empty by OpExtension, the first visit reads every attribute from the IR.
            self._reading = attributes is None
            self._attributes = {**defaults, **(attributes or {})}
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
                self._op = _ovpool_op(type_name, OPSET, self._attributes,
                                      self.get_friendly_name(), n_inputs, n_outputs)
            return self._op

        def _raise(self, error):
            context = _context(type_name, OPSET, self.get_friendly_name())
            if error.context and context in error.context:
                return _recorded(error)     # raised by _ovpool_op, which named the layer
            return _recorded(error.with_context(context))

        def _input_specs(self):
            shape = self.get_input_partial_shape(0)
            dims = None if shape.rank.is_dynamic else tuple(
                d.get_length() if d.is_static else None for d in shape)
            specs = [Spec(dims, _element_dtype(self.get_input_element_type(0)))]
            if n_inputs == 2:
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
            if n_inputs == 2 and specs[0].shape is None:
                specs = self._adaptive_rank_only(specs)
            element_type = self.get_input_element_type(0)
            for index, spec in enumerate(specs):
                shape = ov.PartialShape.dynamic() if spec.shape is None else ov.PartialShape(
                    [ov.Dimension() if d is None else ov.Dimension(d) for d in spec.shape])
                self.set_output_type(index, element_type if index == 0 else
                                     ov_index_types[spec.dtype], shape)

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

    ExecutionOp.__name__ = ExecutionOp.__qualname__ = f"Ovpool{type_name}"
    return ExecutionOp


def _execution_attributes(type_name, attributes):
    """A native op's attributes as its execution op's: the version-specific attributes a
    version lacks take the values that make it a special case of the latest one."""
    values = {k: v for k, v in attributes.items() if not _absent(v)}
    kernel = values.get("kernel")
    if type_name in ("AvgPool", "MaxPool") and "dilations" not in values and kernel is not None:
        values["dilations"] = [1] * len(kernel)
    return values


def _replacement(type_name, opset, inputs, attributes, name):
    """The execution node standing in for a native node with these inputs and attributes."""
    _, n_inputs, n_outputs = _EXECUTION[type_name]
    native_outputs = 1 if (type_name, opset) == ("MaxPool", 1) else n_outputs
    # The native version's own rules first (AvgPool-1 knows no ceil_torch, ...).
    _ovpool_op(type_name, f"opset{opset}", attributes, name, n_inputs, native_outputs)
    node = op_classes()[type_name](inputs, _execution_attributes(type_name, attributes))
    node.set_friendly_name(name)
    return node, native_outputs


def _reader_class(type_name, opset):
    ov = _openvino()
    defaults = _NATIVE[(type_name, opset)]

    class Reader(ov.Op):
        """Builds the execution op for a native layer while ``core.read_model`` reads it."""

        class_type_info = ov.DiscreteTypeInfo(type_name, f"opset{opset}")

        def __init__(self):
            super().__init__(self)
            self._attributes = dict(defaults)
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
                self._node, self._n_outputs = _replacement(
                    type_name, opset, self.input_values(), self._attributes,
                    self.get_friendly_name())

        def outputs(self):
            # OpenVINO's OpExtension puts the nodes of these outputs in the graph.
            return self._node.outputs()[:self._n_outputs]

        def clone_with_new_inputs(self, new_inputs):
            return self._node.clone_with_new_inputs(new_inputs)

    Reader.__name__ = Reader.__qualname__ = f"Ovpool{type_name}{opset}Reader"
    return Reader


@functools.lru_cache(maxsize=None)
def _onnx_conversion(onnx_type):
    """OpenVINO's ONNX frontend extension turning ``onnx_type`` nodes into ovpool ops."""
    _openvino()
    from openvino.frontend.onnx import ConversionExtension

    type_name = _ONNX_CONVERSIONS[onnx_type]
    defaults = _EXECUTION[type_name][0]

    def convert(node):
        # The node's attributes as written in the ONNX model; absent ones keep ONNX's defaults.
        attributes = {name: node.get_attribute(name) for name in defaults
                      if node.has_attribute(name)}
        for name, value in attributes.items():
            if isinstance(value, (list, tuple)):
                attributes[name] = [int(v) for v in value]
        # Errors name the attribute; OpenVINO adds the ONNX node they come from.
        op = op_classes()[type_name]([node.get_input(0)], attributes)
        # The frontend maps the node's outputs in order: an ONNX MaxPool without the Indices
        # output uses the values output only.
        return op.outputs()

    return ConversionExtension(onnx_type, convert)


def onnx_extensions(ops=None):
    """Extensions for OpenVINO's ONNX frontend that convert ONNX pooling nodes into the ovpool
    ops carrying ONNX's exact semantics (``OnnxAveragePool``, ``OnnxMaxPool``).

    Use them with ``openvino.convert_model("model.onnx", extension=onnx_extensions())`` (then
    ``openvino.save_model`` writes ``version="ovpool"`` layers that ovpool's runtime and an
    extended Core read), or on a Core through :func:`add_extensions`.

    Parameters
    ----------
    ops : str or sequence of str, optional
        ONNX operator names among :data:`ONNX_OPS` (default: all).
    """
    names = list(ONNX_OPS) if ops is None else [ops] if isinstance(ops, str) else list(ops)
    for name in names:
        if name not in _ONNX_CONVERSIONS:
            raise BadArgumentError(f"unknown ONNX pooling operator {name!r}; expected one of "
                                   f"{', '.join(ONNX_OPS)}")
    return [_onnx_conversion(name) for name in names]


def extension_path():
    """The path of ovpool's native OpenVINO extension library, built for the installed OpenVINO.

    Load it into any OpenVINO process with ``core.add_extension(path)`` (C++ programs and
    ``benchmark_app -extensions PATH`` too). Raises :class:`ovpool.errors.UnsupportedError`
    saying why it is not available (OpenVINO missing, library not built, or built for another
    OpenVINO version) and how to get it.
    """
    from .native import build

    if not available():
        raise UnsupportedError(f"the native extension library needs the openvino package; "
                               f"{INSTALL_HINT}")
    info = build.build_info()
    if info is None:
        raise UnsupportedError(f"ovpool's native OpenVINO extension library is not built; "
                               f"{BUILD_HINT}")
    running = _openvino().get_version()
    if not build.same_release(info.get("openvino", ""), running):
        raise UnsupportedError(
            f"ovpool's native extension library {info['path']} was built for OpenVINO "
            f"{info.get('openvino')!r}, this process runs {running!r}; rebuild it: {BUILD_HINT}")
    return info["path"]


class Extensions(list):
    """The native ops :func:`add_extensions` took over (``"MaxPool-8"``, ...), and how:
    ``implementation`` is "native" (the extension library at ``path``) or "python"."""

    def __init__(self, ops, implementation, path=None):
        super().__init__(ops)
        self.implementation = implementation
        self.path = path


def _native_path_for(implementation, ops, onnx):
    """The library to load for ``add_extensions``'s arguments, or None for the Python ops."""
    if implementation not in IMPLEMENTATIONS:
        raise BadArgumentError(f"implementation={implementation!r}; expected one of "
                               f"{', '.join(IMPLEMENTATIONS)}")
    if implementation == "python":
        return None
    # The library registers every op and the ONNX conversions at once; a subset needs the
    # Python ops, which are registered one by one.
    whole = ops is None and onnx
    if implementation == "native":
        if not whole:
            raise BadArgumentError("the native extension library takes over every pooling op "
                                   "and the ONNX conversions: use ops=None, onnx=True, or "
                                   "implementation='python'")
        return extension_path()
    if not whole:
        return None
    try:
        return extension_path()
    except UnsupportedError:
        return None


def add_extensions(core, ops=None, onnx=True, implementation="auto"):
    """Make ``core.read_model`` run pooling layers with ovpool's kernels.

    Registers, per Core (it cannot be undone: use another Core for OpenVINO's native ops),
    the readers of the chosen native ops (``core.read_model`` then builds an ovpool execution
    op for each such layer), the "ovpool" opset (so models saved with those ops read back) and
    the ONNX frontend conversions.

    Parameters
    ----------
    core : openvino.Core
    ops : str or sequence of str, optional
        Which native ops to take over (default: all of :data:`OPS`): ``"MaxPool-8"``, or a type
        name for every version, e.g. ``"AdaptiveAvgPool"``.
    onnx : bool
        Also make ``core.read_model("model.onnx")`` convert ONNX AveragePool and MaxPool nodes
        into the ovpool ops with ONNX's exact semantics (:func:`onnx_extensions`).
    implementation : {"auto", "native", "python"}
        "native": the C++ extension library (:func:`extension_path`; no Python runs per call);
        "python": this module's ``openvino.Op`` classes; "auto" (default): the library when it
        is built for the installed OpenVINO and every op is taken over, else the Python ops.

    Returns
    -------
    Extensions
        The native ops taken over, a list with ``.implementation`` ("native" or "python").
    """
    keys = _select(ops)
    taken = [f"{name}-{opset}" for name, opset in keys]
    path = _native_path_for(implementation, ops, onnx)
    if path is not None:
        core.add_extension(path)
        return Extensions(taken, "native", path)
    for cls in op_classes().values():
        core.add_extension(cls)
    readers = _reader_classes()
    for key in keys:
        core.add_extension(readers[key])
    if onnx:
        for extension in onnx_extensions():
            core.add_extension(extension)
    return Extensions(taken, "python")


def replace_pooling(model, ops=None, implementation="auto"):
    """Swap the native pooling nodes of an in-memory ``openvino.Model`` for ovpool's.

    Each replacement keeps the node's inputs, attributes, friendly name and output tensor
    names; the model is then revalidated. Nodes already run by ovpool are left alone.
    ``implementation`` as for :func:`add_extensions` ("auto": the native library when it is
    built for the installed OpenVINO and ``ops`` is None).

    Returns
    -------
    int
        How many nodes were replaced.
    """
    _openvino()
    from openvino.utils import replace_node

    keys = set(_select(ops))
    native_path = _native_path_for(implementation, ops, True)
    replaced = 0
    for node in model.get_ordered_ops():
        info = node.get_type_info()
        version = info.version_id or ""
        opset = int(version[5:]) if version.startswith("opset") and version[5:].isdigit() else None
        if (info.name, opset) not in keys:
            continue
        if native_path is None:
            new, count = _replacement(info.name, opset, node.input_values(),
                                      node.get_attributes(), node.get_friendly_name())
        else:
            new, count = _native_replacement(node, native_path)
        for old_output, new_output in zip(node.outputs(), new.outputs()):
            new_output.get_tensor().set_names(old_output.get_names())
        replace_node(node, new.outputs()[:count])
        replaced += 1
    if replaced:
        model.validate_nodes_and_infer_types()
    return replaced


@functools.lru_cache(maxsize=None)
def _native_core(path):
    """A Core holding the native library, kept for the life of the process: the nodes it
    builds run code of that library."""
    core = _openvino().Core()
    core.add_extension(path)
    return core


def _native_replacement(node, path):
    """The native library's node standing in for ``node``, wired to ``node``'s inputs.

    Python cannot construct the library's C++ op classes, so ``node`` is written as a one-node
    IR (its Constant inputs kept, other inputs as Parameters of the same type and shape) and
    read back by a Core holding the library, whose reader builds the ovpool node; that node is
    then connected to the original inputs. Writing the IR borrows ``node``: its inputs are
    pointed at the stand-ins meanwhile and restored after."""
    import tempfile

    ov = _openvino()
    from openvino import opset1

    originals = node.input_values()
    stand_ins, parameters = [], []
    for value in originals:
        source = value.get_node()
        if source.get_type_name() == "Constant":
            stand_ins.append(opset1.constant(source.get_data()).output(0))
        else:
            parameter = opset1.parameter(value.get_partial_shape(), value.get_element_type())
            parameters.append(parameter)
            stand_ins.append(parameter.output(0))
    with tempfile.TemporaryDirectory(prefix="ovpool-node-") as folder:
        xml = os.path.join(folder, "node.xml")
        try:
            for index, value in enumerate(stand_ins):
                node.set_argument(index, value)
            ov.save_model(ov.Model(node.outputs(), parameters), xml, compress_to_fp16=False)
        finally:
            for index, value in enumerate(originals):
                node.set_argument(index, value)
        read = _native_core(path).read_model(xml)
    new = next(op for op in read.get_ordered_ops() if op.get_type_info().version_id == OPSET)
    for index, value in enumerate(originals):
        new.set_argument(index, value)
    new.set_friendly_name(node.get_friendly_name())
    return new, len(node.outputs())


# f32 models stay f32 on CPUs with bf16/f16 units (the plugin may lower precision otherwise),
# so OpenVINO's answers are comparable with ovpool's.
CPU_CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}


class CompiledModel:
    """An IR model compiled by OpenVINO's CPU plugin, with or without ovpool's pooling.

    ``compiled.infer(arrays)`` takes arrays in ``input_names`` order (or a dict by name) and
    returns a dict keyed by output name: the first tensor name, else the Result's name, as
    ovpool's own runtime names them.
    """

    def __init__(self, xml_path, bin_path=None, ovpool_pooling=True, num_threads=None,
                 implementation="auto", performance_counters=False):
        ov = _openvino()
        core = ov.Core()
        # "native" or "python" (see add_extensions); None when OpenVINO's own pooling runs.
        self.implementation = (add_extensions(core, implementation=implementation).implementation
                               if ovpool_pooling else None)
        config = dict(CPU_CONFIG)
        if num_threads is not None:
            config["INFERENCE_NUM_THREADS"] = int(num_threads)
        if performance_counters:
            config["PERF_COUNT"] = True
        self.performance_counters = bool(performance_counters)
        count = _raised_count()
        try:
            model = core.read_model(str(xml_path), None if bin_path is None else str(bin_path))
            _check_static_tensors(model, xml_path)
            self._compiled = core.compile_model(model, "CPU", config)
        except (RuntimeError, UnicodeDecodeError) as error:
            # (OpenVINO's message may quote bytes of the model that are not UTF-8)
            raised = _raised_since(count)
            if raised is not None:
                raise raised from None
            raise UnsupportedError(f"OpenVINO cannot run {xml_path}: "
                                   f"{_last_line(error)}") from None
        self._core = core
        self.ovpool_pooling = ovpool_pooling
        self.model = model
        # One infer request per thread: a request runs one inference at a time, and
        # compiled models are safe to call from several threads.
        self._requests = threading.local()
        self.input_names = [_port_name(port) for port in self._compiled.inputs]
        self.input_tensor_names = [set(port.get_names()) for port in self._compiled.inputs]
        self.output_names = [_port_name(port) for port in self._compiled.outputs]

    def input_index(self, names, layer_name=None):
        """The position of the input with any of these tensor names (or this layer name)."""
        for index, (tensor_names, name) in enumerate(zip(self.input_tensor_names,
                                                         self.input_names)):
            if tensor_names & set(names) or name == layer_name:
                return index
        return None

    def infer(self, arrays, trace=None):
        """Run the model. With ``performance_counters=True``, ``trace`` (optional) is given
        one :class:`ovpool.profile.LayerTime` per executed node, from OpenVINO's counters."""
        if isinstance(arrays, dict):
            arrays = [arrays[name] for name in self.input_names]
        elif isinstance(arrays, np.ndarray):
            arrays = [arrays]
        if len(arrays) != len(self.input_names):
            raise BadArgumentError(f"got {len(arrays)} inputs; the model has "
                                   f"{len(self.input_names)}: {self.input_names}")
        request = getattr(self._requests, "request", None)
        if request is None:
            request = self._requests.request = self._compiled.create_infer_request()
        count = _raised_count()
        try:
            request.infer({i: np.ascontiguousarray(a) for i, a in enumerate(arrays)})
        except (RuntimeError, UnicodeDecodeError) as error:
            # (OpenVINO's message may quote bytes of the model that are not UTF-8)
            raised = _raised_since(count)
            if raised is not None:
                raise raised from None
            raise UnsupportedError(f"OpenVINO inference failed: {_last_line(error)}") from None
        if trace is not None and self.performance_counters:
            self._trace(trace, request)
        return {name: np.array(request.get_output_tensor(i).data, copy=True)
                for i, name in enumerate(self.output_names)}

    __call__ = infer

    def _trace(self, trace, request):
        from .profile import LayerTime

        types = getattr(self, "_op_types", None)
        if types is None:
            types = self._op_types = {
                op.get_friendly_name(): f"{op.get_type_info().name}-{op.get_type_info().version_id}"
                for op in self.model.get_ordered_ops()}
        for info in request.profiling_info:
            if str(info.status).endswith("NOT_RUN"):
                continue
            seconds = info.real_time.total_seconds()
            type_ = types.get(info.node_name, info.node_type)
            trace(LayerTime(f"node {info.node_name!r} {type_} (plugin: {info.node_type} "
                            f"{info.exec_type}): {seconds * 1e6:.1f} us", info.node_name, type_,
                            seconds))


def _check_static_tensors(model, xml_path):
    """Refuse, before OpenVINO compiles or allocates anything, a tensor whose shape OpenVINO
    inferred as static and whose size is over ovpool's memory limit (or overflows)."""
    for node in model.get_ordered_ops():
        for index, output in enumerate(node.outputs()):
            shape = output.get_partial_shape()
            if shape.rank.is_dynamic or not shape.is_static:
                continue
            element = output.get_element_type()
            try:
                dtype = np.dtype(element.to_dtype())
            except Exception:  # noqa: BLE001 - no numpy dtype (u1, string ...): its byte size
                dtype = np.dtype((np.void, max(1, (element.bitwidth + 7) // 8)))
            check_allocation(tuple(int(d) for d in shape.to_shape()), dtype,
                             f"{xml_path}: output {index} of layer "
                             f"{node.get_friendly_name()!r} ({node.get_type_name()})")


def _port_name(port):
    names = sorted(port.get_names())
    return port.get_any_name() if names else port.get_node().get_friendly_name()


def _last_line(error):
    """The message of an OpenVINO error: its last line, before the Python frames ("At:" and
    one "file(line): function" line each) OpenVINO appends when Python code was running."""
    text = re.split(r"\n\s*At:\s*\n", str(error))[0]
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else type(error).__name__


def compile_model(xml_path, bin_path=None, ovpool_pooling=True, num_threads=None,
                  implementation="auto", performance_counters=False):
    """Read and compile an IR with OpenVINO's CPU plugin; ``ovpool_pooling=True`` (the default)
    runs every pooling layer with ovpool's kernels (``implementation`` as for
    :func:`add_extensions`); ``performance_counters=True`` lets ``infer(trace=...)`` report
    per-node times. Returns a :class:`CompiledModel`."""
    return CompiledModel(xml_path, bin_path, ovpool_pooling, num_threads, implementation,
                         performance_counters)
