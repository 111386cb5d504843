"""The ``ovpool`` command: ``ovpool run``, ``ovpool info``, ``ovpool check MODEL.xml`` and
``ovpool build-extension`` (the native OpenVINO extension library).

Errors in the model, the inputs or the arguments print one line on stderr and exit with 2;
anything else is an internal error (exit 1); ``check`` exits with 3 when the engines disagree.
``--debug`` adds tracebacks and a per-layer trace.
"""

import argparse
import os
import sys
import time
import traceback
import zipfile

import numpy as np

from . import __version__
from . import openvino as bridge
from ._atomic import check_output_target, save_npz_atomically
from ._inputfiles import load_input
from ._limits import INT64_MAX, check_allocation, memory_limit_argument
from .config import set_memory_limit
from .errors import BadArgumentError, OvpoolError, UnsupportedError
from .ir import read_model
from .ops import lookup
from .plan import unsupported
from .runtime import compile_model, input_index, validate_layers
from .streaming import PROGRESS_CHOICES, Statistics

__all__ = ["main"]

EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_DISAGREE = 0, 1, 2, 3
EXIT_BROKEN_PIPE = 141     # 128 + SIGPIPE, as a shell reports a command killed by it
ENGINES = ("auto", "ovpool", "openvino")


def _positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _seed(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") \
            from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


def _parser():
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="print tracebacks on errors (and, for run, a per-layer trace)")
    common.add_argument("--memory-limit", type=memory_limit_argument, default=argparse.SUPPRESS,
                        metavar="SIZE",
                        help="refuse any single array larger than SIZE (e.g. 512M, 2G, 50%%; "
                             "default: half the physical memory)")
    parser = argparse.ArgumentParser(
        prog="ovpool", parents=[common],
        description="Run OpenVINO IR models (.xml + .bin) with ovpool, without OpenVINO.")
    parser.add_argument("--version", action="version", version=f"ovpool {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    run = commands.add_parser(
        "run", parents=[common], help="run a model and summarise its outputs",
        description="Run a model on inputs from .npy/.npz files, or on seeded random inputs.")
    run.add_argument("model", metavar="MODEL.xml", help="the IR model (its .bin is found beside it)")
    run.add_argument("--input", "-i", action="append", default=[], metavar="[NAME=]FILE",
                     help="an input from FILE.npy, or inputs from FILE.npz (keys are input "
                          "names); repeatable. Inputs not given are seeded random data")
    run.add_argument("--shape", action="append", default=[], metavar="[NAME=]D0,D1,...",
                     help="the shape of a random input whose model shape is dynamic")
    run.add_argument("--output", "-o", metavar="FILE.npz",
                     help="write every output to FILE.npz; with --batch-size also FILE.npy "
                          "(one output) or a directory (one NAME.npy per output)")
    run.add_argument("--threads", type=_positive_int, metavar="N",
                     help="threads for the pooling kernels (default: all available cores)")
    run.add_argument("--repeat", type=_positive_int, default=1, metavar="K",
                     help="run K times and report the best and mean time (default 1)")
    run.add_argument("--seed", type=_seed, default=0, help="seed of the random inputs (default 0)")
    run.add_argument("--bin", metavar="FILE.bin", help="the weights file, if not beside the .xml")
    run.add_argument("--engine", choices=ENGINES, default="auto",
                     help="ovpool: ovpool's own runtime; openvino: OpenVINO's CPU plugin with "
                          "ovpool's pooling (any model OpenVINO runs); auto (default): ovpool "
                          "when it runs every layer, else openvino when installed")
    run.add_argument("--batch-size", type=_positive_int, metavar="N",
                     help="stream: map the .npy inputs, run N items (axis 0) at a time and "
                          "write the outputs chunk by chunk; memory stays a few chunks")
    run.add_argument("--progress", choices=PROGRESS_CHOICES, default="auto",
                     help="with --batch-size: a progress bar on stderr (auto: when stderr is "
                          "a terminal)")
    run.add_argument("--profile", action="store_true",
                     help="per-layer time sorted by total (calls, total, share); with --repeat K "
                          "also latency p50/p90/p99 and throughput")
    run.add_argument("--json", metavar="FILE", help="with --profile: write the report as JSON")
    run.add_argument("--dask", metavar="ADDRESS",
                     help="with --batch-size: run the chunks on a Dask cluster "
                          "(tcp://scheduler:8786, or local:N for N local worker processes); "
                          "the workers read the model and .npy inputs from the same paths")

    check = commands.add_parser(
        "check", parents=[common], help="compare ovpool, OpenVINO and OpenVINO with ovpool",
        description="Run a model with ovpool's runtime (when it runs every layer), OpenVINO's "
                    "CPU plugin, and OpenVINO with ovpool's pooling, on the same inputs; print "
                    "per output the largest absolute and relative differences from OpenVINO and "
                    "the elements out of tolerance. Exit 0 when all agree, 3 when not.")
    check.add_argument("model", metavar="MODEL.xml", help="the IR model")
    check.add_argument("--input", "-i", action="append", default=[], metavar="[NAME=]FILE",
                       help="as for run")
    check.add_argument("--shape", action="append", default=[], metavar="[NAME=]D0,D1,...",
                       help="as for run")
    check.add_argument("--seed", type=_seed, default=0, help="seed of the random inputs (default 0)")
    check.add_argument("--bin", metavar="FILE.bin", help="the weights file, if not beside the .xml")
    check.add_argument("--layers", action="store_true",
                       help="compare every pooling layer as OpenVINO runs it with its spec "
                            "(MODEL may be an .onnx too), naming the cause of each difference")
    check.add_argument("--json", metavar="FILE", help="with --layers: write the report as JSON")
    check.add_argument("--csv", metavar="FILE", help="with --layers: write the table as CSV")

    explain = commands.add_parser(
        "explain", parents=[common],
        help="how one pooling resolves its windows under every rounding and divisor rule",
        description="For one pooling layer of a model (MODEL --layer NAME) or for attributes "
                    "given directly (--op OP-VERSION --input-shape ... --attr NAME=VALUE), print "
                    "per spatial axis the resolved pads, the output length under each rounding "
                    "rule, and every window's span, real elements and divisors, marking the "
                    "windows where the rules disagree.")
    explain.add_argument("model", nargs="?", metavar="MODEL", help="an IR .xml or an .onnx model")
    explain.add_argument("--layer", metavar="NAME", help="the pooling layer (or ONNX node) to explain")
    explain.add_argument("--op", metavar="OP[-VERSION]",
                         help="AvgPool-16, MaxPool-14, ... or ONNX AveragePool-19, LpPool-18")
    explain.add_argument("--dialect", choices=("openvino", "onnx"),
                         help="the dialect of --op (default: onnx for AveragePool and LpPool)")
    explain.add_argument("--input-shape", "--shape", dest="input_shape", metavar="D0,D1,...",
                         help="the input shape (overrides the model's)")
    explain.add_argument("--attr", action="append", default=[], metavar="NAME=VALUE",
                         help="an attribute of --op: kernel=3,3 pads_begin=1,1 rounding_type=ceil "
                              "exclude_pad=false ceil_mode=1 ...")
    explain.add_argument("--png", metavar="FILE", help="also draw the windows into FILE (matplotlib)")
    explain.add_argument("--json", metavar="FILE", help="also write the explanation as JSON")

    info = commands.add_parser(
        "info", parents=[common], help="describe a model's inputs, outputs and layers",
        description="Show the IR version, inputs, outputs and every layer (shapes, key "
                    "attributes), flagging layers ovpool cannot run.")
    info.add_argument("model", metavar="MODEL.xml", help="the IR model")
    info.add_argument("--bin", metavar="FILE.bin", help="the weights file, if not beside the .xml")

    build = commands.add_parser(
        "build-extension", parents=[common],
        help="build the native OpenVINO extension library for the installed OpenVINO",
        description="Build ovpool's native OpenVINO extension library with CMake against the "
                    "installed openvino package and install it inside the ovpool package, where "
                    "ovpool.openvino.extension_path() finds it. Needs cmake and a C++17 compiler.")
    build.add_argument("--build-dir", metavar="DIR",
                       help="CMake build folder, kept for incremental rebuilds (default: "
                            "ovpool/native/lib/cmake-build inside the package)")
    build.add_argument("--jobs", type=_positive_int, default=2, metavar="N",
                       help="parallel compile jobs (default 2)")
    return parser


