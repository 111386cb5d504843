"""A short tour of ovpool's Python API: run it with `python samples/python_api.py`."""

import numpy as np

import ovpool

rng = np.random.default_rng(0)
x = rng.standard_normal((1, 3, 8, 8), dtype=np.float32)

# ResNet-style max pool: 3x3 window, stride 2, one pixel of padding, with OpenVINO indices.
values, indices = ovpool.max_pool(x, kernel=3, strides=2, pads_begin=1, pads_end=1)
print("max_pool    ", values.shape, "indices", indices.dtype, indices[0, 0, 0])

# Average pooling that keeps the spatial size (same_upper), not counting the padding.
smooth = ovpool.avg_pool(x, kernel=3, auto_pad="same_upper", exclude_pad=True)
print("avg_pool    ", smooth.shape)

# Adaptive pooling to a fixed output size, whatever the input size.
pooled = ovpool.adaptive_avg_pool(x, output_size=(3, 3))
print("adaptive_avg", pooled.shape, pooled[0, 0].astype(float).round(3).tolist())

# The output shape rules alone, without running anything.
print("output shape", ovpool.pool_output_shape((1, 3, 224, 224), kernel=3, strides=2,
                                               pads_begin=1, pads_end=1, rounding_type="ceil"))

# Writing into a preallocated output, e.g. in a loop.
out = np.empty((1, 3, 4, 4), np.float32)
ovpool.avg_pool(x, kernel=2, strides=2, out=out)
print("into out=   ", out.shape, np.allclose(out, x.reshape(1, 3, 4, 2, 4, 2).mean(axis=(3, 5))))

# Bad attributes raise ovpool.errors.OvpoolError subclasses that name the attribute.
try:
    ovpool.max_pool(x, kernel=3, strides=0)
except ovpool.errors.BadAttributeError as error:
    print("error       ", error)
