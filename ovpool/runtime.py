"""Compile a parsed IR model into an execution plan, and run it.

Compiling orders the layers needed by the Results (topologically, ties in XML order), builds
each op from its attributes once, infers every tensor's shape and element type (checking them
against the dims the IR declares), folds everything computable from constants, and assigns
each remaining tensor a slot with a known last use, so intermediates are released as soon as
their last consumer has run. Calling the compiled model checks the inputs, re-infers shapes
when they are dynamic (once per distinct input shape), then runs the plan.
"""

import heapq
import inspect
import math
import os
import time

import numpy as np

from ._limits import check_allocation, shape_text
from .config import num_threads, positive_int
from .errors import (BadArgumentError, BadDtypeError, BadShapeError, MemoryLimitError,
                     ModelError, OvpoolError, UnsupportedError)
from .ir.element_types import element_type_of
from .ir.model import Dimension, Model, PartialShape, TensorInfo
from .ir.reader import read_model
from .ops import REGISTRY, Spec, lookup, supported_versions
from .profile import LayerTime

__all__ = ["compile_model", "CompiledModel"]

_MAX_CACHED_SIGNATURES = 64


def compile_model(model, num_threads=None):
    """Compile a model for inference.

    Parameters
    ----------
    model : ovpool.Model, str or os.PathLike
        A model from :func:`ovpool.read_model`, or the path of its ``.xml``.
    num_threads : int, optional
        Threads for the pooling kernels while this model runs (default: ``ovpool.get_num_threads()``).

    Returns
    -------
    CompiledModel
    """
    if not isinstance(model, Model):
        if not isinstance(model, (str, os.PathLike)):
            raise BadArgumentError(
                f"compile_model takes an ovpool.Model or a path, got {type(model).__name__}")
        model = read_model(model)
    if num_threads is not None:
        positive_int("num_threads", num_threads)
    return CompiledModel(model, num_threads)


def validate_layers(model):
    """Parse and validate the attributes of every layer of ``model`` that ovpool implements,
    as compiling it would, raising the OvpoolError that names layer and attribute. For callers
    that hand the model to another engine (OpenVINO parses attributes leniently:
    ``kernel="2.5,2"`` becomes [2, 2])."""
    for layer in model.layers:
        if lookup(layer) is not None:
            CompiledModel._build(layer)


class _Step:
    __slots__ = ("run", "inputs", "outputs", "free", "layer")

    def __init__(self, run, inputs, outputs, free, layer):
        self.run, self.inputs, self.outputs, self.free, self.layer = run, inputs, outputs, free, layer


def _unsupported(layer):
    versions = supported_versions(layer.type)
    if versions:
        known = ", ".join(f"opset{v}" for v in versions)
        return UnsupportedError(f"ovpool runs {layer.type} versions {known}, not {layer.version}")
    types = sorted({name for name, _ in REGISTRY})
    return UnsupportedError(f"ovpool cannot run layer type {layer.type}; supported types: "
                            f"{', '.join(types)}")


def _check_size(shape, dtype, port):
    """Refuse a tensor over the memory limit (known dims only; unknown ones are checked when
    the model runs and shapes are re-inferred), or of a rank numpy cannot hold."""
    check_allocation(shape, dtype, f"output port {port}")


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


def order_inputs(infos, inputs):
    """The caller's ``inputs`` in the order of ``infos`` (the model's input tensors): a dict
    keyed by any of an input's names (tensor names or its Parameter's name), a list or tuple in
    input order, or a single value for a one-input model."""
    names = [t.name for t in infos]
    if isinstance(inputs, dict):
        arrays = []
        remaining = dict(inputs)
        for info in infos:
            key = next((n for n in (info.name, *info.names, info.layer.name)
                        if n in remaining), None)
            if key is None:
                raise BadArgumentError(f"no value for input {info.name!r}; got "
                                       f"{sorted(map(str, inputs))}")
            arrays.append(remaining.pop(key))
        if remaining:
            raise BadArgumentError(f"unknown input names {sorted(map(str, remaining))}; the "
                                   f"model's inputs are {names}")
        return arrays
    if isinstance(inputs, (list, tuple)):
        if len(inputs) != len(infos):
            raise BadArgumentError(f"got {len(inputs)} inputs; the model has {len(infos)}: "
                                   f"{names}")
        return list(inputs)
    if len(infos) != 1:
        raise BadArgumentError(f"the model has {len(infos)} inputs {names}; pass a list or dict")
    return [inputs]


