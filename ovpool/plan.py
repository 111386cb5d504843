"""Compiling a parsed IR model into an immutable execution plan (:func:`compile_plan`).

Compiling orders the layers needed by the Results (topologically, ties in XML order), builds
each op from its attributes once, infers every tensor's shape and element type (checking them
against the dims the IR declares), folds everything computable from constants, and assigns
each remaining tensor a slot with a known last use, so intermediates are released as soon as
their last consumer has run. Nothing here runs a model or keeps state between calls: the
runtime (:mod:`ovpool.runtime`) binds inputs to a :class:`Plan` and runs its steps.
"""

import inspect
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple

from ._limits import check_allocation, shape_text
from .errors import ModelError, OvpoolError, UnsupportedError
from .ir.element_types import element_type_of
from .ir.graph import topological_order
from .ir.model import Dimension, PartialShape, TensorInfo
from .ops import REGISTRY, Spec, lookup, supported_versions

__all__ = ["Plan", "Step", "compile_plan", "infer_specs", "build_op", "unsupported"]


class Step:
    """One op call: ``run`` reads the values in slots ``inputs``, writes its results to slots
    ``outputs``; the slots in ``free`` are released afterwards (their last use). Read-only;
    plain slots rather than a NamedTuple, as the run loop reads them on every call."""

    __slots__ = ("run", "inputs", "outputs", "free", "layer")

    def __init__(self, run, inputs, outputs, free, layer):
        for name, value in zip(self.__slots__, (run, inputs, outputs, free, layer)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"a plan's steps are read-only (setting {name!r})")


class Graph(NamedTuple):
    """What shape inference walks: the needed layers in run order, their ops, and the
    producer of every input port, keyed (layer id, port id)."""

    order: tuple
    ops: MappingProxyType
    sources: MappingProxyType
    parameters: tuple     # the Parameter layers, in input order


@dataclass(frozen=True, eq=False)
class Plan:
    """A compiled model. ``template`` holds one entry per slot: the folded constants, None
    elsewhere; the inputs go to ``parameter_slots``; the outputs are read from ``outputs``
    (name, slot). ``expected`` is (name, dtype, static shape or Nones, PartialShape) per input;
    ``output_infos`` the outputs' TensorInfos with the shapes inference found."""

    graph: Graph
    dynamic: bool
    steps: tuple
    template: tuple
    parameter_slots: tuple
    outputs: tuple
    expected: tuple
    output_infos: tuple


def compile_plan(model):
    """The :class:`Plan` of ``model`` (an :class:`ovpool.Model`); raises the OvpoolError that
    names the layer at fault."""
    order = tuple(_schedule(model))
    graph = Graph(order, MappingProxyType({layer.id: build_op(layer) for layer in order}),
                  MappingProxyType({(e.to_layer, e.to_port): (e.from_layer, e.from_port)
                                    for e in model.edges}),
                  tuple(t.layer for t in model.inputs))
    input_specs = [Spec(t.shape.to_shape(), t.dtype) for t in model.inputs]
    specs = infer_specs(graph, input_specs, compile_time=True)
    names = _output_names(model)
    steps, template, parameter_slots, outputs = _slots(model, graph, specs, names)
    return Plan(
        graph=graph,
        dynamic=not all(t.shape.is_static for t in model.inputs),
        steps=steps, template=template, parameter_slots=parameter_slots, outputs=outputs,
        expected=tuple((t.name, t.dtype, tuple(t.shape.to_shape()), t.shape)
                       for t in model.inputs),
        output_infos=tuple(_output_info(t, graph, specs, names) for t in model.outputs))


def _schedule(model):
    """The layers the Results depend on (and every Parameter), in topological order."""
    producers = {}
    for edge in model.edges:
        producers.setdefault(edge.to_layer, []).append(edge.from_layer)
    needed = {t.layer.id for t in model.inputs}
    stack = [t.layer.id for t in model.outputs]
    while stack:
        layer_id = stack.pop()
        if layer_id not in needed:
            needed.add(layer_id)
            stack.extend(producers.get(layer_id, ()))
    layers = [layer for layer in model.layers if layer.id in needed]
    return [model.layer(layer_id) for layer_id in topological_order(layers, model.edges)]


def unsupported(layer):
    """The UnsupportedError for a layer no op of ovpool's registry runs."""
    versions = supported_versions(layer.type)
    if versions:
        known = ", ".join(f"opset{v}" for v in versions)
        return UnsupportedError(f"ovpool runs {layer.type} versions {known}, not {layer.version}")
    types = sorted({name for name, _ in REGISTRY})
    return UnsupportedError(f"ovpool cannot run layer type {layer.type}; supported types: "
                            f"{', '.join(types)}")


def build_op(layer):
    """The layer's op, built from its attributes, after checking its number of inputs."""
    factory = lookup(layer)
    try:
        if factory is None:
            raise unsupported(layer)
        op = factory(layer)
        parameters = inspect.signature(op.infer).parameters.values()
        variadic = any(p.kind == p.VAR_POSITIONAL for p in parameters)
        required = sum(p.kind == p.POSITIONAL_OR_KEYWORD and p.default is p.empty
                       for p in parameters)
        allowed = sum(p.kind == p.POSITIONAL_OR_KEYWORD for p in parameters)
        count = len(layer.inputs)
        if count < required or (count > allowed and not variadic) or (variadic and count < 1):
            wanted = f"{required}" if required == allowed else f"{required} to {allowed}"
            raise ModelError(f"the layer has {count} input ports; {layer.type}-"
                             f"{layer.version} takes {wanted}{' or more' if variadic else ''}")
    except OvpoolError as error:
        raise error.with_context(layer.context) from None
    return op


