"""The library refuses, with a clear RuntimeError and no crash, to load into a process that runs
an OpenVINO release other than the one it was built for.

The other release is simulated rather than installed: a tiny shared library that defines
ov::get_openvino_version() to report release 2000.1.0 is loaded with RTLD_GLOBAL after the
openvino Python package has imported (whose own version check then has passed), so the
extension library, opened later by core.add_extension, binds that symbol to it. Building a
second copy of the extension for another release would cost minutes of compiling."""

import os
import shutil
import subprocess
import sys

import openvino
import openvino.utils

from native_helpers import ROOT

FAKE_BUILD = "2000.1.0-1-0000000-releases/2000/1"

FAKE_VERSION_SOURCE = """
#include "openvino/core/version.hpp"

namespace ov {
const Version get_openvino_version() noexcept { return Version{"%s", "another release"}; }
}  // namespace ov
""" % FAKE_BUILD

CHECK = """
import ctypes, sys, openvino as ov
ctypes.CDLL(sys.argv[3], mode=ctypes.RTLD_GLOBAL)
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


def _fake_version_library(tmp_path):
    compiler = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    assert compiler, "a C++ compiler is needed (g++ or c++, or set CXX)"
    include = os.path.join(os.path.dirname(openvino.utils.get_cmake_path()), "include")
    source = tmp_path / "fake_version.cpp"
    source.write_text(FAKE_VERSION_SOURCE)
    library = tmp_path / "libfake_openvino_version.so"
    result = subprocess.run([compiler, "-std=c++17", "-shared", "-fPIC", "-I", include,
                             str(source), "-o", str(library)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return library


def test_another_openvino_release_is_refused(native_library, tmp_path):
    fake = _fake_version_library(tmp_path)
    model = os.path.join(ROOT, "samples", "models", "max_pool_8.xml")
    result = subprocess.run([sys.executable, "-c", CHECK, native_library, model, str(fake)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    built_for = openvino.__version__.split("-")[0]
    assert (f"ovpool's OpenVINO extension was built for OpenVINO {built_for} but this process "
            f"runs OpenVINO {FAKE_BUILD}; rebuild it") in result.stdout, result.stdout
    assert result.stdout.startswith("refused: "), result.stdout
    assert "still works: ['opset8']" in result.stdout, result.stdout


def test_the_same_release_loads(native_library, tmp_path):
    """The control: the same script, without the other release, loads the extension."""
    model = os.path.join(ROOT, "samples", "models", "max_pool_8.xml")
    check = CHECK.replace("ctypes.CDLL(sys.argv[3], mode=ctypes.RTLD_GLOBAL)\n", "")
    result = subprocess.run([sys.executable, "-c", check, native_library, model],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("loaded"), result.stdout
    assert "still works: ['ovpool']" in result.stdout, result.stdout
