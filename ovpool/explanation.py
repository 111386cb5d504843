"""``ovpool explain`` / :func:`ovpool.explain`: how one pooling resolves its windows, under
every rounding and divisor rule the dialects have, and where those rules disagree.

Nothing here decides a rule: output lengths come from ``ovpool._shapes.resolve_pool_axes`` (the
OpenVINO roundings floor / ceil / ceil_torch) and ``ovpool.onnx.resolve_windows`` (ONNX
``ceil_mode``), the number of real elements and the divisors of each window from the core's
window plans (``ovpool._rules.fixed_plan``, one per divisor rule of
:data:`ovpool.pooling.DIVISOR_RULES`). This module only lays them side by side.
"""

from dataclasses import asdict, astuple, dataclass, field, replace

import numpy as np

from . import _rules, onnx as onnx_dialect, pooling
from ._shapes import (AxisWindow, check_input_shape, normalize_auto_pad, normalize_per_axis,
                      resolve_pool_axes)
from .config import get_memory_limit
from .errors import BadArgumentError, BadAttributeError, OvpoolError

__all__ = ["explain", "explain_layer", "Explanation", "AxisExplanation", "WindowExplanation",
           "ROUNDINGS", "EXPLAINED_DIVISOR_RULES", "draw"]

# Output-length rules of the dialects: OpenVINO's rounding_type values, then ONNX's ceil_mode.
ROUNDINGS = tuple(_rules.ROUNDING_TYPES) + ("onnx_ceil_mode",)
# The averaging rules (the "sum" rule of LpPool divides by nothing).
EXPLAINED_DIVISOR_RULES = tuple(r for r in pooling.DIVISOR_RULES if r != "sum")

_OPENVINO_OPS = {"AvgPool": (1, 14, 16), "MaxPool": (1, 8, 14)}
_ONNX_OPS = ("AveragePool", "MaxPool", "LpPool")


@dataclass(frozen=True)
class WindowExplanation:
    """Window ``index`` of one axis: input positions ``start + t*dilation`` (t < kernel), of
    which ``real`` lie in the input; its divisor under each rule; the roundings whose output
    includes it; and why it is marked (``disagree``: "divisor", "rounding", "empty")."""

    index: int
    start: int
    end: int
    real: int
    divisors: dict
    in_roundings: tuple
    disagree: tuple


@dataclass(frozen=True)
class AxisExplanation(AxisWindow):
    """The resolved window of spatial axis ``axis`` (its ``output`` under the pooling's own
    rounding) and what the other rules make of it."""

    axis: int
    lengths: dict               # rounding -> output length, None when refused
    refused: dict               # rounding -> why it is refused
    windows: tuple              # of WindowExplanation, for the longest output


