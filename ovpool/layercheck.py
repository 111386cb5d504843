"""``ovpool check MODEL --layers``: every pooling layer of a model, OpenVINO against the spec.

The model (an IR ``.xml`` or an ``.onnx``, which OpenVINO converts with its own frontend) runs
once in OpenVINO with the input and outputs of every pooling layer added as model outputs. Then,
one layer at a time, ovpool computes the layer's reference semantics on the captured input (the
OpenVINO spec for an IR layer, the ONNX spec of the model's opset for an ONNX node) and compares
it with OpenVINO's output of that layer. When the outputs differ, alternative rules are
recomputed on the same input (another divisor rule, another rounding, another index layout, NaN
propagation) and the first that reproduces OpenVINO's output, or the one property every
mismatching window shares (it holds a NaN, it is empty, its maximum is the dtype's lowest
value), names the cause. Windows, divisors and roundings come from the core rules
(``ovpool._shapes``, ``ovpool.onnx.resolve_windows``, ``ovpool.pooling.*_windows``).

Memory: OpenVINO's request holds every captured tensor from the one run; the comparison reads
them in place and keeps one layer's own arrays (spec outputs, recomputations, an onnxruntime
session) at a time.
"""

from dataclasses import asdict, dataclass

import numpy as np

from . import _rules, onnx as onnx_dialect, pooling
from ._shapes import AxisWindow, normalize_per_axis, resolve_pool_axes
from .config import get_memory_limit
from .errors import BadArgumentError, OvpoolError, UnsupportedError

__all__ = ["CAUSES", "LayerReport", "check_layers", "compare_arrays"]

CAUSES = ("divisor", "ceil_window_in_padding", "index_layout", "nan_rule", "empty_window",
          "lowest_value_index", "precision", "unexplained")

# (rtol, atol) per dtype; integers and indices must match exactly.
TOLERANCES = {"float16": (2.0 ** -10, 1e-4), "bfloat16": (2.0 ** -7, 1e-3),
              "float32": (1e-5, 1e-6), "float64": (1e-5, 1e-6)}

_IR_POOLING = ("AvgPool", "MaxPool", "AdaptiveAvgPool", "AdaptiveMaxPool")
_ONNX_POOLING = ("AveragePool", "MaxPool", "LpPool", "GlobalAveragePool", "GlobalMaxPool",
                 "GlobalLpPool")


def compare_arrays(ours, theirs):
    """(absolute difference, relative difference, out-of-tolerance mask) of equal-shaped arrays;
    NaN against NaN is equal, NaN against a number infinitely far."""
    a, b = ours.astype(np.float64), theirs.astype(np.float64)
    both_nan = np.isnan(a) & np.isnan(b)
    with np.errstate(invalid="ignore"):
        diff = np.where(both_nan | (a == b), 0.0, np.abs(a - b))
    diff = np.nan_to_num(diff, nan=np.inf, posinf=np.inf)
    with np.errstate(over="ignore", invalid="ignore"):
        relative = np.where(diff == 0, 0.0, diff / np.maximum(np.abs(np.nan_to_num(b)),
                                                              np.finfo(np.float64).tiny))
    rtol, atol = TOLERANCES.get(theirs.dtype.name, (0.0, 0.0))
    return diff, relative, diff > atol + rtol * np.abs(np.nan_to_num(b))


def _agree(ours, theirs):
    return ours.shape == theirs.shape and not compare_arrays(ours, theirs)[2].any()


@dataclass
class LayerReport:
    name: str
    type: str
    version: str
    input_shape: list
    output_shapes: list            # OpenVINO's
    reference_shapes: list         # ovpool's
    max_abs_error: float
    max_rel_error: float
    mismatches: int
    elements: int
    where: str
    cause: object                  # None when the layer agrees
    onnxruntime: object = None     # "ok", "N mismatches", or None (not an .onnx / not installed)

    def to_dict(self):
        return asdict(self)


# ---- one layer's semantics ------------------------------------------------------------------