# ---- run -----------------------------------------------------------------------------------

def _split_named(compiled, spec):
    """``NAME=VALUE`` -> (input index, VALUE); plain ``VALUE`` -> (None, VALUE)."""
    if "=" in spec:
        name, value = spec.split("=", 1)
        index = input_index(compiled.inputs, name)
        if index is None and not os.path.exists(spec):
            raise BadArgumentError(f"{spec!r}: the model has no input {name!r}; its inputs are "
                                   f"{[t.name for t in compiled.inputs]}")
        if index is not None:
            return index, value
    return None, spec


def _read_inputs(compiled, specs):
    arrays = {}
    for spec in specs:
        index, path = _split_named(compiled, spec)
        data = load_input(path)
        if isinstance(data, dict):
            files = list(data)
            if index is not None:
                name = compiled.inputs[index].name
                keys = [k for k in files if k in compiled.inputs[index].names] or \
                    (files if len(files) == 1 else [])
                if not keys:
                    raise BadArgumentError(f"{path} has no array named {name!r} (it has "
                                           f"{files})")
                arrays[index] = data[keys[0]]
                continue
            for key in files:
                at = input_index(compiled.inputs, key)
                if at is None:
                    raise BadArgumentError(f"{path}: array {key!r} matches no input; the "
                                           f"inputs are {[t.name for t in compiled.inputs]}")
                arrays[at] = data[key]
            continue
        if index is None:
            index = next((i for i in range(len(compiled.inputs)) if i not in arrays), None)
            if index is None:
                raise BadArgumentError(f"{path}: every input already has a value")
        if index in arrays:
            raise BadArgumentError(f"input {compiled.inputs[index].name!r} is given twice")
        arrays[index] = data
    return arrays