@dataclass(frozen=True)
class Explanation:
    """Everything :func:`explain` finds; ``text()`` is what ``ovpool explain`` prints,
    ``to_dict()`` a JSON-ready copy, and :func:`draw` the picture."""

    op: str
    version: int
    dialect: str
    input_shape: tuple
    output_shape: tuple
    rounding: str
    divisor_rule: object        # the pooling's own rule; None for max pooling
    attributes: dict
    axes: tuple
    layer: object = None
    # divisors of whole (N-D) windows per rule: nested lists shaped as the longest output
    window_divisors: dict = field(default_factory=dict)

    @property
    def is_average(self):
        return self.divisor_rule is not None

    def disagreeing(self):
        """(axis, window) pairs of the windows where the rules disagree."""
        return [(a.axis, w) for a in self.axes for w in a.windows if w.disagree]

    def to_dict(self):
        return asdict(self)

    def text(self):
        lines = []
        name = f"{self.op}-{self.version} ({self.dialect})"
        if self.layer:
            name = f"layer {self.layer!r}: " + name
        lines.append(name)
        lines.append(f"input {list(self.input_shape)} -> output {list(self.output_shape)}; "
                     f"rounding {self.rounding}; divisor rule "
                     f"{self.divisor_rule or '- (max pooling: no divisor)'}")
        rules = EXPLAINED_DIVISOR_RULES
        for a in self.axes:
            lines.append("")
            lines.append(f"axis {a.axis}: length {a.length}, kernel {a.kernel}, stride {a.stride}, "
                         f"dilation {a.dilation}, pads {a.pad_begin}/{a.pad_end} (resolved)")
            lengths = ", ".join(f"{r} {'refused' if n is None else n}"
                                for r, n in a.lengths.items())
            lines.append(f"  output length: {lengths}")
            for r, why in a.refused.items():
                lines.append(f"    {r} refused: {why}")
            headers = ("window", "span", "real") + rules + ("outputs", "")
            rows = []
            for w in a.windows:
                every = len(w.in_roundings) == sum(n is not None for n in a.lengths.values())
                rows.append((str(w.index), f"[{w.start}, {w.end})", str(w.real),
                             *(str(w.divisors[r]) for r in rules),
                             "all" if every else ",".join(w.in_roundings),
                             ("* " + ", ".join(w.disagree)) if w.disagree else ""))
            widths = [max(len(v) for v in column) for column in zip(headers, *rows)]
            for row in (headers,) + tuple(rows):
                lines.append("  " + "  ".join(v.ljust(n) for v, n in zip(row, widths)).rstrip())
        marked = self.disagreeing()
        lines.append("")
        if marked:
            lines.append(f"{len(marked)} window(s) marked *: divisor = the divisor rules give "
                         "different divisors; rounding = only some roundings produce the window; "
                         "empty = no input element in the window")
        else:
            lines.append("every rule agrees on every window")
        if self.dialect == "openvino" and self.is_average and len(self.axes) > 1:
            lines.append("(openvino_include_pad looks at the pads of every axis at once; the "
                         "per-axis columns show each axis alone, whole windows are in "
                         "window_divisors)")
        return "\n".join(lines)


def _openvino_attributes(op, version, attributes):
    allowed = {"kernel", "strides", "pads_begin", "pads_end", "dilations", "rounding_type",
               "auto_pad"}
    if op == "AvgPool":
        allowed.add("exclude_pad")
    else:
        allowed |= {"index_element_type", "axis"}
    _refuse_unknown(op, version, attributes, allowed)
    if "kernel" not in attributes:
        raise BadAttributeError(f"{op}-{version}: attribute 'kernel' is required")


def _refuse_unknown(op, version, attributes, allowed):
    unknown = sorted(set(attributes) - allowed)
    if unknown:
        raise BadAttributeError(f"{op}-{version}: unknown attribute(s) {', '.join(unknown)}; "
                                f"expected some of {', '.join(sorted(allowed))}")


def _onnx_auto_pad_name(auto_pad):
    """The ONNX spelling of a canonical auto_pad."""
    return "NOTSET" if auto_pad == "explicit" else auto_pad.upper()


def _lengths(shape, kernel, strides, pads_begin, pads_end, dilations, auto_pad):
    """Output length per axis under every rounding (None and a reason when refused)."""
    rank = len(shape) - 2
    lengths = [dict() for _ in range(rank)]
    refused = [dict() for _ in range(rank)]
    for rounding in ROUNDINGS:
        try:
            if rounding == "onnx_ceil_mode":
                axes = onnx_dialect.resolve_windows(
                    onnx_dialect.op_version("MaxPool", onnx_dialect.LATEST_OPSET), shape,
                    kernel, _onnx_auto_pad_name(auto_pad), 1, dilations,
                    tuple(pads_begin) + tuple(pads_end), strides)
            else:
                axes = resolve_pool_axes(shape, kernel, strides, pads_begin, pads_end, dilations,
                                         rounding, auto_pad)
        except OvpoolError as error:
            for a in range(rank):
                lengths[a][rounding] = None
                refused[a][rounding] = str(error)
            continue
        for a, w in enumerate(axes):
            lengths[a][rounding] = w.output
    return lengths, refused


def _plan_divisors(windows, rule):
    plan = _rules.fixed_plan([astuple(w) for w in windows], rule, get_memory_limit())
    return plan[3]


