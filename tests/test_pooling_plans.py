"""The plan caches of ovpool.pooling: a refusal raised while a plan is built is computed once
(BadDtypeError is a TypeError, so a retry on TypeError would build the plan twice), and is
raised again on the next call (refusals are not cached)."""

import numpy as np
import pytest

import ovpool
from ovpool import _rules
from ovpool.errors import BadDtypeError, MemoryLimitError


def _counting_refusal(monkeypatch, name):
    # Empty plan caches: a plan another test left there would be served without calling the
    # refusing rule at all.
    from ovpool import pooling
    for cached in (pooling._window_plan, pooling._fixed_plan, pooling._adaptive_plan):
        cached.cache_clear()
    calls = []

    def refuse(*args):
        calls.append(args)
        raise BadDtypeError(f"{name} refused")

    monkeypatch.setattr(_rules, name, refuse)
    return calls


@pytest.mark.parametrize("call", [
    lambda x: ovpool.avg_pool(x, 2),
    lambda x: ovpool.max_pool(x, 2, return_indices=False),
    lambda x: ovpool.max_pool(x, (2, 1), strides=1, index_element_type="i32"),
])
def test_fixed_plan_refusal_computed_once(monkeypatch, call):
    calls = _counting_refusal(monkeypatch, "fixed_plan")
    x = np.zeros((1, 1, 7, 5), np.float32)
    with pytest.raises(BadDtypeError, match="fixed_plan refused"):
        call(x)
    assert len(calls) == 1
    with pytest.raises(BadDtypeError, match="fixed_plan refused"):
        call(x)
    assert len(calls) == 2


@pytest.mark.parametrize("call", [
    lambda x: ovpool.adaptive_avg_pool(x, 3),
    lambda x: ovpool.adaptive_max_pool(x, (3, 2)),
])
def test_adaptive_plan_refusal_computed_once(monkeypatch, call):
    calls = _counting_refusal(monkeypatch, "adaptive_plan")
    x = np.zeros((1, 1, 7, 5), np.float32)
    with pytest.raises(BadDtypeError, match="adaptive_plan refused"):
        call(x)
    assert len(calls) == 1


def test_output_allocation_checked_again_under_a_lowered_limit():
    # 1000 planes of 2 pooled to 1: the plan is small, the int64 indices need 8000 bytes.
    x = np.zeros((1000, 1, 2), np.uint8)
    before = ovpool.get_memory_limit()
    try:
        values, indices = ovpool.max_pool(x, 2)          # allocated under the default limit
        assert indices.nbytes == 8000
        ovpool.set_memory_limit(5000)
        assert ovpool.max_pool(x, 2, return_indices=False).shape == (1000, 1, 1)
        with pytest.raises(MemoryLimitError, match="out_indices of shape .* needs 8000 bytes"):
            ovpool.max_pool(x, 2)
        with pytest.raises(MemoryLimitError, match="out_indices"):
            ovpool.max_pool(x, 2)                        # refusals are not remembered
    finally:
        ovpool.set_memory_limit(before)
    assert ovpool.max_pool(x, 2)[1].shape == (1000, 1, 1)


def test_exclude_pad_pads_refused_after_the_same_windows_were_planned():
    from ovpool.errors import BadAttributeError

    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    # pads 2 reach the kernel 2: fine with exclude_pad=False (divisor 4 whenever pads exist)
    got = ovpool.avg_pool(x, 2, strides=2, pads_begin=2, pads_end=2, exclude_pad=False)
    assert got.shape == (1, 1, 4, 4) and got[0, 0, 0, 0] == 0.0 and got[0, 0, 1, 1] == 2.5
    for _ in range(2):   # refused every time, with exclude_pad=True
        with pytest.raises(BadAttributeError, match="not smaller than the dilated kernel 2"):
            ovpool.avg_pool(x, 2, strides=2, pads_begin=2, pads_end=2, exclude_pad=True)


def test_plan_divisors_come_in_every_float_form():
    # One axis of 6 with kernel 3, stride 2, pads 2 / 2, 5 outputs (the windows [-2, 0],
    # [0, 2], [2, 4], [4, 6], [6, 8]); excluding the pads they hold 1, 3, 3, 2 and 0 inputs:
    # the last lies in the end padding, an empty window.
    packed, in_plane, out_plane, count, real, floats, small = (
        _rules.fixed_plan([(6, 3, 2, 1, 2, 2, 5)], "exclude_pad", ovpool.get_memory_limit())[i]
        for i in (0, 1, 2, 3, 4, 6, 7))
    assert (in_plane, out_plane) == (6, 5)
    assert count.tolist() == [1, 3, 3, 2, 0]
    assert real.tolist() == [1.0, 3.0, 3.0, 2.0, np.inf]
    assert floats.dtype == np.float32 and floats.shape == (3, 5)
    real32, divisor32, inverse32 = floats
    assert real32.tolist() == [1.0, 3.0, 3.0, 2.0, np.inf]
    assert divisor32.tolist() == [1.0, 3.0, 3.0, 2.0, 1.0]      # 1 for the empty window ...
    third = np.float32(1) / np.float32(3)                         # (correctly rounded)
    assert inverse32.tobytes() == np.array([1.0, third, third, 0.5, 0.0], np.float32).tobytes()
    assert small is True                                          # ... whose average is 0


def test_plan_divisors_small_only_below_two_to_the_24():
    # Global windows of 2^24 - 1 and 2^24 inputs (the plan's divisors, not the input's).
    for length, small in ((2 ** 24 - 1, True), (2 ** 24, False)):
        plan = _rules.fixed_plan([(length, length, 1, 1, 0, 0, 1)], "exclude_pad", 1 << 40)
        assert plan[3].tolist() == [length] and plan[7] is small
        assert plan[6][0].tolist() == [float(np.float32(length))]


def test_memory_limit_counts_the_divisor_tables():
    # 100x100 planes, kernel 1: 10000 outputs, whose divisors in every form take 280000 bytes,
    # more than the plan's other parts (scratch 160000 bytes): refused for averages under a
    # 200000-byte limit, while max pooling, which has no divisors, plans the same windows.
    x = np.zeros((1, 1, 100, 100), np.float32)
    before = ovpool.get_memory_limit()
    try:
        ovpool.set_memory_limit(200_000)
        assert ovpool.max_pool(x, 1, return_indices=False).shape == (1, 1, 100, 100)
        with pytest.raises(MemoryLimitError, match="memory limit of 200000 bytes"):
            ovpool.avg_pool(x, 1)
        with pytest.raises(MemoryLimitError, match="memory limit of 200000 bytes"):
            ovpool.adaptive_avg_pool(x, (100, 100))
        ovpool.set_memory_limit(280_000)
        assert ovpool.avg_pool(x, 1).shape == (1, 1, 100, 100)
    finally:
        ovpool.set_memory_limit(before)
