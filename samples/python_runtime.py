"""Run an OpenVINO IR model with ovpool's runtime: `python samples/python_runtime.py`.

No OpenVINO needed: ovpool reads the .xml/.bin itself and runs the pooling layers (and the
ops around them) with its own kernels.
"""

import os

import numpy as np

import ovpool

HERE = os.path.dirname(os.path.abspath(__file__))

# Read the model: inputs and outputs carry names, element types and (partial) shapes.
model = ovpool.read_model(os.path.join(HERE, "models", "pooling_chain.xml"))
print("inputs: ", [str(t) for t in model.inputs])
print("outputs:", [str(t) for t in model.outputs])
print("layers: ", [f"{layer.type}-{layer.version}" for layer in model.layers])

# Compile once (shapes inferred and checked, constants folded), then run many times.
compiled = ovpool.compile_model(model)
x = np.load(os.path.join(HERE, "inputs", "pooling_chain.npy"))
outputs = compiled(x)                       # one array, a list, or {"input": x}
for name, array in outputs.items():
    print(f"{name}: {array.dtype} {array.shape}")

# The batch dimension is dynamic: another batch size just works.
print("batch 5:", compiled(np.zeros((5, 3, 32, 32), np.float32))["features"].shape)

# Same answer as OpenVINO's CPU plugin (saved by samples/make_samples.py).
expected = np.load(os.path.join(HERE, "expected", "pooling_chain.npz"))
print("matches OpenVINO:", all(np.allclose(outputs[k], expected[k], rtol=1e-5, atol=1e-6)
                               for k in expected.files))

# Bad inputs raise ovpool.errors.OvpoolError subclasses with a clear message.
try:
    compiled(x.astype(np.float64))
except ovpool.errors.OvpoolError as error:
    print("error:", error)