def _explain_axes(actual, lengths, refused, average):
    """Per-axis windows over the longest output any rounding gives, and those widened
    windows."""
    out, widened = [], []
    for a, w in enumerate(actual):
        known = {r: n for r, n in lengths[a].items() if n is not None}
        wide = replace(w, output=max([w.output, *known.values()]))
        widened.append(wide)
        divisors = {r: _plan_divisors([wide], r) for r in EXPLAINED_DIVISOR_RULES}
        windows = []
        for j in range(wide.output):
            start = j * w.stride - w.pad_begin
            per_rule = {r: int(divisors[r][j]) for r in EXPLAINED_DIVISOR_RULES}
            real = per_rule["exclude_pad"]
            in_roundings = tuple(r for r, n in known.items() if j < n)
            reasons = []
            if average and len(set(per_rule.values())) > 1:
                reasons.append("divisor")
            if len(in_roundings) != len(known):
                reasons.append("rounding")
            if real == 0:
                reasons.append("empty")
            windows.append(WindowExplanation(j, start, start + w.effective_kernel, real, per_rule,
                                             in_roundings, tuple(reasons)))
        out.append(AxisExplanation(*astuple(w), axis=a, lengths=dict(lengths[a]),
                                   refused=dict(refused[a]), windows=tuple(windows)))
    return tuple(out), widened


def _whole_divisors(widened):
    shape = tuple(w.output for w in widened)
    return {r: _plan_divisors(widened, r).reshape(shape).tolist()
            for r in EXPLAINED_DIVISOR_RULES}


def explain(op, input_shape, version=None, dialect=None, **attributes):
    """Explain one pooling: per spatial axis the resolved pads, the output length under each
    rounding (:data:`ROUNDINGS`), and every window's span, real elements and divisor under each
    divisor rule, marking the windows where the rules disagree.

    ``op``: OpenVINO "AvgPool" (versions 1, 14, 16) or "MaxPool" (1, 8, 14) with the IR's
    attributes (``kernel``, ``strides``, ``pads_begin``, ``pads_end``, ``dilations``,
    ``rounding_type``, ``auto_pad``, ``exclude_pad``); or, with ``dialect="onnx"`` (the default
    for "AveragePool" and "LpPool"), ONNX "AveragePool", "MaxPool" or "LpPool" at opset
    ``version`` (default the newest) with ONNX's attributes (``kernel_shape``, ``pads``,
    ``strides``, ``dilations``, ``ceil_mode``, ``auto_pad``, ``count_include_pad``, ...).
    ``op`` may carry its version: "AvgPool-16". Returns an :class:`Explanation`.
    """
    if not isinstance(op, str):
        raise BadArgumentError(f"op must be a string such as 'AvgPool-16', got {op!r}")
    if "-" in op:
        op, _, given = op.partition("-")
        try:
            version = int(given)
        except ValueError:
            raise BadArgumentError(f"op version {given!r} is not an int") from None
    if dialect is None:
        dialect = "onnx" if op in ("AveragePool", "LpPool") else "openvino"
    shape = check_input_shape(input_shape)
    rank = len(shape) - 2
    if dialect == "openvino":
        if op not in _OPENVINO_OPS:
            raise BadArgumentError(f"op {op!r}: expected one of {', '.join(_OPENVINO_OPS)} "
                                   "(or an ONNX op with dialect='onnx')")
        version = _OPENVINO_OPS[op][-1] if version is None else version
        if version not in _OPENVINO_OPS[op]:
            raise BadAttributeError(f"{op} has versions {_OPENVINO_OPS[op]}, not {version}")
        _openvino_attributes(op, version, attributes)
        kernel = attributes["kernel"]
        strides, dilations = attributes.get("strides"), attributes.get("dilations")
        pads_begin = normalize_per_axis("pads_begin", attributes.get("pads_begin"), rank, 0)
        pads_end = normalize_per_axis("pads_end", attributes.get("pads_end"), rank, 0)
        auto_pad = normalize_auto_pad(attributes.get("auto_pad", "explicit"))
        rounding = attributes.get("rounding_type", "floor")
        actual = resolve_pool_axes(shape, kernel, strides, pads_begin, pads_end, dilations,
                                   rounding, auto_pad)
        rounding = _rules.parse_rounding(rounding)
        divisor_rule = (pooling.avg_divisor_rule(bool(attributes.get("exclude_pad", False)))
                        if op == "AvgPool" else None)
    elif dialect == "onnx":
        if op not in _ONNX_OPS:
            raise BadArgumentError(f"ONNX op {op!r}: expected one of {', '.join(_ONNX_OPS)}")
        version = onnx_dialect.LATEST_OPSET if version is None else version
        spec = onnx_dialect.op_version(op, version)
        allowed = set(spec.attributes) | {"count_include_pad", "ceil_mode", "storage_order",
                                          "dilations"}
        _refuse_unknown(op, version, attributes, allowed)
        kernel = attributes.get("kernel_shape")
        strides, dilations = attributes.get("strides"), attributes.get("dilations")
        onnx_auto_pad = attributes.get("auto_pad", "NOTSET")
        ceil_mode = attributes.get("ceil_mode", 0)
        actual = onnx_dialect.resolve_windows(spec, shape, kernel, onnx_auto_pad, ceil_mode,
                                              dilations, attributes.get("pads"), strides)
        both = normalize_per_axis("pads", attributes.get("pads"), 2 * rank, default=0)
        pads_begin, pads_end = both[:rank], both[rank:]
        auto_pad = _rules.parse_onnx_auto_pad(spec.name, onnx_auto_pad)
        rounding = "onnx_ceil_mode" if ceil_mode else "floor"
        if op == "AveragePool":
            divisor_rule = onnx_dialect.average_divisor_rule(
                attributes.get("count_include_pad", 0))
        else:
            divisor_rule = "sum" if op == "LpPool" else None
    else:
        raise BadArgumentError(f"dialect {dialect!r}: expected 'openvino' or 'onnx'")
    lengths, refused = _lengths(shape, kernel, strides, pads_begin, pads_end, dilations,
                                auto_pad)
    average = divisor_rule is not None and divisor_rule != "sum"
    axes, widened = _explain_axes(actual, lengths, refused, average)
    return Explanation(op, int(version), dialect, shape,
                       shape[:2] + tuple(w.output for w in actual), rounding, divisor_rule,
                       dict(attributes), axes, layer=None,
                       window_divisors=_whole_divisors(widened))