@dataclass
class _Layer:
    """What the comparison needs of one pooling layer, whatever its dialect."""

    name: str
    type: str
    version: str
    kind: str                      # "avg", "max", "lp", "adaptive"
    reference: object              # x -> list of output arrays
    windows: object = None         # x.shape -> tuple of AxisWindow (fixed windows) or None
    attributes: object = None      # kernel, strides, pads_begin, pads_end, dilations, auto_pad
    rounding: str = "floor"
    divisor_rule: object = None
    onnx_node: object = None
    opset: object = None
    adaptive_size: object = None   # adaptive pooling's output size

    def window_sums(self, x, values):
        """The sum of ``values`` (shaped as x) over each output's window, or None."""
        values = np.ascontiguousarray(values, dtype=np.float64)
        if self.adaptive_size is not None:
            # the mean times each window's element count (the core's adaptive divisors)
            counts = _rules.adaptive_plan(x.shape[2:], self.adaptive_size,
                                          get_memory_limit())[3]
            return pooling.adaptive_avg_pool(values, self.adaptive_size) * counts.reshape(
                self.adaptive_size)
        if self.windows is None:
            return None
        return pooling.avg_pool_windows(values, self.windows(x.shape), "sum")

    def window_max(self, x, values):
        """The largest of ``values`` (shaped as x) in each output's window, or None."""
        values = np.ascontiguousarray(values, dtype=np.float64)
        if self.adaptive_size is not None:
            return pooling.adaptive_max_pool(values, self.adaptive_size, return_indices=False)
        if self.windows is None:
            return None
        return pooling.max_pool_windows(values, self.windows(x.shape), return_indices=False)


def _ir_layer(layer, constants):
    from .ops import lookup
    from .ops.pooling import layer_attributes

    op = lookup(layer)(layer)
    kind = {"AvgPool": "avg", "MaxPool": "max"}.get(layer.type, "adaptive")

    def reference(x):
        return list(op.run(x, *constants))

    if kind == "adaptive":
        sizes = tuple(int(v) for v in np.asarray(constants[0]).reshape(-1))
        return _Layer(layer.name, layer.type, layer.version, kind, reference,
                      adaptive_size=sizes)
    values, window = layer_attributes(layer)
    rule = pooling.avg_divisor_rule(values["exclude-pad"]) if kind == "avg" else None
    rounding, auto_pad = window.pop("rounding_type"), window.pop("auto_pad")
    window["auto_pad"] = auto_pad

    def windows(shape):
        return resolve_pool_axes(shape, rounding_type=rounding, **window)

    return _Layer(layer.name, layer.type, layer.version, kind, reference, windows, window,
                  rounding, rule)


def _onnx_layer(node, opset):
    import onnx

    attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    attributes = {k: v.decode() if isinstance(v, bytes) else v for k, v in attributes.items()}
    op = node.op_type
    name = node.name or node.output[0]
    version = f"opset{opset}"
    functions = {"AveragePool": onnx_dialect.average_pool, "MaxPool": onnx_dialect.max_pool,
                 "LpPool": onnx_dialect.lp_pool,
                 "GlobalAveragePool": onnx_dialect.global_average_pool,
                 "GlobalMaxPool": onnx_dialect.global_max_pool,
                 "GlobalLpPool": onnx_dialect.global_lp_pool}
    extra = {}
    if op == "MaxPool":
        extra["return_indices"] = len([o for o in node.output if o]) > 1

    def reference(x):
        result = functions[op](x, opset=opset, **attributes, **extra)
        return list(result) if isinstance(result, tuple) else [result]

    kind = {"AveragePool": "avg", "MaxPool": "max", "LpPool": "lp", "GlobalAveragePool": "avg",
            "GlobalMaxPool": "max", "GlobalLpPool": "lp"}[op]
    if op.startswith("Global"):
        def windows(shape):
            return tuple(AxisWindow(n, n, 1, 1, 0, 0, 1) for n in shape[2:])
        rule = "exclude_pad" if kind == "avg" else None
        return _Layer(name, op, version, kind, reference, windows, None, "floor", rule, node,
                      opset)
    spec = onnx_dialect.op_version(op, opset)
    window_keys = ("kernel_shape", "auto_pad", "ceil_mode", "dilations", "pads", "strides")
    given = {k: attributes[k] for k in window_keys if k in attributes}

    def windows(shape):
        return onnx_dialect.resolve_windows(spec, shape, **given)

    rank = len(given["kernel_shape"])
    pads = normalize_per_axis("pads", given.get("pads"), 2 * rank, default=0)
    plain = dict(kernel=tuple(given["kernel_shape"]), strides=given.get("strides"),
                 pads_begin=pads[:rank], pads_end=pads[rank:], dilations=given.get("dilations"),
                 auto_pad=_rules.parse_onnx_auto_pad(spec.name, given.get("auto_pad", "NOTSET")))
    rule = None
    if kind == "avg":
        rule = onnx_dialect.average_divisor_rule(attributes.get("count_include_pad", 0))
    elif kind == "lp":
        rule = "sum"
    rounding = "ceil_torch" if given.get("ceil_mode", 0) else "floor"
    return _Layer(name, op, version, kind, reference, windows, plain, rounding, rule, node,
                  opset)


