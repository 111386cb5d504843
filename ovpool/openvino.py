"""The OpenVINO bridge: ovpool's pooling kernels as OpenVINO operations.

OpenVINO stays optional: importing this module does not import ``openvino``; the operation
classes live in :mod:`ovpool._openvino_ops`, imported on first use. The module is named after what it bridges to; inside it,
``import openvino`` still means the installed package, because Python 3 imports are absolute.

Three kinds of classes, all ``openvino.Op`` subclasses, one per version in ovpool's table of op
versions (:mod:`ovpool._opschema`):

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

:func:`compile_with_openvino` runs a whole IR with OpenVINO's CPU plugin (ovpool's pooling
inside, or OpenVINO's own) behind an :class:`OpenVINORunner`; the CLI's ``--engine openvino``
uses it. (:func:`ovpool.compile_model` is ovpool's own runtime.)
"""

import functools
import importlib.util
import os
import re
import threading

import numpy as np

from ._limits import check_allocation
from ._opschema import OPENVINO_OPS, OVPOOL_ONLY
from .errors import BadArgumentError, UnsupportedError

__all__ = ["OPS", "OPSET", "ONNX_OPS", "IMPLEMENTATIONS", "available", "op_classes",
           "add_extensions", "onnx_extensions", "replace_pooling", "extension_path",
           "Extensions", "compile_with_openvino", "OpenVINORunner", "INSTALL_HINT", "BUILD_HINT"]

INSTALL_HINT = "install it with: pip install 'ovpool[openvino]' (or pip install openvino)"
BUILD_HINT = "build it with: ovpool build-extension (needs the openvino package, cmake and a C++17 compiler)"
# Which ops run ovpool's pooling inside OpenVINO: the native extension library (C++, loaded with
# core.add_extension(path)) or the openvino.Op subclasses of this module. "auto" picks the
# native library when it is built for the installed OpenVINO.
IMPLEMENTATIONS = ("auto", "native", "python")

# The native op versions the bridge takes over (ovpool._opschema has their attributes).
OPS = tuple(f"{name}-{opset}" for name, opset in OPENVINO_OPS)
# The ONNX operators whose conversion ovpool takes over.
ONNX_OPS = tuple(version.converts for version in OVPOOL_ONLY.values())

OPSET = "ovpool"


def available():
    """True when the ``openvino`` package is installed (checked without importing it)."""
    return importlib.util.find_spec("openvino") is not None


def _openvino(needed_by="the OpenVINO bridge", hint=INSTALL_HINT):
    """The openvino package, or an UnsupportedError saying who needs it and how to install it."""
    try:
        import openvino
        import openvino.utils  # noqa: F401 - native/build.py reads its CMake path
    except ImportError as error:
        raise UnsupportedError(f"{needed_by} needs the openvino package ({error}); "
                               f"{hint}") from None
    return openvino


def _select(ops):
    """``ops`` (None: all) as a list of (type, opset) keys. Names are ``"MaxPool-8"`` or a
    bare type (``"MaxPool"``: every version ovpool provides)."""
    if ops is None:
        return list(OPENVINO_OPS)
    if isinstance(ops, str):
        ops = [ops]
    keys = []
    for name in ops:
        matched = [key for key in OPENVINO_OPS if name in (key[0], f"{key[0]}-{key[1]}")]
        if not isinstance(name, str) or not matched:
            raise BadArgumentError(f"unknown ovpool OpenVINO op {name!r}; expected one of "
                                   f"{', '.join(OPS)} or a type name such as 'MaxPool'")
        keys.extend(k for k in matched if k not in keys)
    return keys


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


def _ops():
    """The module of the op classes, imported on first use (it imports openvino)."""
    _openvino()
    from . import _openvino_ops

    return _openvino_ops


def op_classes():
    """{"AvgPool": class, ...}: the execution ops of the "ovpool" opset (one class per op, its
    newest version; see :mod:`ovpool._openvino_ops`)."""
    return _ops().EXECUTION_OPS


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
        if name not in ONNX_OPS:
            raise BadArgumentError(f"unknown ONNX pooling operator {name!r}; expected one of "
                                   f"{', '.join(ONNX_OPS)}")
    return [_ops().onnx_conversion(name) for name in names]


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
    readers = _ops().READERS
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
            new, count = _ops().replacement(OPENVINO_OPS[(info.name, opset)],
                                            node.input_values(), node.get_attributes(),
                                            node.get_friendly_name())
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


class OpenVINORunner:
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


def compile_with_openvino(xml_path, bin_path=None, ovpool_pooling=True, num_threads=None,
                          implementation="auto", performance_counters=False):
    """Read and compile an IR with OpenVINO's CPU plugin; ``ovpool_pooling=True`` (the default)
    runs every pooling layer with ovpool's kernels (``implementation`` as for
    :func:`add_extensions`); ``performance_counters=True`` lets ``infer(trace=...)`` report
    per-node times. Returns an :class:`OpenVINORunner`."""
    return OpenVINORunner(xml_path, bin_path, ovpool_pooling, num_threads, implementation,
                         performance_counters)
