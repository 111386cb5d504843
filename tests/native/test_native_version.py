"""The library refuses, with a clear RuntimeError and no crash, an OpenVINO release other than
the one it was built for (here: a build told to expect another release)."""

import os
import shutil
import subprocess
import sys

import openvino.utils

from native_helpers import ROOT

CHECK = """
import sys, openvino as ov
core = ov.Core()
try:
    core.add_extension(sys.argv[1])
    print("loaded")
except RuntimeError as error:
    print("refused:", [l for l in str(error).splitlines() if l.strip()][-1])
# The Core still works without the extension.
model = core.read_model(sys.argv[2])
print("still works:", [op.get_type_info().version_id for op in model.get_ordered_ops()
                       if op.get_type_name() == "MaxPool"])
"""


def test_another_openvino_release_is_refused(tmp_path):
    cmake = shutil.which("cmake")
    assert cmake, "cmake is needed"
    build = tmp_path / "build"
    for command in ([cmake, "-S", os.path.join(ROOT, "ovpool", "native"), "-B", str(build),
                     f"-DOpenVINO_DIR={openvino.utils.get_cmake_path()}",
                     "-DOVPOOL_NATIVE_REQUIRE_OPENVINO=2000.1.0"],
                    [cmake, "--build", str(build), "--parallel", "2"]):
        result = subprocess.run(command, capture_output=True, text=True, timeout=900)
        assert result.returncode == 0, result.stdout + result.stderr
    library = build / "libovpool_extension.so"
    model = os.path.join(ROOT, "samples", "models", "max_pool_8.xml")
    result = subprocess.run([sys.executable, "-c", CHECK, str(library), model],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert ("ovpool's OpenVINO extension was built for OpenVINO 2000.1.0 but this "
            f"process runs OpenVINO {openvino.__version__}; rebuild it") in result.stdout, result.stdout
    assert result.stdout.startswith("refused: "), result.stdout
    assert "still works: ['opset8']" in result.stdout, result.stdout