# ---- causes ---------------------------------------------------------------------------------

def _recompute(layer, x, windows, rule):
    if layer.kind == "avg":
        return pooling.avg_pool_windows(x, windows, rule)
    if layer.kind == "max":
        return pooling.max_pool_windows(x, windows, return_indices=False)
    return None


def _explain(layer, x, ours, theirs, bad):
    """The cause that explains every mismatch, from :data:`CAUSES`."""
    values_ok = ours[0].shape == theirs[0].shape and not bad[0].any()
    windows = layer.windows(x.shape) if layer.windows else None
    if not values_ok and windows is not None and layer.kind in ("avg", "max"):
        if layer.kind == "avg":
            for rule in pooling.DIVISOR_RULES:
                if rule not in (layer.divisor_rule, "sum") and \
                        _agree(_recompute(layer, x, windows, rule), theirs[0]):
                    return "divisor"
        if layer.attributes is not None:
            for rounding in _rules.ROUNDING_TYPES:
                if rounding == layer.rounding:
                    continue
                try:
                    other = resolve_pool_axes(x.shape, rounding_type=rounding, **layer.attributes)
                except Exception:  # noqa: BLE001 - a rounding the attributes refuse explains nothing
                    continue
                for rule in ((layer.divisor_rule,) if layer.kind == "max" else
                             tuple(r for r in pooling.DIVISOR_RULES if r != "sum")):
                    if _agree(_recompute(layer, x, other, rule), theirs[0]):
                        return "ceil_window_in_padding"
    if ours[0].shape != theirs[0].shape:
        return "unexplained"
    mismatch = bad[0] if not values_ok else None
    if mismatch is None and len(bad) > 1:
        if ours[1].shape != theirs[1].shape or bad[1].any():
            mismatch = bad[1] if ours[1].shape == theirs[1].shape else None
            if _index_layouts_match(x, ours[1], theirs[1]):
                return "index_layout"
            if mismatch is None:
                return "unexplained"
            lowest = _rules.lowest_value(x.dtype.name) if x.dtype.name in (
                "float32", "float64", "float16", "int8", "uint8", "int32", "int64") else None
            at = ours[0][mismatch].astype(np.float64)
            if lowest is not None and np.all((at == lowest) | np.isneginf(at)):
                return "lowest_value_index"
    if mismatch is None:
        return "unexplained"
    if layer.windows is not None or layer.adaptive_size is not None:
        if np.issubdtype(x.dtype, np.floating) and np.isnan(x).any():
            nan_windows = layer.window_sums(x, np.isnan(x)) > 0
            if np.all(nan_windows[mismatch]):
                return "nan_rule"
        empty = layer.window_sums(x, np.ones(x.shape)) == 0
        if empty.any() and np.all(empty[mismatch]):
            return "empty_window"
    if not values_ok and _within_rounding(layer, x, ours[0], theirs[0], mismatch):
        return "precision"
    return "unexplained"