# ---- layers of a model ---------------------------------------------------------------------

def _ir_layer_attributes(layer):
    from .ops.pooling import layer_attributes

    values, window = layer_attributes(layer)
    attributes = {k: v for k, v in window.items() if v is not None}
    if layer.type == "AvgPool":
        attributes["exclude_pad"] = values["exclude-pad"]
    return attributes


def _onnx_graph_node(path, name):
    import onnx

    model = onnx.shape_inference.infer_shapes(onnx.load(path))
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
    shapes = {}
    for value in list(model.graph.value_info) + list(model.graph.input):
        dims = value.type.tensor_type.shape.dim
        shapes[value.name] = tuple(d.dim_value if d.HasField("dim_value") else None for d in dims)
    for node in model.graph.node:
        if name in (node.name, *node.output):
            attributes = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
            attributes = {k: v.decode() if isinstance(v, bytes) else
                          (list(v) if isinstance(v, (list, tuple)) or hasattr(v, "__len__")
                           else v) for k, v in attributes.items()}
            return node, opset, attributes, shapes.get(node.input[0])
    names = [n.name or n.output[0] for n in model.graph.node if n.op_type in _ONNX_OPS]
    raise BadArgumentError(f"{path}: no node named {name!r}; pooling nodes: {', '.join(names)}")


def explain_layer(model_path, layer_name, input_shape=None):
    """:func:`explain` for the pooling layer ``layer_name`` of an IR ``.xml`` or an ``.onnx``
    model; ``input_shape`` overrides the shape the model declares for the layer's input."""
    path = str(model_path)
    if path.endswith(".onnx"):
        node, opset, attributes, declared = _onnx_graph_node(path, layer_name)
        if node.op_type not in _ONNX_OPS:
            raise BadArgumentError(f"{path}: node {layer_name!r} is a {node.op_type}, not one of "
                                   f"{', '.join(_ONNX_OPS)}")
        attributes.pop("p", None)
        shape = input_shape or declared
        _check_static(path, layer_name, shape)
        result = explain(node.op_type, shape, version=opset, dialect="onnx", **attributes)
    else:
        from .ir import read_model

        model = read_model(path)
        matches = [l for l in model.layers if l.name == layer_name or l.id == layer_name]
        if not matches:
            names = [l.name for l in model.layers if l.type in _OPENVINO_OPS]
            raise BadArgumentError(f"{path}: no layer named {layer_name!r}; pooling layers: "
                                   f"{', '.join(names)}")
        layer = matches[0]
        if layer.type not in _OPENVINO_OPS or layer.opset not in _OPENVINO_OPS[layer.type]:
            raise BadArgumentError(f"{layer.context}: explain knows AvgPool-1/14/16 and "
                                   "MaxPool-1/8/14")
        shape = input_shape or layer.inputs[0].dims.to_shape()
        _check_static(path, layer_name, shape)
        result = explain(layer.type, shape, version=layer.opset, **_ir_layer_attributes(layer))
    return Explanation(**{**result.__dict__, "layer": layer_name})


