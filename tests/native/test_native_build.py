"""ovpool.native.build: clear errors without cmake or openvino, build.json, library_path."""

import builtins
import json

import pytest

from ovpool.errors import OvpoolError, UnsupportedError
from ovpool.native import build


def test_missing_cmake_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(build.shutil, "which", lambda name: None)
    monkeypatch.setattr(build.sys, "executable", str(tmp_path / "python"))   # no cmake beside it
    with pytest.raises(UnsupportedError, match="needs cmake"):
        build.build()


def test_missing_openvino_is_a_clear_error(monkeypatch):
    real_import = builtins.__import__

    def no_openvino(name, *args, **kwargs):
        if name == "openvino" or name.startswith("openvino."):
            raise ImportError("No module named 'openvino'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_openvino)
    with pytest.raises(UnsupportedError, match="needs the openvino package") as error:
        build.build()
    assert isinstance(error.value, OvpoolError)


def test_build_json_and_library_path(native_library):
    import openvino

    info = json.loads((build.LIB_DIR / "build.json").read_text())
    assert info["openvino"] == openvino.__version__
    assert info["library"] == build.LIBRARY_NAME
    path = build.library_path()
    assert path is not None and path.name == build.LIBRARY_NAME and path.is_file()


def test_library_path_is_none_for_another_openvino(native_library, monkeypatch, tmp_path):
    (tmp_path / build.LIBRARY_NAME).write_bytes(b"")
    (tmp_path / "build.json").write_text(json.dumps({"openvino": "2000.1.0-1-abc"}))
    monkeypatch.setattr(build, "LIB_DIR", tmp_path)
    assert build.library_path() is None
    (tmp_path / build.LIBRARY_NAME).unlink()
    assert build.library_path() is None


def test_extension_path_says_why_the_library_is_unavailable(monkeypatch, tmp_path):
    import ovpool.openvino as bridge

    monkeypatch.setattr(build, "LIB_DIR", tmp_path)
    with pytest.raises(UnsupportedError, match="not built; build it with: ovpool build-extension"):
        bridge.extension_path()
    (tmp_path / build.LIBRARY_NAME).write_bytes(b"")
    (tmp_path / "build.json").write_text(json.dumps({"openvino": "2000.1.0-1-abc"}))
    with pytest.raises(UnsupportedError, match=r"built for OpenVINO '2000\.1\.0-1-abc', this "
                                               r"process runs '20\d\d\."):
        bridge.extension_path()
    # add_extensions then falls back to the Python ops, and says so.
    import openvino as ov

    assert bridge.add_extensions(ov.Core()).implementation == "python"