def _ulp(values, dtype):
    """The spacing of ``dtype`` at each of ``values`` (float64)."""
    magnitude = np.abs(np.nan_to_num(np.asarray(values, dtype=np.float64), posinf=0, neginf=0))
    if dtype.name == "bfloat16":     # 7 explicit mantissa bits against float32's 23
        return np.spacing(magnitude.astype(np.float32)).astype(np.float64) * 2.0 ** 16
    return np.spacing(magnitude.astype(dtype)).astype(np.float64)


def _within_rounding(layer, x, ours, theirs, mismatch):
    """Whether every mismatch is no larger than rounding to the tensors' precision can make it.
    OpenVINO computes a float16 model in float32 and rounds at the layer's output, while the
    captured input is rounded to float16; a sum over a window in float32 rounds once per
    element. So an average (or Lp norm) may move by the sum of its window's input roundings, a
    maximum by the largest, plus one rounding of the output."""
    if not (_is_float(x.dtype) and _is_float(theirs.dtype)):
        return False
    precision = max((x.dtype, theirs.dtype), key=lambda d: float(_ulp(1.0, d)))
    spacing = _ulp(x, precision)
    bound = (layer.window_max(x, spacing) if layer.kind == "max" or
             layer.type == "AdaptiveMaxPool" else layer.window_sums(x, spacing))
    if bound is None or bound.shape != ours.shape:
        return False
    bound = bound + _ulp(theirs, precision)
    diff = compare_arrays(ours, theirs)[0]
    return bool(np.all(diff[mismatch] <= bound[mismatch]))


def _is_float(dtype):
    return np.issubdtype(dtype, np.floating) or dtype.name == "bfloat16"


def _index_layouts_match(x, ours, theirs):
    """OpenVINO's indices are ovpool's in another layout: row-major instead of column-major
    (or back), or with the spatial axes transposed."""
    spatial = x.shape[2:]
    candidates = [ours]
    if len(spatial) >= 2:
        plane = int(np.prod(spatial))
        base, within = np.divmod(ours, plane)
        coords = np.unravel_index(within, spatial, order="F")
        candidates.append(base * plane + np.ravel_multi_index(coords, spatial))
        column = _rules.to_column_major(np.ascontiguousarray(ours, dtype=np.int64).copy(),
                                        spatial)
        candidates.append(column)
        for c in list(candidates):
            axes = tuple(range(c.ndim - 2)) + (c.ndim - 1, c.ndim - 2)
            candidates.append(c.transpose(axes))
    return any(c.shape == theirs.shape and np.array_equal(c, theirs) for c in candidates[1:])


def _where(windows, mask):
    """How many mismatching outputs sit in interior, edge and corner windows."""
    if windows is None or mask is None or not mask.any():
        return ""
    border = []
    for w in windows:
        j = np.arange(w.output)
        start = j * w.stride - w.pad_begin
        border.append((start < 0) | (start + w.effective_kernel > w.length))
    grids = np.meshgrid(*border, indexing="ij")
    count = np.sum(grids, axis=0) if grids else np.zeros(())
    count = np.broadcast_to(count, mask.shape)
    names = {0: "interior", 1: "edge"}
    out = {}
    for n in np.unique(count[mask]):
        out[names.get(int(n), "corner")] = out.get(names.get(int(n), "corner"), 0) + int(
            np.count_nonzero(count[mask] == n))
    return ", ".join(f"{k} {v}" for k, v in out.items())


# ---- the model ------------------------------------------------------------------------------

def _random_inputs(parameters, seed):
    rng = np.random.default_rng(seed)
    arrays = []
    for p in parameters:
        shape = p.get_partial_shape()
        if shape.is_dynamic:
            raise BadArgumentError(f"input {p.get_friendly_name()!r} has a dynamic shape "
                                   f"{shape}; give the inputs with --input")
        dims = tuple(int(d) for d in shape.to_shape())
        dtype = np.dtype(p.get_element_type().to_dtype())
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            arrays.append(rng.integers(max(info.min, -100), min(info.max, 100), dims,
                                       dtype=dtype, endpoint=True))
        else:
            arrays.append(rng.standard_normal(dims).astype(dtype))
    return arrays