def _check_static(path, name, shape):
    if shape is None or any(d is None for d in shape):
        raise BadArgumentError(f"{path}: the input shape of {name!r} is not static "
                               f"({shape}); give it with --shape")


# ---- the picture ---------------------------------------------------------------------------

_SHORT = {"exclude_pad": "exclude_pad", "openvino_include_pad": "OpenVINO include-pad",
          "include_padded": "ONNX count_include_pad"}
# what each divisor rule counts, in the picture's colours
_COUNTS = {"exclude_pad": "the blue taps", "include_padded": "blue + orange taps",
           "openvino_include_pad": "the whole kernel if any pad is set (else the blue taps)"}
_COLOURS = {"input": "#ffffff", "pad": "#d9d9d9", "beyond": "#f4f4f4", "tap_input": "#2b7bba",
            "tap_pad": "#f08c00", "tap_beyond": "#8e44ad", "disagree": "#c0392b",
            "ordinary": "#2e7d32"}
_REASONS = {"divisor": "divisor", "rounding": "rounding", "empty": "empty window"}


def _pick_windows(explanation, limit_marked=5, limit_plain=1):
    """Output positions (over the last two axes) to draw: one window of each kind of
    disagreement first, then more disagreeing ones, then an ordinary one."""
    axes = explanation.axes[-2:]
    marked, plain = [], []
    for index in np.ndindex(*[len(a.windows) for a in axes]):
        windows = [a.windows[i] for a, i in zip(axes, index)]
        (marked if any(w.disagree for w in windows) else plain).append(index)

    def kind(index):
        return frozenset(r for a, i in zip(axes, index) for r in a.windows[i].disagree)

    marked.sort(key=lambda index: len(kind(index)), reverse=True)
    kinds, first = set(), []
    for index in marked:
        if kind(index) not in kinds:
            kinds.add(kind(index))
            first.append(index)
    marked = first + [index for index in marked if index not in first]
    return marked[:max(limit_marked, len(first))] + plain[:limit_plain]


def _cell_kind(position, axes):
    """"input", "pad" or "beyond" for a (row, column) of the drawn plane."""
    inside = all(a is None and p == 0 or a is not None and 0 <= p < a.length
                 for p, a in zip(position, axes))
    if inside:
        return "input"
    padded = all(a is None or -a.pad_begin <= p < a.length + a.pad_end
                 for p, a in zip(position, axes))
    return "pad" if padded else "beyond"


def _panel_text(explanation, axes, index, windows, taps):
    """The lines above one panel: which output, why it is marked, its taps, its divisors."""
    position = tuple(i for i, a in zip(index, axes) if a is not None)
    reasons = sorted({r for w in windows if w is not None for r in w.disagree})
    head = f"output {position if len(position) > 1 else position[0]}: "
    head += ("rules disagree on " + ", ".join(_REASONS[r] for r in reasons)) if reasons \
        else "every rule agrees"
    counts = {kind: sum(k == kind for k in taps) for kind in ("input", "pad", "beyond")}
    plane = " (in the drawn plane)" if len(explanation.axes) > 2 else ""
    lines = [head, f"taps{plane}: {counts['input']} input, {counts['pad']} padding, "
                   f"{counts['beyond']} beyond"]
    if explanation.is_average:
        nd = index if axes[0] is not None else index[1:]
        full = (0,) * (len(explanation.axes) - len(nd)) + tuple(nd)
        for rule in EXPLAINED_DIVISOR_RULES:
            value = explanation.window_divisors[rule]
            for i in full:
                value = value[i]
            mark = "   <- this op" if rule == explanation.divisor_rule else ""
            lines.append(f"divide by {value:>2}: {_SHORT[rule]}{mark}")
    missing = set()
    for a, w in zip(axes, windows):
        if a is not None:
            missing |= {r for r, n in a.lengths.items()
                        if n is not None and r not in w.in_roundings}
    if missing:
        lines.append("no such output under " + ", ".join(sorted(missing)))
    return "\n".join(lines), bool(reasons)


