"""Run compiled IR models: :func:`compile_model` and :class:`CompiledModel`.

Compiling is :func:`ovpool.plan.compile_plan` (layer order, ops, shape inference, constant
folding, slots). A call binds the inputs (matched by name or position, checked against the
model's element types and shapes), re-infers shapes when the model is dynamic (once per
distinct input shape), then runs the plan's steps in one loop; a ``trace`` observes that loop,
one :class:`ovpool.profile.LayerTime` per step.
"""

import os
import time

import numpy as np

from .config import num_threads, positive_int
from .errors import BadArgumentError, BadDtypeError, BadShapeError, OvpoolError
from .ir.element_types import element_type_of
from .ir.model import Model
from .ir.reader import read_model
from .ops import Spec, lookup
from .plan import build_op, compile_plan, infer_specs
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
            build_op(layer)


def input_names(info):
    """Every name an input answers to: its name, its tensor names and its Parameter's name."""
    return (info.name, *info.names, info.layer.name)


def input_index(infos, name):
    """The position in ``infos`` (the model's input tensors) of the input that answers to
    ``name``, or None."""
    return next((i for i, info in enumerate(infos) if name in input_names(info)), None)


def order_inputs(infos, inputs):
    """The caller's ``inputs`` in the order of ``infos`` (the model's input tensors): a dict
    keyed by any of an input's names (:func:`input_names`), a list or tuple in input order, or
    a single value for a one-input model."""
    names = [t.name for t in infos]
    if isinstance(inputs, dict):
        arrays = []
        remaining = dict(inputs)
        for info in infos:
            key = next((n for n in input_names(info) if n in remaining), None)
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


def _tracer(trace):
    """The observer of the run loop (:meth:`CompiledModel.infer`) that hands ``trace`` one
    LayerTime per step."""
    def observe(layer, arguments, results, seconds):
        shapes_in = " ".join(f"{a.dtype}{list(a.shape)}" for a in arguments)
        shapes_out = " ".join(f"{r.dtype}{list(r.shape)}" for r in results)
        trace(LayerTime(f"layer {layer.id} {layer.name!r} {layer.type}-{layer.version}: "
                        f"{shapes_in} -> {shapes_out} ({seconds * 1e6:.1f} us)",
                        layer.name, f"{layer.type}-{layer.version}", seconds))
    return observe


class CompiledModel:
    """A model ready to run: ``compiled(inputs)`` or ``compiled.infer(inputs)``.

    ``inputs`` is one array (single-input models), a list in input order, or a dict keyed by
    input name; the result is a dict keyed by output name.
    """

    def __init__(self, model, num_threads=None):
        self.model = model
        self.num_threads = num_threads
        self.plan = compile_plan(model)
        self.inputs = model.inputs
        self.outputs = self.plan.output_infos
        self._signatures = {}

    def _bind(self, inputs):
        """The caller's inputs as a list of arrays in input order, each checked."""
        arrays = order_inputs(self.model.inputs, inputs)
        for index, (array, (name, dtype, shape, partial)) in enumerate(
                zip(arrays, self.plan.expected)):
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
        """Re-infer shapes (and check them against the memory limit) for input shapes not
        seen before; the last few signatures are remembered."""
        signature = tuple(a.shape for a in arrays)
        if signature not in self._signatures:
            infer_specs(self.plan.graph, [Spec(a.shape, a.dtype) for a in arrays],
                        compile_time=False)
            if len(self._signatures) >= _MAX_CACHED_SIGNATURES:
                self._signatures.clear()
            self._signatures[signature] = True

    def infer(self, inputs, trace=None):
        """Run the model. ``trace``: optional callable given one line per executed layer (a
        :class:`ovpool.profile.LayerTime`: a str with the layer's name, type and seconds)."""
        plan = self.plan
        arrays = self._bind(inputs)
        if plan.dynamic:
            self._check_signature(arrays)
        values = list(plan.template)
        for s, array in zip(plan.parameter_slots, arrays):
            values[s] = array
        observe = None if trace is None else _tracer(trace)
        with num_threads(self.num_threads):
            # The one run loop; ``observe``, when given, sees each step's layer, arguments,
            # results and seconds.
            for step in plan.steps:
                arguments = [values[s] for s in step.inputs]
                if observe is not None:
                    start = time.perf_counter()
                try:
                    results = step.run(*arguments)
                except OvpoolError as error:
                    raise error.with_context(step.layer.context) from None
                if observe is not None:
                    observe(step.layer, arguments, results, time.perf_counter() - start)
                for s, result in zip(step.outputs, results):
                    values[s] = result
                for s in step.free:
                    values[s] = None
        return {name: np.ascontiguousarray(values[s]) for name, s in plan.outputs}

    __call__ = infer

    def __repr__(self):
        return (f"<ovpool.CompiledModel {self.model.name!r}: {len(self.plan.steps)} steps, "
                f"inputs {[str(t) for t in self.inputs]}, outputs {[str(t) for t in self.outputs]}>")
