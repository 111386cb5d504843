"""ovpool.dask on a LocalCluster of two worker processes (and the threaded scheduler): the
results equal the numpy API and the in-memory runtime exactly, with uneven chunks."""

import os
import re
import warnings

import numpy as np
import pytest

import ovpool

import dask.array as da
import distributed

import ovpool.dask as ovdask

MODELS = os.path.join(os.path.dirname(__file__), "..", "samples", "models")


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    with distributed.Client(cluster) as connected:
        yield connected
    cluster.close()


def standard_normal(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def dynamic_copy(name, directory):
    text = open(os.path.join(MODELS, f"{name}.xml")).read()
    text = re.sub(r'shape="\d+,', 'shape="?,', text)
    text = re.sub(r"(<port[^>]*>\s*<dim>)\d+(</dim>)", r"\g<1>-1\2", text)
    (directory / f"{name}.xml").write_text(text)
    (directory / f"{name}.bin").write_bytes(open(os.path.join(MODELS, f"{name}.bin"), "rb").read())
    return str(directory / f"{name}.xml")


def test_model_on_the_cluster_equals_the_runtime(client):
    model = os.path.join(MODELS, "pooling_chain.xml")
    x = standard_normal((53, 3, 32, 32))
    result = ovdask.infer(model, da.from_array(x, chunks=((7, 13, 5, 28), 3, 32, 32)))
    assert sorted(result) == ["features", "mean"]
    assert result["features"].chunks == ((7, 13, 5, 28), (3,), (3,), (3,))
    computed = client.compute(result).result()
    expected = ovpool.compile_model(model)(x)
    for name, value in expected.items():
        assert computed[name].dtype == value.dtype
        np.testing.assert_array_equal(computed[name], value)


def test_model_compiled_once_per_worker_process(client, tmp_path):
    model = dynamic_copy("avg_pool_16", tmp_path)     # a model no worker has seen yet
    x = standard_normal((60, 3, 9, 10), seed=1)
    before = client.run(ovdask.worker_compilations)
    result = ovdask.infer(ovpool.read_model(model), da.from_array(x, chunks=(5, 3, 9, 10)))
    np.testing.assert_array_equal(client.compute(result).result(),
                                  ovpool.compile_model(model)(x)["pooled"])
    after = client.run(ovdask.worker_compilations)
    added = [after[w] - before[w] for w in after]
    # 12 blocks ran; each worker compiled the model at most once (both may have run some).
    assert len(result.chunks[0]) == 12 and all(n in (0, 1) for n in added) and sum(added) >= 1


def test_max_pool_indices_over_the_batch_across_blocks(client, tmp_path):
    model = dynamic_copy("max_pool_8", tmp_path)
    x = standard_normal((11, 2, 4, 6, 6), seed=2)
    result = ovdask.infer(model, da.from_array(x, chunks=((3, 1, 7), 2, 4, 6, 6)))
    computed = client.compute(result).result()
    expected = ovpool.compile_model(model)(x)
    for name in ("pooled", "indices"):
        np.testing.assert_array_equal(computed[name], expected[name])


def test_fixed_batch_model_is_rechunked_to_its_batch(client):
    x = standard_normal((7, 2, 4, 6, 6), seed=3)
    result = ovdask.infer(os.path.join(MODELS, "max_pool_8.xml"), da.from_array(x, chunks=(4, 2, 4, 6, 6)))
    assert result["pooled"].chunks[0] == (2, 2, 2, 1)
    values, indices = ovpool.max_pool(x, kernel=(2, 2, 2), strides=(1, 2, 2),
                                      dilations=(1, 2, 1), pads_begin=(0, 1, 0),
                                      pads_end=(0, 1, 1), axis=0)
    computed = client.compute(result).result()
    np.testing.assert_array_equal(computed["pooled"], values)
    np.testing.assert_array_equal(computed["indices"], indices)


def test_threaded_scheduler_and_inner_axes_rechunked_with_a_warning():
    model = os.path.join(MODELS, "pooling_chain.xml")
    x = standard_normal((21, 3, 32, 32), seed=4)
    with pytest.warns(ovdask.RechunkWarning, match="axes \\[2\\]"):
        result = ovdask.infer(model, da.from_array(x, chunks=(4, 3, 16, 32)))
    computed = result["mean"].compute(scheduler="threads")
    np.testing.assert_array_equal(computed, ovpool.compile_model(model)(x)["mean"])


X = standard_normal((9, 10, 11, 12), seed=5)
CHUNKS = ((4, 5), (3, 7), (6, 5), 12)       # uneven N and C, the spatial axis 2 split


def _pooled(function, *args, **kwargs):
    with pytest.warns(ovdask.RechunkWarning):
        return function(da.from_array(X, chunks=CHUNKS), *args, **kwargs)


@pytest.mark.parametrize("kwargs", [dict(kernel=3, strides=2, pads_begin=1, pads_end=0),
                                    dict(kernel=(2, 3), exclude_pad=False, pads_begin=1,
                                         pads_end=1, rounding_type="ceil")])
def test_avg_pool(client, kwargs):
    computed = client.compute(_pooled(ovdask.avg_pool, **kwargs)).result()
    np.testing.assert_array_equal(computed, ovpool.avg_pool(X, **kwargs))


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("index_type", ["i32", "i64"])
def test_max_pool(client, axis, index_type):
    values, indices = _pooled(ovdask.max_pool, 3, 2, 1, 1, axis=axis,
                              index_element_type=index_type)
    expected_values, expected_indices = ovpool.max_pool(X, 3, 2, 1, 1, axis=axis,
                                                        index_element_type=index_type)
    computed_values, computed_indices = client.compute([values, indices], sync=True)
    np.testing.assert_array_equal(computed_values, expected_values)
    assert computed_indices.dtype == expected_indices.dtype
    np.testing.assert_array_equal(computed_indices, expected_indices)


def test_max_pool_values_only(client):
    computed = client.compute(_pooled(ovdask.max_pool, 2, return_indices=False)).result()
    np.testing.assert_array_equal(computed, ovpool.max_pool(X, 2, return_indices=False))


def test_adaptive_avg_pool(client):
    computed = client.compute(_pooled(ovdask.adaptive_avg_pool, (3, 4))).result()
    np.testing.assert_array_equal(computed, ovpool.adaptive_avg_pool(X, (3, 4)))


@pytest.mark.parametrize("index_type", ["i32", "i64"])
def test_adaptive_max_pool(client, index_type):
    values, indices = _pooled(ovdask.adaptive_max_pool, (4, 5), index_element_type=index_type)
    expected_values, expected_indices = ovpool.adaptive_max_pool(
        X, (4, 5), index_element_type=index_type)
    computed_values, computed_indices = client.compute([values, indices], sync=True)
    np.testing.assert_array_equal(computed_values, expected_values)
    assert computed_indices.dtype == expected_indices.dtype
    np.testing.assert_array_equal(computed_indices, expected_indices)


def test_errors_are_raised_when_the_graph_is_built():
    x = da.from_array(X, chunks=(4, 5, 11, 12))
    with pytest.raises(ovpool.errors.BadAttributeError, match="kernel"):
        ovdask.avg_pool(x, 0)
    with pytest.raises(ovpool.errors.BadDtypeError):
        ovdask.max_pool(x.astype(np.uint16), 2)
    with pytest.raises(ovpool.errors.BadShapeError):
        ovdask.adaptive_avg_pool(x[:, :, 0, 0], 2)
    with pytest.raises(ovpool.errors.BadDtypeError, match="float64"):
        ovdask.infer(os.path.join(MODELS, "pooling_chain.xml"),
                     da.zeros((4, 3, 32, 32), chunks=2))
    with pytest.raises(ovpool.errors.BadShapeError):
        ovdask.infer(os.path.join(MODELS, "pooling_chain.xml"),
                     da.zeros((4, 3, 31, 32), dtype=np.float32, chunks=2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # nothing to rechunk: no warning
        ovdask.adaptive_avg_pool(x, 2)