def _check_declared(port, spec):
    """The IR's declared dims and precision must agree with what inference found."""
    if spec.shape is not None:
        declared = port.dims
        contradicts = len(declared) != len(spec.shape) or any(
            n is not None and not d.admits(n) for d, n in zip(declared, spec.shape))
        if contradicts:
            raise ModelError(f"output port {port.id}: the declared dims {declared} contradict "
                             f"the inferred shape {shape_text(spec.shape)}")
    inferred_type = element_type_of(spec.dtype)
    if port.element_type and inferred_type and port.element_type != inferred_type:
        raise ModelError(f"output port {port.id}: the declared precision {port.element_type} "
                         f"contradicts the inferred element type {inferred_type}")


def infer_specs(graph, parameter_specs, compile_time):
    """Every tensor's Spec, keyed by (layer id, port id); values are folded constants. Each
    output is checked against the memory limit (known dims only) and, at compile time, against
    the dims and precision the IR declares. The runtime calls this again with the actual input
    shapes of a dynamic model."""
    specs = {}
    given = {layer.id: spec for layer, spec in zip(graph.parameters, parameter_specs)}
    for layer in graph.order:
        op = graph.ops[layer.id]
        try:
            inputs = [specs[graph.sources[(layer.id, port.id)]] for port in layer.inputs]
            if layer.id in given:
                outputs = [given[layer.id]]
            else:
                outputs = op.infer(*inputs)
            if len(outputs) != len(layer.outputs):
                raise ModelError(f"the layer declares {len(layer.outputs)} output ports; "
                                 f"{layer.type}-{layer.version} has {len(outputs)} outputs")
            for port, spec in zip(layer.outputs, outputs):
                check_allocation(spec.shape, spec.dtype, f"output port {port.id}")
                if compile_time:
                    _check_declared(port, spec)
            foldable = (layer.id not in given and layer.type != "Result"
                        and all(s.value is not None for s in inputs)
                        and any(s.value is None for s in outputs))
            if foldable:
                values = op.run(*[s.value for s in inputs])
                outputs = [Spec(v.shape, v.dtype, v) for v in values]
        except OvpoolError as error:
            raise error.with_context(layer.context) from None
        for port, spec in zip(layer.outputs, outputs):
            specs[(layer.id, port.id)] = spec
    return specs


def _slots(model, graph, specs, names):
    """The steps in run order over numbered slots: (steps, template, parameter slots,
    outputs as (name, slot))."""
    slots = {}

    def slot(key):
        if key not in slots:
            slots[key] = len(slots)
        return slots[key]

    sources = graph.sources
    parameter_slots = tuple(slot((layer.id, layer.outputs[0].id)) for layer in graph.parameters)
    raw_steps = []
    result_sources = {}
    for layer in graph.order:
        if layer.type == "Result":
            result_sources[layer.id] = sources[(layer.id, layer.inputs[0].id)]
            continue
        if layer.type == "Parameter" or all(
                specs[(layer.id, p.id)].value is not None for p in layer.outputs):
            continue
        raw_steps.append(layer)
    outputs = set(result_sources.values())
    used = set(outputs)
    for layer in raw_steps:
        used.update(sources[(layer.id, p.id)] for p in layer.inputs)

    steps, last_use = [], {}
    discard = None
    for index, layer in enumerate(raw_steps):
        op = graph.ops[layer.id]
        keys = [(layer.id, p.id) for p in layer.outputs]
        run = op.run
        if op.run_first is not None and not any(k in used for k in keys[1:]):
            run, keys = op.run_first, keys[:1]
        if not all(k in used for k in keys):
            discard = slot(("discard", None)) if discard is None else discard
        out_slots = tuple(slot(k) if k in used else discard for k in keys)
        in_slots = tuple(slot(sources[(layer.id, p.id)]) for p in layer.inputs)
        for s in in_slots:
            last_use[s] = index
        steps.append((run, in_slots, out_slots, layer))
    for key in outputs:
        slot(key)

    output_slots = {slots[k] for k in outputs}
    frees = [[] for _ in steps]
    for s, index in last_use.items():
        if s not in output_slots:
            frees[index].append(s)
    if discard is not None:
        for index, (_, _, out_slots, _) in enumerate(steps):
            if discard in out_slots:
                frees[index].append(discard)
    template = [None] * len(slots)
    for key, s in slots.items():
        if key[0] != "discard" and specs[key].value is not None:
            template[s] = specs[key].value
    return (tuple(Step(run, ins, outs, tuple(free), layer)
                  for (run, ins, outs, layer), free in zip(steps, frees)),
            tuple(template), parameter_slots,
            tuple((names[t.layer.id], slots[result_sources[t.layer.id]]) for t in model.outputs))


def _output_names(model):
    """Result layer id -> its output's name: its tensor name, else the Result's name, else
    ``name:id`` (names already taken by an earlier output are skipped)."""
    names, seen = {}, set()
    for info in model.outputs:
        for candidate in (info.name, info.layer.name, f"{info.layer.name}:{info.layer.id}"):
            if candidate not in seen:
                break
        names[info.layer.id] = candidate
        seen.add(candidate)
    return names


def _output_info(info, graph, specs, names):
    spec = specs[graph.sources[(info.layer.id, info.layer.inputs[0].id)]]
    shape = info.shape
    if spec.shape is not None:
        shape = PartialShape(Dimension.static(n) if n is not None else d
                             for n, d in zip(spec.shape, info.shape))
    return TensorInfo(names[info.layer.id], info.names, element_type_of(spec.dtype), spec.dtype,
                      shape, info.layer)