class CompiledModel:
    """A model ready to run: ``compiled(inputs)`` or ``compiled.infer(inputs)``.

    ``inputs`` is one array (single-input models), a list in input order, or a dict keyed by
    input name; the result is a dict keyed by output name.
    """

    def __init__(self, model, num_threads=None):
        self.model = model
        self.num_threads = num_threads
        self._order = self._schedule(model)
        self._ops = {layer.id: self._build(layer) for layer in self._order}
        self._sources = {(e.to_layer, e.to_port): (e.from_layer, e.from_port) for e in model.edges}
        self._parameters = [t.layer for t in model.inputs]
        self._dynamic = not all(t.shape.is_static for t in model.inputs)
        self._input_specs = [Spec(t.shape.to_shape(), t.dtype) for t in model.inputs]
        specs = self._infer(self._input_specs, compile_time=True)
        self._plan(specs)
        self.inputs = model.inputs
        names = self._output_names()
        self.outputs = tuple(self._output_info(t, specs, names) for t in model.outputs)
        self._signatures = {}
        self._expected = [(t.name, t.dtype, tuple(t.shape.to_shape()), t.shape)
                          for t in model.inputs]

    # ---- compile -------------------------------------------------------------------------

    @staticmethod
    def _schedule(model):
        """The layers the Results depend on (and every Parameter), in topological order."""
        position = {layer.id: i for i, layer in enumerate(model.layers)}
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
        consumers = {layer_id: [] for layer_id in needed}
        waiting = {layer_id: 0 for layer_id in needed}
        for edge in model.edges:
            if edge.to_layer in needed:
                consumers[edge.from_layer].append(edge.to_layer)
                waiting[edge.to_layer] += 1
        ready = [(position[i], i) for i, count in waiting.items() if count == 0]
        heapq.heapify(ready)
        order = []
        while ready:
            _, layer_id = heapq.heappop(ready)
            order.append(model.layer(layer_id))
            for consumer in consumers[layer_id]:
                waiting[consumer] -= 1
                if waiting[consumer] == 0:
                    heapq.heappush(ready, (position[consumer], consumer))
        return order

    @staticmethod
    def _build(layer):
        factory = lookup(layer)
        try:
            if factory is None:
                raise _unsupported(layer)
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

    def _infer(self, parameter_specs, compile_time):
        """Every tensor's Spec, keyed by (layer id, port id); values are folded constants."""
        specs = {}
        given = {layer.id: spec for layer, spec in zip(self._parameters, parameter_specs)}
        for layer in self._order:
            op = self._ops[layer.id]
            try:
                inputs = [specs[self._sources[(layer.id, port.id)]] for port in layer.inputs]
                if layer.id in given:
                    outputs = [given[layer.id]]
                else:
                    outputs = op.infer(*inputs)
                if len(outputs) != len(layer.outputs):
                    raise ModelError(f"the layer declares {len(layer.outputs)} output ports; "
                                     f"{layer.type}-{layer.version} has {len(outputs)} outputs")
                for port, spec in zip(layer.outputs, outputs):
                    _check_size(spec.shape, spec.dtype, port.id)
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

    def _plan(self, specs):
        """Slots for the tensors the steps pass around, and the steps in run order."""
        slots = {}

        def slot(key):
            if key not in slots:
                slots[key] = len(slots)
            return slots[key]

        parameter_slots = [slot((layer.id, layer.outputs[0].id)) for layer in self._parameters]
        raw_steps = []
        result_sources = {}
        for layer in self._order:
            if layer.type == "Result":
                result_sources[layer.id] = self._sources[(layer.id, layer.inputs[0].id)]
                continue
            if layer.type == "Parameter" or all(
                    specs[(layer.id, p.id)].value is not None for p in layer.outputs):
                continue
            raw_steps.append(layer)
        outputs = set(result_sources.values())
        used = set(outputs)
        for layer in raw_steps:
            used.update(self._sources[(layer.id, p.id)] for p in layer.inputs)

        steps, last_use = [], {}
        discard = None
        for index, layer in enumerate(raw_steps):
            op = self._ops[layer.id]
            keys = [(layer.id, p.id) for p in layer.outputs]
            run = op.run
            if op.run_first is not None and not any(k in used for k in keys[1:]):
                run, keys = op.run_first, keys[:1]
            if not all(k in used for k in keys):
                discard = slot(("discard", None)) if discard is None else discard
            out_slots = tuple(slot(k) if k in used else discard for k in keys)
            in_slots = tuple(slot(self._sources[(layer.id, p.id)]) for p in layer.inputs)
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
        self._steps = [_Step(run, ins, outs, tuple(free), layer)
                       for (run, ins, outs, layer), free in zip(steps, frees)]
        self._template = [None] * len(slots)
        for key, s in slots.items():
            if key[0] != "discard" and specs[key].value is not None:
                self._template[s] = specs[key].value
        self._parameter_slots = parameter_slots
        names = self._output_names()
        self._outputs = [(names[t.layer.id], slots[result_sources[t.layer.id]])
                         for t in self.model.outputs]

    def _output_names(self):
        names, seen = {}, set()
        for info in self.model.outputs:
            for candidate in (info.name, info.layer.name, f"{info.layer.name}:{info.layer.id}"):
                if candidate not in seen:
                    break
            names[info.layer.id] = candidate
            seen.add(candidate)
        return names

    def _output_info(self, info, specs, names):
        spec = specs[self._sources[(info.layer.id, info.layer.inputs[0].id)]]
        shape = info.shape
        if spec.shape is not None:
            shape = PartialShape(Dimension.static(n) if n is not None else d
                                 for n, d in zip(spec.shape, info.shape))
        name = names[info.layer.id]
        return TensorInfo(name, info.names, element_type_of(spec.dtype), spec.dtype, shape,
                          info.layer)

    # ---- infer ---------------------------------------------------------------------------

    def _bind(self, inputs):
        """The caller's inputs as a list of arrays in input order, each checked."""
        expected = self._expected
        arrays = order_inputs(self.model.inputs, inputs)
        for index, (array, (name, dtype, shape, partial)) in enumerate(zip(arrays, expected)):
            if type(array) is not np.ndarray:
                if isinstance(array, np.ndarray):
                    array = np.asarray(array)
                else:
                    try:
                        array = np.asarray(array, dtype=dtype)
                    except (TypeError, ValueError) as error:
                        raise BadArgumentError(f"input {name!r} cannot be made an array of "
                                               f"{dtype}: {error}") from None
                arrays[index] = array
            if array.dtype != dtype:
                raise BadDtypeError(f"input {name!r} has dtype {array.dtype}; the model expects "
                                    f"{element_type_of(dtype)} ({dtype})")
            if array.shape != shape and not partial.admits(array.shape):
                raise BadShapeError(f"input {name!r} has shape {list(array.shape)}; the model "
                                    f"expects {partial}")
        return arrays

    def _check_signature(self, arrays):
        signature = tuple(a.shape for a in arrays)
        if signature not in self._signatures:
            self._infer([Spec(a.shape, a.dtype) for a in arrays], compile_time=False)
            if len(self._signatures) >= _MAX_CACHED_SIGNATURES:
                self._signatures.clear()
            self._signatures[signature] = True

    def infer(self, inputs, trace=None):
        """Run the model. ``trace``: optional callable given one line per executed layer (a
        :class:`ovpool.profile.LayerTime`: a str with the layer's name, type and seconds)."""
        arrays = self._bind(inputs)
        if self._dynamic:
            self._check_signature(arrays)
        values = self._template.copy()
        for s, array in zip(self._parameter_slots, arrays):
            values[s] = array
        with num_threads(self.num_threads):
            if trace is None:
                for step in self._steps:
                    try:
                        results = step.run(*[values[s] for s in step.inputs])
                    except OvpoolError as error:
                        raise error.with_context(step.layer.context) from None
                    for s, result in zip(step.outputs, results):
                        values[s] = result
                    for s in step.free:
                        values[s] = None
            else:
                self._run_traced(values, trace)
        return {name: np.ascontiguousarray(values[s]) for name, s in self._outputs}

    __call__ = infer

    def _run_traced(self, values, trace):
        for step in self._steps:
            arguments = [values[s] for s in step.inputs]
            start = time.perf_counter()
            try:
                results = step.run(*arguments)
            except OvpoolError as error:
                raise error.with_context(step.layer.context) from None
            seconds = time.perf_counter() - start
            layer = step.layer
            shapes_in = " ".join(f"{a.dtype}{list(a.shape)}" for a in arguments)
            shapes_out = " ".join(f"{r.dtype}{list(r.shape)}" for r in results)
            trace(LayerTime(f"layer {layer.id} {layer.name!r} {layer.type}-{layer.version}: "
                            f"{shapes_in} -> {shapes_out} ({seconds * 1e6:.1f} us)",
                            layer.name, f"{layer.type}-{layer.version}", seconds))
            for s, result in zip(step.outputs, results):
                values[s] = result
            for s in step.free:
                values[s] = None

    def __repr__(self):
        return (f"<ovpool.CompiledModel {self.model.name!r}: {len(self._steps)} steps, "
                f"inputs {[str(t) for t in self.inputs]}, outputs {[str(t) for t in self.outputs]}>")
