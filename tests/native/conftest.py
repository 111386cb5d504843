"""Fixtures of the native OpenVINO extension's tests.

The library is built once per session with ovpool.native.build, in its kept CMake build
folder: after ``ovpool build-extension`` (the test command in README.md runs it) that build has
nothing left to compile, and after a change to the C++ sources it recompiles what changed. These tests fail (they never skip) when it cannot be built: CI installs openvino and
cmake for them.
"""

import os

import pytest


@pytest.fixture(scope="session")
def native_library():
    # Set by test_native_vs_numpy's baseline run, which reuses the library this session built.
    given = os.environ.get("OVPOOL_NATIVE_TEST_LIBRARY")
    if given:
        return given
    from ovpool.native import build

    return str(build.build(jobs=2))