def _parse_shapes(compiled, specs):
    shapes = {}
    for spec in specs:
        index, dims = _split_named(compiled, spec)
        if index is None:
            if len(compiled.inputs) != 1:
                raise BadArgumentError(f"--shape {spec!r}: name the input (NAME=D0,D1,...); the "
                                       f"inputs are {[t.name for t in compiled.inputs]}")
            index = 0
        try:
            shapes[index] = tuple(int(d) for d in dims.split(","))
        except ValueError:
            raise BadArgumentError(f"--shape {spec!r}: expected comma-separated integers") from None
        if any(d < 0 for d in shapes[index]):
            raise BadArgumentError(f"--shape {spec!r}: dims must be non-negative")
        if any(d > INT64_MAX for d in shapes[index]):
            raise BadArgumentError(f"--shape {spec!r}: a dim is larger than 2**63-1")
    return shapes


# Random inputs are generated this many elements at a time, straight into the input array.
_RANDOM_BLOCK = 1 << 18


def _random_input(rng, info, shape):
    """Seeded random data of ``info``'s dtype, checked against the memory limit first and
    generated block by block in that dtype (no full-size float64 temporary): standard
    normal floats, integers in [-100, 100] clipped to the dtype, booleans half true."""
    dtype = np.dtype(info.dtype)
    check_allocation(shape, dtype, f"random input {info.name!r}")
    array = np.empty(shape, dtype)
    flat = array.reshape(-1)
    for start in range(0, flat.size, _RANDOM_BLOCK):
        count = min(_RANDOM_BLOCK, flat.size - start)
        if dtype == np.bool_:
            block = rng.random(count, dtype=np.float32) < 0.5
        elif dtype.kind in "iu":
            bounds = np.iinfo(dtype)
            block = rng.integers(max(bounds.min, -100), min(bounds.max, 100), count,
                                 dtype=dtype, endpoint=True)
        else:
            block = rng.standard_normal(count, dtype=np.float64 if dtype == np.float64
                                        else np.float32)
        flat[start:start + count] = block
    return array