def _ports_by_name(ov_model):
    ports = {}
    for op in ov_model.get_ordered_ops():
        for output in op.outputs():
            for name in output.get_names():
                ports.setdefault(name, output)
    return ports


def _plan(path, ov_model):
    """[(layer, [input port, *output ports], constant inputs)] for every pooling layer."""
    plan = []
    if path.endswith(".onnx"):
        import onnx

        model = onnx.load(path)
        opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
        ports = _ports_by_name(ov_model)
        for node in model.graph.node:
            if node.op_type not in _ONNX_POOLING:
                continue
            names = [node.input[0]] + [o for o in node.output if o]
            missing = [n for n in names if n not in ports]
            if missing:
                raise UnsupportedError(f"{path}: OpenVINO's conversion lost the tensor(s) "
                                       f"{', '.join(missing)} of node {node.name!r}")
            plan.append((_onnx_layer(node, opset), [ports[n] for n in names], []))
        return plan
    from .ir import read_model

    model = read_model(path)
    layers = {layer.name: layer for layer in model.layers if layer.type in _IR_POOLING}
    for op in ov_model.get_ordered_ops():
        layer = layers.get(op.get_friendly_name())
        if layer is None or op.get_type_name() != layer.type:
            continue
        constants = [op.input_value(i).get_node().get_data().copy()
                     for i in range(1, op.get_input_size())]
        plan.append((_ir_layer(layer, constants),
                     [op.input_value(0)] + list(op.outputs()), constants))
    return plan


def _port_key(port):
    return port.get_node().get_friendly_name(), port.get_index()


def check_layers(path, inputs=None, seed=0, onnxruntime=True):
    """Compare every pooling layer of ``path`` (an IR ``.xml`` or an ``.onnx``) as OpenVINO runs
    it with ovpool's reference semantics on the same input. Returns a list of
    :class:`LayerReport`, in the model's order."""
    from .openvino import CPU_CONFIG, _openvino

    ov = _openvino()
    path = str(path)
    core = ov.Core()
    try:
        ov_model = core.read_model(path)
    except RuntimeError as error:
        raise UnsupportedError(f"{path}: OpenVINO cannot read the model: "
                               f"{_gist(error)}") from None
    plan = _plan(path, ov_model)
    extra = [port for _, ports, _ in plan for port in ports]
    if extra:
        ov_model.add_outputs(extra)
    position = {}
    for i, result in enumerate(ov_model.outputs):
        source = result.get_node().input_value(0)
        position.setdefault(_port_key(source), i)
    try:
        compiled = core.compile_model(ov_model, "CPU", dict(CPU_CONFIG))
    except RuntimeError as error:
        raise UnsupportedError(f"{path}: OpenVINO cannot compile the model: "
                               f"{_gist(error)}") from None
    if inputs is None:
        inputs = _random_inputs(ov_model.get_parameters(), seed)
    request = compiled.create_infer_request()
    request.infer({i: np.ascontiguousarray(a) for i, a in enumerate(inputs)})
    session_factory = _onnxruntime_factory(path) if onnxruntime else None
    reports = []
    for layer, ports, _ in plan:
        # views of the request's tensors (read only): the comparison copies nothing it
        # captured, and its own arrays (the reference outputs, the recomputations of the
        # causes, an onnxruntime session) live only while this one layer is compared
        captured = [_read_only(request.get_output_tensor(position[_port_key(port)]).data)
                    for port in ports]
        try:
            reports.append(_compare_layer(layer, captured[0], captured[1:], session_factory))
        except OvpoolError as error:     # the spec refuses the layer OpenVINO ran
            raise error.with_context(f"{path}: layer {layer.name!r} ({layer.type}, "
                                     f"{layer.version})") from None
    return reports


