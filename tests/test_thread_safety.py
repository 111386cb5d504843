"""Thread safety: one CompiledModel called from many Python threads at once, the numpy API
from many threads with per-thread kernel thread counts, and the kernels releasing the GIL."""

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import ovpool
import ovpool.pooling as pooling_module

SAMPLES = os.path.join(os.path.dirname(__file__), "..", "samples", "models")
CALLS = 48


def _inputs(compiled, rng, batch):
    arrays = []
    for info in compiled.inputs:
        shape = [d.min if d.is_static else batch for d in info.shape]
        arrays.append(rng.standard_normal(shape).astype(info.dtype))
    return arrays


@pytest.mark.parametrize("name", ["pooling_chain", "resnet_stem", "pooling_chain_f16",
                                  "max_pool_14", "adaptive_max_pool_8"])
def test_one_compiled_model_from_many_threads(name):
    compiled = ovpool.compile_model(os.path.join(SAMPLES, f"{name}.xml"))
    rng = np.random.default_rng(7)
    dynamic = not all(t.shape.is_static for t in compiled.inputs)
    # Different batch sizes make dynamic models re-infer their shapes concurrently.
    cases = [_inputs(compiled, rng, 1 + i % 4 if dynamic else 1) for i in range(CALLS)]
    expected = [compiled(case) for case in cases]

    def run(index):
        threads = (1, 2, None)[index % 3]
        with ovpool.num_threads(threads):
            return index, compiled(cases[index])

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(run, list(range(CALLS)) * 2))
    assert len(results) == 2 * CALLS
    for index, got in results:
        want = expected[index]
        assert got.keys() == want.keys()
        for key in want:
            assert got[key].dtype == want[key].dtype
            np.testing.assert_array_equal(got[key], want[key], err_msg=f"{name} {key} #{index}")


def test_numpy_api_from_many_threads_with_forced_parallel_kernels(monkeypatch):
    monkeypatch.setattr(pooling_module, "_BYTES_PER_THREAD", 1)   # tiny inputs go parallel
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((2, 3, 9 + i % 5, 7 + i % 3)).astype(np.float32) for i in range(24)]
    calls = [
        lambda x: ovpool.avg_pool(x, 3, 2, 1, 1, exclude_pad=False),
        lambda x: ovpool.max_pool(x, 2, 1, rounding_type="ceil"),
        lambda x: ovpool.adaptive_avg_pool(x, (4, 3)),
        lambda x: ovpool.adaptive_max_pool(x, 2),
    ]
    with ovpool.num_threads(1):
        expected = [[call(x) for call in calls] for x in xs]

    def run(index):
        with ovpool.num_threads(1 + index % 4):
            assert ovpool.get_num_threads() == 1 + index % 4
            return index, [call(xs[index]) for call in calls]

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(run, list(range(len(xs))) * 3))
    for index, got in results:
        for a, b in zip(got, expected[index]):
            for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
                np.testing.assert_array_equal(x, y)


def _long_call(function, minimum_seconds=0.06):
    """An input big enough that ``function`` runs at least ``minimum_seconds`` on one thread."""
    size = 256
    while True:
        x = np.random.default_rng(0).standard_normal((1, 4, size, size)).astype(np.float32)
        start = time.perf_counter()
        with ovpool.num_threads(1):
            function(x)
        if time.perf_counter() - start >= minimum_seconds or size >= 4096:
            return x
        size *= 2


def _python_progress_during(call):
    """Run ``call()`` in a thread while this thread counts in pure Python; returns how many
    of this thread's timestamps fall in the middle 60% of the call, and the call's length."""
    span = {}
    done = threading.Event()

    def target():
        with ovpool.num_threads(1):
            span["start"] = time.perf_counter()
            call()
            span["end"] = time.perf_counter()
        done.set()

    stamps = []
    worker = threading.Thread(target=target)
    worker.start()
    counter = 0
    while not done.is_set():
        counter += 1
        if counter % 64 == 0:
            stamps.append(time.perf_counter())
    worker.join()
    start, end = span["start"], span["end"]
    # Skip the validation and planning prologue and the epilogue: the middle 60% of the call
    # is kernel time.
    low, high = start + 0.2 * (end - start), end - 0.2 * (end - start)
    return sum(low <= t <= high for t in stamps), end - start


def test_the_gil_probe_sees_a_call_that_holds_the_gil():
    """The method below is meaningful: a C call that keeps the GIL (a backtracking regular
    expression) leaves no Python progress in its middle."""
    import re
    pattern = re.compile(r"(a|aa)+b")
    text = "a" * 30
    start = time.perf_counter()
    pattern.match(text)
    assert time.perf_counter() - start > 0.01
    inside, _ = _python_progress_during(lambda: pattern.match(text))
    assert inside == 0


@pytest.mark.parametrize("op", ["avg_pool", "max_pool", "adaptive_avg_pool"])
def test_kernels_release_the_gil(op):
    """While a pooling call runs in one thread, a pure-Python loop in another keeps running.

    The loop records a timestamp every few iterations; the pooling thread records when its
    call started and ended. Were the GIL held for the kernel's duration, no timestamp could
    fall inside the call, past its short Python prologue; with the GIL released, thousands
    do. (Not a timing threshold: the middle of the call must simply not be empty.)"""
    function = {
        "avg_pool": lambda x: ovpool.avg_pool(x, 9, 1, 4, 4, dilations=3),
        "max_pool": lambda x: ovpool.max_pool(x, 9, 1, 4, 4, dilations=3),
        "adaptive_avg_pool": lambda x: ovpool.adaptive_avg_pool(x, (37, 29)),
    }[op]
    x = _long_call(function)
    inside, seconds = _python_progress_during(lambda: function(x))
    assert inside > 0, (f"no Python progress during {seconds:.3f} s of {op}: the kernel "
                        "holds the GIL")
    assert inside >= 10