def _inputs(compiled, args):
    given = _read_inputs(compiled, args.input)
    shapes = _parse_shapes(compiled, args.shape)
    rng = np.random.default_rng(args.seed)
    arrays = []
    for index, info in enumerate(compiled.inputs):
        if index in given:
            if index in shapes:
                raise BadArgumentError(f"input {info.name!r} has both --input and --shape")
            arrays.append(given[index])
            continue
        shape = shapes.get(index)
        if shape is None:
            if not info.shape.is_static:
                raise BadArgumentError(
                    f"input {info.name!r} has the dynamic shape {info.shape}; give its data "
                    f"(--input {info.name}=FILE.npy) or a shape (--shape {info.name}=...)")
            shape = info.shape.to_shape()
        elif not info.shape.admits(shape):
            raise BadArgumentError(f"--shape for input {info.name!r}: {list(shape)} does not fit "
                                   f"the model's shape {info.shape}")
        arrays.append(_random_input(rng, info, shape))
    return arrays


def _statistics(array):
    statistics = Statistics()
    statistics.add(array)
    return statistics.summary()


def _table(headers, rows):
    widths = [max(len(str(v)) for v in column) for column in zip(headers, *rows)]
    lines = ["  ".join(str(v).ljust(w) for v, w in zip(headers, widths)).rstrip()]
    lines += ["  ".join(str(v).ljust(w) for v, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def _savable(array):
    # npz has no bfloat16; store it widened to float32 rather than as opaque bytes.
    return array.astype(np.float32) if array.dtype.name == "bfloat16" else array


def _require_openvino(why):
    if not bridge.available():
        raise UnsupportedError(f"{why} needs the openvino package; {bridge.INSTALL_HINT}")


def _layer_list(layers):
    return ", ".join(f"{layer.id} ({layer.type}-{layer.version})" for layer in layers)


def _choose_engine(choice, model):
    """The engine to run ``model`` with: "ovpool" or "openvino" (see ``--engine``)."""
    if choice == "ovpool":
        return choice
    if choice == "openvino":
        _require_openvino("--engine openvino")
        return choice
    unsupported = [layer for layer in model.layers if lookup(layer) is None]
    if not unsupported:
        return "ovpool"
    if bridge.available():
        return "openvino"
    raise UnsupportedError(f"ovpool's runtime cannot run layer(s) {_layer_list(unsupported)}, "
                           "and running them with OpenVINO (--engine openvino) needs the "
                           f"openvino package; {bridge.INSTALL_HINT}")


class _OpenVINORunner:
    """OpenVINO (with or without ovpool's pooling) behind the runtime's ``infer`` interface."""

    def __init__(self, model, args, ovpool_pooling):
        validate_layers(model)      # ovpool's strict attribute parsing first
        self.inputs = model.inputs
        self.compiled = bridge.compile_with_openvino(
            model.path, model.bin_path, ovpool_pooling, getattr(args, "threads", None),
            performance_counters=bool(getattr(args, "profile", False)))
        order = [self.compiled.input_index(info.names, info.layer.name)
                 for info in model.inputs]
        if None in order or sorted(order) != list(range(len(order))):
            order = list(range(len(model.inputs)))
        self._order = order

    def infer(self, arrays, trace=None):
        ordered = [None] * len(arrays)
        for array, index in zip(arrays, self._order):
            ordered[index] = array
        return self.compiled.infer(ordered, trace=trace)


def _implementation_line(implementation):
    """Which of ovpool's OpenVINO extensions ran the pooling layers."""
    if implementation == "native":
        return f"ovpool in OpenVINO: native extension library ({bridge.extension_path()})"
    return "ovpool in OpenVINO: Python bridge (openvino.Op subclasses)"


def _files_read(args):
    """The files a run reads, which its --output must never replace. An --input is
    ``[NAME=]FILE``; both readings are protected, as FILE may itself contain '='."""
    paths = [args.model, args.bin or os.path.splitext(args.model)[0] + ".bin"]
    for spec in args.input:
        paths += [spec, spec.split("=", 1)[-1]]
    return paths


def _check_output_path(args):
    if args.output is not None and args.batch_size is None:
        check_output_target(args.output)
    elif args.output == "":
        raise BadArgumentError("--output is empty; name a file or directory")
    if args.output and any(os.path.exists(p) and os.path.exists(args.output)
                           and os.path.samefile(p, args.output) for p in _files_read(args)):
        raise BadArgumentError(f"--output {args.output} is a file this run reads; "
                               "refusing to overwrite it")


def _command_run(args, out):
    _check_output_path(args)
    if args.profile and args.batch_size is not None:
        raise BadArgumentError("--profile times whole runs: it cannot be combined with "
                               "--batch-size")
    if args.batch_size is None and args.dask:
        raise BadArgumentError("--dask runs the input in chunks: give --batch-size N too")
    model = read_model(args.model, args.bin)
    engine = _choose_engine(args.engine, model)
    if engine == "ovpool":
        compiled = compile_model(model, num_threads=args.threads)
        label = "ovpool"
    else:
        compiled = _OpenVINORunner(model, args, ovpool_pooling=True)
        label = "openvino (CPU plugin, pooling by ovpool)"
    if args.batch_size is not None:
        return _command_run_streaming(args, out, model, compiled, label)
    arrays = _inputs(compiled, args)
    debug = (lambda line: print(line, file=sys.stderr)) if getattr(args, "debug", False) else None
    if args.profile:
        return _command_run_profile(args, out, compiled, label, arrays, debug)
    if args.json:
        raise BadArgumentError("--json writes the --profile report: give --profile too")
    trace = debug
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        outputs = compiled.infer(arrays, trace=trace)
        times.append(time.perf_counter() - start)
        trace = None
    if args.output:
        # written before anything is printed: a closed or broken stdout never loses it
        save_npz_atomically(args.output, {name: _savable(a) for name, a in outputs.items()},
                            protected_paths=_files_read(args))
    rows = [(name, "x".join(map(str, a.shape)) or "scalar", a.dtype, *_statistics(a))
            for name, a in outputs.items()]
    print(f"model: {args.model}", file=out)
    print(f"engine: {label}", file=out)
    if engine == "openvino":
        print(_implementation_line(compiled.compiled.implementation), file=out)
    for info, array in zip(compiled.inputs, arrays):
        print(f"input: {info.name} {array.dtype} {list(array.shape)}", file=out)
    print(_table(("output", "shape", "dtype", "min", "max", "mean"), rows), file=out)
    best, mean = min(times) * 1e3, sum(times) / len(times) * 1e3
    if args.repeat > 1:
        print(f"inference time: best {best:.3f} ms, mean {mean:.3f} ms over {args.repeat} runs",
              file=out)
    else:
        print(f"inference time: {best:.3f} ms", file=out)
    if args.output:
        print(f"outputs written to {args.output}", file=out)
    return EXIT_OK


def _command_run_profile(args, out, compiled, label, arrays, debug):
    from .profile import Profile, progress

    profile = Profile(label)

    def trace(record):
        profile.trace(record)
        if debug is not None and len(profile.latencies) == 0:
            debug(record)

    with progress(args.repeat, sys.stderr) as bar:
        for _ in range(args.repeat):
            start = time.perf_counter()
            compiled.infer(arrays, trace=trace)
            profile.add_run(time.perf_counter() - start)
            bar.update(1)
    print(f"model: {args.model}", file=out)
    print(profile.text(), file=out)
    if args.json:
        from ._reports import write_json

        write_json(args.json, {"model": args.model, **profile.to_dict()})
        print(f"profile written to {args.json}", file=out)
    return EXIT_OK


def _stream_input_paths(compiled, specs):
    """One ``.npy`` path per model input, in input order, for a streaming run."""
    paths = {}
    for spec in specs:
        index, path = _split_named(compiled, spec)
        if not path.lower().endswith(".npy") and zipfile.is_zipfile(path):
            raise BadArgumentError(f"--batch-size streams .npy files; {path} is an archive "
                                   "(save each input with np.save)")
        if index is None:
            index = next((i for i in range(len(compiled.inputs)) if i not in paths), None)
            if index is None:
                raise BadArgumentError(f"{path}: every input already has a value")
        if index in paths:
            raise BadArgumentError(f"input {compiled.inputs[index].name!r} is given twice")
        paths[index] = path
    missing = [info.name for i, info in enumerate(compiled.inputs) if i not in paths]
    if missing:
        raise BadArgumentError(f"--batch-size streams inputs from .npy files; give one for "
                               f"{', '.join(missing)} (--input NAME=FILE.npy)")
    return [paths[i] for i in range(len(compiled.inputs))]


def _result_names(model, runner):
    """Result layer id -> the name that output has in ``runner``'s results."""
    if isinstance(runner, _OpenVINORunner):
        known = set(runner.compiled.output_names)
        return {info.layer.id: next((n for n in (info.name, *info.names) if n in known),
                                    info.name) for info in model.outputs}
    return {info.layer.id: info.name for info in runner.outputs}


def _command_run_streaming(args, out, model, runner, label):
    from . import streaming
    if args.shape:
        raise BadArgumentError("--shape makes random inputs; --batch-size streams .npy files")
    if args.repeat != 1:
        raise BadArgumentError("--repeat times in-memory runs; it does not combine with "
                               "--batch-size")
    if args.dask and isinstance(runner, _OpenVINORunner):
        raise UnsupportedError("--dask runs ovpool's runtime on the workers; this model needs "
                               "OpenVINO (--engine openvino), which --dask does not run")
    paths = _stream_input_paths(runner, args.input)
    plan = streaming.plan_batches(model, runner.inputs, _result_names(model, runner),
                                  args.batch_size)
    sources = streaming.open_inputs(paths, runner.inputs)
    client = None
    try:
        total = len(sources[0])
        if args.dask:
            from .dask import connect, stream_chunks
            client = connect(args.dask)
            chunks = stream_chunks(client, model, paths, total, args.batch_size, plan.static,
                                   num_threads=args.threads,
                                   memory_limit=getattr(args, "memory_limit", None))
            label += f", Dask cluster {args.dask}"
        else:
            chunks = streaming.local_chunks(runner, sources, args.batch_size, plan.static)
        result = streaming.stream(chunks, total, args.output, _files_read(args), args.progress,
                                  plan=plan)
        inputs = [(info.name, source.dtype, list(source.shape))
                  for info, source in zip(runner.inputs, sources)]
    finally:
        for source in sources:
            source.close()
        if client is not None:
            cluster = client.cluster if args.dask.startswith("local") else None
            client.close()
            if cluster is not None:
                cluster.close()
    rows = [(name, "x".join(map(str, shape)) or "scalar", dtype, *statistics.summary())
            for name, (shape, dtype, statistics) in result.outputs.items()]
    print(f"model: {args.model}", file=out)
    print(f"engine: {label}", file=out)
    for name, dtype, shape in inputs:
        print(f"input: {name} {dtype} {shape}", file=out)
    print(_table(("output", "shape", "dtype", "min", "max", "mean"), rows), file=out)
    rate = result.items / result.seconds if result.seconds > 0 else float("inf")
    print(f"streamed {result.items} items in chunks of {args.batch_size}: "
          f"{result.seconds:.3f} s, {rate:.1f} items/s", file=out)
    if args.output:
        print(f"outputs written to {args.output}", file=out)
    return EXIT_OK


# ---- check ---------------------------------------------------------------------------------

# Agreement with OpenVINO: exact for integers (max values, indices), relative for floats with
# an absolute floor for values near zero. float16 allows one ulp (2**-10 relative); float64 is
# held to float32's tolerance because OpenVINO computes it in float32.
def _compare(ours, theirs):
    """(max abs difference, max relative difference, elements out of tolerance)."""
    from .layercheck import compare_arrays

    if ours.shape != theirs.shape:
        return None, None, max(ours.size, theirs.size)
    if ours.size == 0:
        return 0.0, 0.0, 0
    diff, relative, bad = compare_arrays(ours, theirs)
    return float(diff.max()), float(relative.max()), int(np.count_nonzero(bad))


def _command_check_layers(args, out):
    from . import layercheck
    from ._reports import write_csv, write_json

    _require_openvino("ovpool check --layers")
    inputs = None
    if args.input:
        inputs = [load_input(spec) for spec in args.input]
    reports = layercheck.check_layers(args.model, inputs=inputs, seed=args.seed)
    print(f"model: {args.model}", file=out)
    rows = layercheck.table_rows(reports)
    print(_table(layercheck.table_headers(reports), rows) if rows else "no pooling layers",
          file=out)
    if args.json:
        write_json(args.json, {"model": args.model, "layers": [r.to_dict() for r in reports]})
    if args.csv:
        write_csv(args.csv, layercheck.table_headers(reports), rows)
    disagree = [r.name for r in reports if r.mismatches]
    print(f"{len(disagree)} of {len(reports)} pooling layer(s) differ from the spec"
          if disagree else "every pooling layer agrees with its spec", file=out)
    return EXIT_DISAGREE if disagree else EXIT_OK


def _command_check(args, out):
    if args.layers:
        return _command_check_layers(args, out)
    if args.json or args.csv:
        raise BadArgumentError("--json and --csv write the --layers report: give --layers too")
    model = read_model(args.model, args.bin)
    _require_openvino("ovpool check")
    bridged = _OpenVINORunner(model, args, ovpool_pooling=True)
    ovpool_opset = [layer for layer in model.layers if layer.version == bridge.OPSET]
    if ovpool_opset:
        # OpenVINO alone cannot read ovpool-opset layers: OpenVINO running ovpool's kernels is
        # the reference, and checks the rest of the graph against ovpool's runtime.
        print("openvino: skipped, it cannot read the ovpool-opset layer(s) " + _layer_list(
            ovpool_opset), file=out)
        reference_label, native, engines = "openvino+ovpool", bridged, []
    else:
        reference_label = "openvino"
        native = _OpenVINORunner(model, args, ovpool_pooling=False)
        engines = [("openvino+ovpool", bridged)]
    print(_implementation_line(bridged.compiled.implementation), file=out)
    arrays = _inputs(native, args)
    unsupported = [layer for layer in model.layers if lookup(layer) is None]
    if unsupported:
        print("ovpool runtime: skipped, it cannot run layer(s) " + _layer_list(unsupported),
              file=out)
    else:
        engines.insert(0, ("ovpool", compile_model(model)))
    if not engines:
        raise UnsupportedError("nothing to compare: OpenVINO with ovpool's pooling is the only "
                               "engine that runs this model")
    reference = native.infer(arrays)
    print(f"model: {args.model}", file=out)
    for info, array in zip(model.inputs, arrays):
        print(f"input: {info.name} {array.dtype} {list(array.shape)}", file=out)
    rows, agree = [], True
    for label, engine in engines:
        outputs = engine.infer(arrays)
        for name, theirs in reference.items():
            ours = outputs[name]
            largest, relative, bad = _compare(ours, theirs)
            agree = agree and bad == 0
            shape = "x".join(map(str, theirs.shape)) or "scalar"
            rows.append((name, shape, theirs.dtype, f"{label} vs {reference_label}",
                         "-" if largest is None else f"{largest:.3g}",
                         "-" if relative is None else f"{relative:.3g}",
                         f"{bad}/{theirs.size}", "ok" if bad == 0 else "DIFFERENT"))
    print(_table(("output", "shape", "dtype", "engines", "max abs", "max rel", "out of tol",
                  ""), rows), file=out)
    print("all engines agree" if agree else "the engines disagree (see docs/semantics.md for "
          "the corners where OpenVINO deviates from its spec)", file=out)
    return EXIT_OK if agree else EXIT_DISAGREE


# ---- info ----------------------------------------------------------------------------------

_HIDDEN = {"Const": ("offset", "size")}


def _attributes_text(layer, limit=70):
    hidden = _HIDDEN.get(layer.type, ())
    text = " ".join(f"{k}={v.replace(' ', '')}" for k, v in layer.attributes.items()
                    if k not in hidden)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _command_info(args, out):
    model = read_model(args.model, args.bin)
    print(f"model: {model.path} (IR version {model.ir_version}, name {model.name!r})", file=out)
    print(f"weights: {model.bin_path or '(none needed)'}", file=out)
    for title, infos in (("inputs", model.inputs), ("outputs", model.outputs)):
        print(f"{title}:", file=out)
        for info in infos:
            print(f"  {info.name}  {info.element_type or '?'}  {info.shape}", file=out)
    rows, cannot = [], []
    for layer in model.layers:
        if lookup(layer) is None:
            flag = "cannot run"
            cannot.append(f"layer {layer.id} ({layer.type} {layer.version}): {unsupported(layer)}")
        else:
            flag = ""
        rows.append((layer.id, layer.name, layer.type, layer.version,
                     " ".join(str(p.dims) for p in layer.inputs) or "-",
                     " ".join(str(p.dims) for p in layer.outputs) or "-",
                     _attributes_text(layer), flag))
    print("layers:", file=out)
    print(_table(("id", "name", "type", "opset", "inputs", "outputs", "attributes", ""), rows),
          file=out)
    print(f"openvino: {_extension_status()}", file=out)
    if cannot:
        print(f"ovpool cannot run {len(cannot)} layer(s):", file=out)
        for line in cannot:
            print(f"  {line}", file=out)
    else:
        try:
            compile_model(model)
            print("ovpool can run this model", file=out)
        except OvpoolError as error:
            print(f"ovpool cannot run this model: {error}", file=out)
    return EXIT_OK


def _extension_status():
    """What ``--engine openvino`` would run the pooling layers with, in one line."""
    if not bridge.available():
        return f"not installed ({bridge.INSTALL_HINT})"
    try:
        return f"pooling by ovpool's native extension library {bridge.extension_path()}"
    except UnsupportedError as error:
        return f"pooling by ovpool's Python bridge; native library unavailable: {error}"


# ---- build-extension -----------------------------------------------------------------------

def _command_build_extension(args, out):
    from .native import build

    path = build.build(build_dir=args.build_dir, jobs=args.jobs)
    print(f"built {path}", file=out)
    print(f"load it with core.add_extension({str(path)!r}); "
          "ovpool.openvino.add_extensions(core) now uses it", file=out)
    return EXIT_OK


def _command_explain(args, out):
    from . import explanation

    result = explanation.explain_from_arguments(args.model, args.layer, args.op, args.dialect,
                                                args.input_shape, args.attr)
    print(result.text(), file=out)
    if args.json:
        explanation.write_json(result, args.json)
        print(f"explanation written to {args.json}", file=out)
    if args.png:
        explanation.draw(result, args.png)
        print(f"picture written to {args.png}", file=out)
    return EXIT_OK


def main(argv=None):
    """Entry point of the ``ovpool`` command; returns the exit code."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    debug = getattr(args, "debug", False)
    command = {"run": _command_run, "info": _command_info, "check": _command_check,
               "explain": _command_explain,
               "build-extension": _command_build_extension}[args.command]
    try:
        if hasattr(args, "memory_limit"):
            set_memory_limit(args.memory_limit)
        code = command(args, sys.stdout)
        if sys.stdout is not None:
            sys.stdout.flush()     # a broken pipe shows here, not at exit
        return code
    except OvpoolError as error:
        if debug:
            traceback.print_exc()
        print(f"ovpool: error: {' '.join(str(error).split())}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader of stdout went away (e.g. `ovpool run ... | head -1`); any --output is
        # already written. Python would report the pipe again at exit: point stdout nowhere.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return EXIT_BROKEN_PIPE
    except Exception as error:  # noqa: BLE001 - the last line of defence reports, not crashes
        if debug:
            traceback.print_exc()
        print(f"ovpool: internal error: {type(error).__name__}: {' '.join(str(error).split())} "
              "(rerun with --debug for a traceback)", file=sys.stderr)
        return EXIT_INTERNAL