def draw(explanation, path):
    """Draw ``explanation`` into the PNG ``path``: one panel per drawn output window (one of
    each kind of disagreement, a few more, and an ordinary one) on the padded input grid, its
    taps coloured by where they land (input, padding, beyond the padding) and, for average
    pooling, its divisor under each rule. Needs matplotlib (the ``explain`` extra)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch, Rectangle
    except ImportError:
        raise BadArgumentError("drawing a PNG needs matplotlib: pip install 'ovpool[explain]'") \
            from None
    axes = explanation.axes[-2:]
    if len(axes) == 1:
        axes = (None,) + tuple(axes)
    picks = _pick_windows(explanation)
    extents = []              # every position any window or pad touches
    for a in axes:
        if a is None:
            extents.append((0, 1))
            continue
        extents.append((min([-a.pad_begin] + [w.start for w in a.windows]),
                        max([a.length + a.pad_end] + [w.end for w in a.windows])))
    (r0, r1), (c0, c1) = extents
    columns = min(3, len(picks))
    rows = (len(picks) + columns - 1) // columns
    cell = 0.5
    width = max(4.8, (c1 - c0) * cell + 1.0)
    height = (r1 - r0) * cell + 2.0
    figure, grid = plt.subplots(rows, columns, figsize=(width * columns, height * rows + 1.4),
                                squeeze=False, layout="constrained")
    for k, index in enumerate(picks):
        ax = grid[k // columns][k % columns]
        index = (0,) + tuple(index) if axes[0] is None else tuple(index)
        windows = [None if a is None else a.windows[i] for a, i in zip(axes, index)]
        for r in range(r0, r1):
            for c in range(c0, c1):
                kind = _cell_kind((r, c), axes)
                ax.add_patch(Rectangle((c, -r - 1), 1, 1, facecolor=_COLOURS[kind],
                                       edgecolor="#999999", linewidth=0.5,
                                       hatch="//" if kind == "pad" else None))
        rows_tapped = [0] if axes[0] is None else \
            [windows[0].start + t * axes[0].dilation for t in range(axes[0].kernel)]
        taps = []
        for r in rows_tapped:
            for c in (windows[1].start + t * axes[1].dilation for t in range(axes[1].kernel)):
                kind = _cell_kind((r, c), axes)
                taps.append(kind)
                ax.add_patch(Rectangle((c + 0.1, -r - 0.9), 0.8, 0.8,
                                       facecolor=_COLOURS["tap_" + kind], linewidth=0))
        title, marked = _panel_text(explanation, axes, index, windows, taps)
        top, bottom = (0, 1) if windows[0] is None else (windows[0].start, windows[0].end)
        ax.add_patch(Rectangle((windows[1].start - 0.04, -bottom - 0.04),
                               windows[1].end - windows[1].start + 0.08, bottom - top + 0.08,
                               fill=False, linewidth=2.6,
                               edgecolor=_COLOURS["disagree" if marked else "ordinary"]))
        height_in = 1 if axes[0] is None else axes[0].length
        ax.add_patch(Rectangle((0, -height_in), axes[1].length, height_in, fill=False,
                               edgecolor="black", linewidth=1.6))
        ax.set_xlim(c0 - 0.2, c1 + 0.2)
        ax.set_ylim(-r1 - 0.2, -r0 + 0.2)
        ax.set_aspect("equal")
        ax.set_xticks([c + 0.5 for c in range(c0, c1)], [str(c) for c in range(c0, c1)],
                      fontsize=8)
        ax.set_yticks([-r - 0.5 for r in range(r0, r1)], [str(r) for r in range(r0, r1)],
                      fontsize=8)
        ax.tick_params(length=0)
        for side in ax.spines.values():
            side.set_visible(False)
        if axes[0] is not None:
            ax.set_ylabel(f"axis {axes[0].axis}", fontsize=8)
        ax.set_xlabel(f"axis {axes[1].axis}", fontsize=8)
        ax.set_title(title, fontsize=8.5, loc="left", family="monospace",
                     color=_COLOURS["disagree"] if marked else "black")
    for k in range(len(picks), rows * columns):
        grid[k // columns][k % columns].axis("off")
    head = f"{explanation.op}-{explanation.version} ({explanation.dialect})"
    if explanation.layer:
        head = f"layer {explanation.layer!r}: {head}"
    attributes = ", ".join(f"{k}={v}" for k, v in explanation.attributes.items())
    head += (f"   input {'x'.join(map(str, explanation.input_shape))} -> output "
             f"{'x'.join(map(str, explanation.output_shape))}   {attributes}")
    summary = "\n".join(
        f"axis {a.axis}: length {a.length}, kernel {a.kernel}, stride {a.stride}, pads "
        f"{a.pad_begin}/{a.pad_end} -> outputs: " + ", ".join(
            f"{r} {n if n is not None else 'refused'}" for r, n in a.lengths.items())
        for a in explanation.axes[-2:])
    if explanation.is_average:
        summary += "\ndivisors: " + "; ".join(f"{_SHORT[r]} counts {_COUNTS[r]}"
                                              for r in EXPLAINED_DIVISOR_RULES)
    figure.suptitle(head + "\n" + summary, fontsize=10)
    figure.legend(handles=[Patch(facecolor="white", edgecolor="black", label="input"),
                           Patch(facecolor=_COLOURS["pad"], hatch="//", edgecolor="#999999",
                                 label="padding"),
                           Patch(facecolor=_COLOURS["beyond"], edgecolor="#999999",
                                 label="beyond the padding"),
                           Patch(facecolor=_COLOURS["tap_input"], label="tap on the input"),
                           Patch(facecolor=_COLOURS["tap_pad"], label="tap in the padding"),
                           Patch(facecolor=_COLOURS["tap_beyond"],
                                 label="tap beyond the padding"),
                           Patch(fill=False, edgecolor=_COLOURS["disagree"], linewidth=2,
                                 label="window where the rules disagree"),
                           Patch(fill=False, edgecolor=_COLOURS["ordinary"], linewidth=2,
                                 label="window where they agree")],
                  loc="outside lower center", ncol=4, fontsize=9, frameon=False)
    figure.savefig(path, dpi=100)
    plt.close(figure)
    return path


# ---- the command line ----------------------------------------------------------------------

def _value(text):
    """A command-line attribute value: ints (comma separated), true/false, or a string."""
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        return text
    return values[0] if len(values) == 1 and "," not in text else values


def _shape(text):
    try:
        return tuple(int(v) for v in text.split(","))
    except ValueError:
        raise BadArgumentError(f"--input-shape {text!r}: expected integers separated by commas") \
            from None


def explain_from_arguments(model, layer, op, dialect, input_shape, attributes):
    """The explanation ``ovpool explain`` asks for (model and --layer, or --op and --attr)."""
    shape = None if input_shape is None else _shape(input_shape)
    if model is not None:
        if layer is None or op is not None or attributes:
            raise BadArgumentError("explain MODEL needs --layer NAME (and no --op / --attr)")
        return explain_layer(model, layer, shape)
    if op is None or shape is None:
        raise BadArgumentError("explain needs MODEL --layer NAME, or --op OP-VERSION "
                               "--input-shape D0,D1,... --attr NAME=VALUE ...")
    given = {}
    for item in attributes:
        name, equals, text = item.partition("=")
        if not equals or not name:
            raise BadArgumentError(f"--attr {item!r}: expected NAME=VALUE")
        given[name.strip().replace("-", "_")] = _value(text)
    return explain(op, shape, dialect=dialect, **given)


def write_json(explanation, path):
    from ._reports import write_json as write

    return write(path, explanation.to_dict())