def _gist(error):
    """The gist of an OpenVINO error, without its source locations and checks."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    useful = [line for line in lines
              if not line.startswith(("Exception from", "Check '", "While validating"))]
    return " ".join((useful or lines)[:4])


def _read_only(array):
    view = array.view()
    view.flags.writeable = False
    return view


def _compare_layer(layer, x, theirs, session_factory):
    ours = layer.reference(x)
    ours = ours[:len(theirs)]
    bad, errors, relatives = [], [0.0], [0.0]
    mismatches = elements = 0
    for a, b in zip(ours, theirs):
        elements += b.size
        if a.shape != b.shape:
            bad.append(np.ones(b.shape, bool))
            mismatches += max(a.size, b.size)
            continue
        diff, relative, mask = compare_arrays(a, b)
        bad.append(mask)
        mismatches += int(mask.sum())
        if diff.size:
            errors.append(float(diff.max()))
            relatives.append(float(relative.max()))
    cause = None if mismatches == 0 else _explain(layer, x, ours, theirs, bad)
    windows = layer.windows(x.shape) if layer.windows else None
    mask = next((m for m, a, b in zip(bad, ours, theirs) if a.shape == b.shape and m.any()), None)
    ort = session_factory(layer, x, ours) if session_factory else None
    return LayerReport(layer.name, layer.type, layer.version, list(x.shape),
                       [list(b.shape) for b in theirs], [list(a.shape) for a in ours],
                       max(errors), max(relatives), mismatches, elements,
                       _where(windows, mask) if cause else "", cause, ort)


def _onnxruntime_factory(path):
    """Runs one ONNX node alone in onnxruntime and compares it with ovpool's reference; None
    for IR models or without onnxruntime."""
    if not path.endswith(".onnx"):
        return None
    try:
        import onnxruntime
        import onnx
        from onnx import helper
    except ImportError:
        return None

    def compare(layer, x, ours):
        node = layer.onnx_node
        outputs = [o for o in node.output if o]
        dtype = helper.np_dtype_to_tensor_dtype(x.dtype)
        graph = helper.make_graph(
            [node], "layer", [helper.make_tensor_value_info(node.input[0], dtype, x.shape)],
            [helper.make_tensor_value_info(o, dtype if k == 0 else onnx.TensorProto.INT64, None)
             for k, o in enumerate(outputs)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", layer.opset)])
        model.ir_version = min(model.ir_version, 10)
        try:
            options = onnxruntime.SessionOptions()
            options.log_severity_level = 3      # its shape warnings are the report's findings
            session = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                                   providers=["CPUExecutionProvider"])
            results = session.run(None, {node.input[0]: x})
        except Exception as error:  # noqa: BLE001 - onnxruntime refusing is itself the answer
            return f"refused: {str(error).splitlines()[0][:60]}"
        bad = 0
        for a, b in zip(ours, results):
            bad += max(a.size, b.size) if a.shape != b.shape else int(
                compare_arrays(a, b)[2].sum())
        return "ok" if bad == 0 else f"{bad} mismatches"

    return compare


# ---- reports --------------------------------------------------------------------------------

HEADERS = ("name", "type", "version", "input_shape", "output_shapes", "max_abs_error",
           "max_rel_error", "mismatches", "elements", "where", "cause")


def table_rows(reports):
    rows = []
    for r in reports:
        shapes = " ".join("x".join(map(str, s)) for s in r.output_shapes)
        if r.output_shapes != r.reference_shapes:
            shapes += " (spec: " + " ".join("x".join(map(str, s)) for s in r.reference_shapes) + ")"
        row = [r.name, r.type, r.version, "x".join(map(str, r.input_shape)), shapes,
               f"{r.max_abs_error:.3g}", f"{r.max_rel_error:.3g}",
               f"{r.mismatches}/{r.elements}", r.where or "-", r.cause or "ok"]
        if any(x.onnxruntime is not None for x in reports):
            row.append(r.onnxruntime or "-")
        rows.append(row)
    return rows


def table_headers(reports):
    headers = ["layer", "type", "version", "input", "outputs (openvino)", "max abs", "max rel",
               "mismatches", "where", "cause"]
    if any(r.onnxruntime is not None for r in reports):
        headers.append("onnxruntime vs spec")
    return headers
