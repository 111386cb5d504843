"""Thread count and memory limit settings (ovpool/config.py)."""

import numpy as np
import pytest

import ovpool
from ovpool.errors import BadArgumentError, MemoryLimitError


@pytest.fixture
def restore_settings():
    threads, limit = ovpool.get_num_threads(), ovpool.get_memory_limit()
    yield
    ovpool.set_num_threads(threads)
    ovpool.set_memory_limit(limit)


def test_default_threads_follow_omp_num_threads(monkeypatch):
    from ovpool import config

    monkeypatch.setenv("OMP_NUM_THREADS", "3,1")
    assert config._default_num_threads() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "junk")
    assert config._default_num_threads() >= 1


@pytest.mark.usefixtures("restore_settings")
def test_results_do_not_depend_on_thread_count():
    # Large enough for several threads (small inputs run on one thread on purpose).
    x = np.random.default_rng(1).standard_normal((4, 8, 64, 63)).astype(np.float32)
    results = []
    for threads in (1, 2, 7):
        ovpool.set_num_threads(threads)
        assert ovpool.get_num_threads() == threads
        results.append((ovpool.avg_pool(x, 3, 2, 1, 1), *ovpool.max_pool(x, 2, 1),
                        ovpool.adaptive_avg_pool(x, (4, 3))))
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_array_equal(a, b)


@pytest.mark.usefixtures("restore_settings")
@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "2"])
def test_bad_thread_counts(bad):
    with pytest.raises(BadArgumentError):
        ovpool.set_num_threads(bad)


@pytest.mark.usefixtures("restore_settings")
def test_memory_limit_refuses_before_allocating():
    ovpool.set_memory_limit(1000)
    x = np.zeros((1, 1, 40, 40), np.float32)
    with pytest.raises(MemoryLimitError, match="memory limit"):
        ovpool.avg_pool(x, 1)
    # 40 bytes of output and 640 of scratch fit.
    assert ovpool.avg_pool(x, (40, 4), 4).shape == (1, 1, 1, 10)


@pytest.mark.usefixtures("restore_settings")
def test_num_threads_context_is_per_thread():
    import threading

    ovpool.set_num_threads(3)
    seen = {}

    def worker():
        seen["other"] = ovpool.get_num_threads()

    with ovpool.num_threads(1):
        assert ovpool.get_num_threads() == 1
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
    assert seen["other"] == 3
    assert ovpool.get_num_threads() == 3
    with pytest.raises(BadArgumentError):
        with ovpool.num_threads(0):
            pass


def test_threads_follow_the_bytes_a_call_reads_and_writes():
    """core/threads.hpp's rule: one thread per BYTES_PER_WORKER bytes, at most the caller's
    count, at least one; the numpy API asks it with the call's input, output and index bytes."""
    from ovpool import pooling
    from ovpool._kernel_select import kernels

    per = kernels.BYTES_PER_WORKER
    assert per > 0
    assert kernels.workers_for_bytes(0, 8) == 1
    assert kernels.workers_for_bytes(per - 1, 8) == 1
    assert kernels.workers_for_bytes(2 * per, 8) == 2
    assert kernels.workers_for_bytes(100 * per, 3) == 3
    assert kernels.workers_for_bytes(100 * per, 1) == 1
    assert kernels.workers_for_bytes(5, 4, 1) == 4
    # The kernel calls' count: 8 planes of 64 x 64 pooled to 32 x 32.
    for itemsize, index_itemsize in ((1, 0), (4, 0), (4, 8), (8, 8)):
        nbytes = 8 * ((64 * 64 + 32 * 32) * itemsize + 32 * 32 * index_itemsize)
        for most in (1, 4):
            assert kernels.workers_for_call(itemsize, index_itemsize, 8, 64 * 64, 32 * 32, most,
                                            pooling._BYTES_PER_THREAD) == \
                kernels.workers_for_bytes(nbytes, most, pooling._BYTES_PER_THREAD)
    assert kernels.workers_for_call(8, 8, 8, 64 * 64, 32 * 32, 4, 1 << 17) == 3  # 384 KiB
    assert kernels.workers_for_call(1, 0, 8, 64 * 64, 32 * 32, 4, 1 << 17) == 1
