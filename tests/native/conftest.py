"""Fixtures of the native OpenVINO extension's tests.

The library is built once per session with ovpool.native.build into a temporary build
directory. These tests fail (they never skip) when it cannot be built: CI installs openvino and
cmake for them.
"""

import os

import pytest


@pytest.fixture(scope="session")
def native_library(tmp_path_factory):
    # Set by test_native_vs_numpy's baseline run, which reuses the library this session built.
    given = os.environ.get("OVPOOL_NATIVE_TEST_LIBRARY")
    if given:
        return given
    from ovpool.native import build

    return str(build.build(build_dir=tmp_path_factory.mktemp("native-build"), jobs=2))
