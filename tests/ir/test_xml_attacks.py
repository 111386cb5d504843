"""Hostile IR files: XML attacks, files outside the model, and resource exhaustion.

Complements the security tests in test_reader.py (billion laughs, a file external entity, a
DOCTYPE in UTF-16). Each attack must be refused with a ``ModelError`` (or neutralised: the
model reads as if the construct were not there) quickly, and nothing outside the model's
.xml and .bin may be opened: checked with inotify (which sees opens from C code such as
libxml2's too) where the platform has it, and with a Python audit hook everywhere.
"""

import contextlib
import ctypes
import ctypes.util
import os
import socket
import struct
import sys
import time

import numpy as np
import pytest

import ovpool
from ovpool.errors import ModelError, OvpoolError, UnsupportedError
from ovpool.ir import read_model

from helpers import GOOD, WEIGHTS, edit, write

BODY = GOOD.split("\n", 1)[1]          # GOOD without its XML declaration


# ---- watching which files get opened -----------------------------------------------------

_IN_OPEN = 0x20
_IN_NONBLOCK = os.O_NONBLOCK


class _Inotify:
    """Names of the files opened in one directory while watching (Linux inotify)."""

    def __init__(self, directory):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        self.fd = libc.inotify_init1(_IN_NONBLOCK)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        if libc.inotify_add_watch(self.fd, os.fsencode(directory), _IN_OPEN) < 0:
            os.close(self.fd)
            raise OSError(ctypes.get_errno(), "inotify_add_watch")

    def opened(self):
        names, data = [], b""
        while True:
            try:
                data += os.read(self.fd, 1 << 16)
            except BlockingIOError:
                break
        while data:
            _, _, _, length = struct.unpack_from("iIII", data)
            raw = data[16:16 + length].split(b"\0", 1)[0]
            names.append(raw.decode())
            data = data[16 + length:]
        return names

    def close(self):
        os.close(self.fd)


_AUDITED = []
_AUDITING = [False]


def _audit(event, args):
    if _AUDITING[0] and event == "open" and args and isinstance(args[0], (str, bytes, int)):
        _AUDITED.append(os.fsdecode(args[0]) if not isinstance(args[0], int) else args[0])


sys.addaudithook(_audit)


@contextlib.contextmanager
def files_opened(directory):
    """Collects the names of files opened in ``directory`` (inotify: any code; the audit
    hook: Python code) into the yielded list."""
    names = []
    try:
        watch = _Inotify(str(directory))
    except (OSError, AttributeError):
        watch = None
    _AUDITED.clear()
    _AUDITING[0] = True
    try:
        yield names
    finally:
        _AUDITING[0] = False
        if watch is not None:
            names.extend(watch.opened())
            watch.close()
        prefix = os.path.join(str(directory), "")
        names.extend(os.path.basename(p) for p in _AUDITED
                     if isinstance(p, str) and p.startswith(prefix))


def refused_quickly(path, seconds=2.0, kind=ModelError):
    start = time.perf_counter()
    with pytest.raises(kind) as info:
        ovpool.compile_model(read_model(path))
    assert time.perf_counter() - start < seconds
    return str(info.value)


@pytest.fixture
def secrets(tmp_path):
    """A secret file and a would-be DTD beside the model."""
    (tmp_path / "secret.txt").write_text("TOP-SECRET-CONTENT")
    (tmp_path / "evil.dtd").write_text('<!ENTITY leak "TOP-SECRET-CONTENT">')
    return tmp_path


def test_the_open_watch_sees_python_and_c_opens(tmp_path):
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.xml").write_text("<x/>")
    from lxml import etree
    with files_opened(tmp_path) as names:
        open(tmp_path / "a.txt").close()
        etree.parse(str(tmp_path / "b.xml"))      # libxml2 opens this one in C
    assert "a.txt" in names
    if sys.platform.startswith("linux"):
        assert "b.xml" in names


def test_a_good_model_opens_only_its_xml_and_bin(secrets):
    path = write(secrets, GOOD)
    with files_opened(secrets) as names:
        ovpool.compile_model(read_model(path))(np.zeros((1, 2, 4, 4), np.float32))
    assert set(names) <= {"model.xml", "model.bin"} and "model.xml" in names


# ---- DTDs and entities -------------------------------------------------------------------

ATTACKS = {
    "quadratic blow-up": '<!DOCTYPE net [<!ENTITY big "' + "x" * 100_000 + '">]>',
    "external file entity (relative)": '<!DOCTYPE net [<!ENTITY leak SYSTEM "secret.txt">]>',
    "external file entity (absolute)": '<!DOCTYPE net [<!ENTITY leak SYSTEM "file://{dir}/secret.txt">]>',
    "external DTD (file)": '<!DOCTYPE net SYSTEM "evil.dtd">',
    "external DTD (public id)": '<!DOCTYPE net PUBLIC "-//X//Y" "evil.dtd">',
    "parameter entity": '<!DOCTYPE net [<!ENTITY % p SYSTEM "evil.dtd"> %p;]>',
    "network entity": '<!DOCTYPE net [<!ENTITY leak SYSTEM "http://127.0.0.1:{port}/x">]>',
    "network DTD": '<!DOCTYPE net SYSTEM "http://127.0.0.1:{port}/net.dtd">',
    "empty DOCTYPE": "<!DOCTYPE net>",
    "attribute defaults from the DTD": '<!DOCTYPE net [<!ATTLIST layer version CDATA "opset1">]>',
}
REFERENCE = {"quadratic blow-up": "&big;" * 10_000}


@pytest.fixture
def listener():
    """A local TCP port that records whether anything connected to it."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


def _connected(server):
    try:
        connection, _ = server.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True


@pytest.mark.parametrize("attack", sorted(ATTACKS))
@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_doctype_attacks_are_refused_and_open_nothing(secrets, listener, attack, encoding):
    port = listener.getsockname()[1]
    doctype = ATTACKS[attack].format(dir=secrets, port=port)
    reference = REFERENCE.get(attack, "&leak;" if "leak" in doctype else "")
    body = BODY.replace('name="x" type="Parameter"', f'name="{reference}" type="Parameter"')
    text = f'<?xml version="1.0" encoding="{encoding}"?>\n{doctype}\n{body}'
    path = write(secrets, text.encode(encoding))
    with files_opened(secrets) as names:
        message = refused_quickly(path)
    # (UTF-16/32 hide the DOCTYPE from the byte scan: libxml2 may then refuse the entity
    # reference itself, before the parsed tree's DOCTYPE check)
    assert "DOCTYPE" in message or (encoding != "utf-8" and "not well-formed" in message)
    assert "TOP-SECRET" not in message
    assert set(names) <= {"model.xml"}, names
    assert not _connected(listener), "the reader connected to the network"


@pytest.mark.parametrize("href", ["secret.txt", "file://{dir}/secret.txt",
                                  "http://127.0.0.1:{port}/x", "model.bin"])
@pytest.mark.parametrize("where", ["<layers>", "<data "])
def test_xinclude_is_not_processed(secrets, listener, href, where):
    href = href.format(dir=secrets, port=listener.getsockname()[1])
    include = (f'<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="{href}" '
               'parse="text"/>')
    xml = GOOD.replace(where, include + where if where == "<data " else where + include, 1)
    path = write(secrets, xml)
    with files_opened(secrets) as names:
        try:
            model = read_model(path)
        except OvpoolError as error:
            assert "TOP-SECRET" not in str(error)
        else:
            # Neutralised: the include is an unknown element, nothing was pulled in.
            assert [layer.name for layer in model.layers] == ["x", "pool", "pooled/sink",
                                                              "weights", "w/sink"]
            assert all("TOP-SECRET" not in str(v) for layer in model.layers
                       for v in layer.attributes.values())
    assert set(names) <= {"model.xml", "model.bin"}, names
    assert not _connected(listener)


def test_stylesheet_processing_instruction_is_ignored(secrets):
    xml = GOOD.replace('<?xml version="1.0"?>',
                       '<?xml version="1.0"?>\n<?xml-stylesheet href="secret.txt"?>')
    path = write(secrets, xml)
    with files_opened(secrets) as names:
        read_model(path)
    assert set(names) <= {"model.xml", "model.bin"}


@pytest.mark.parametrize("reference", ["&undefined;", "&#0;", "&#xD800;", "&#x110000;"])
def test_undefined_entities_and_bad_character_references(tmp_path, reference):
    xml = GOOD.replace('name="x" type="Parameter"', f'name="a{reference}" type="Parameter"')
    message = refused_quickly(write(tmp_path, xml))
    assert "not well-formed" in message


def test_cdata_and_comments_cannot_smuggle_layers(tmp_path):
    xml = GOOD.replace("<layers>", '<layers><![CDATA[<layer id="9"/>]]><!-- <layer id="8"/> -->')
    model = read_model(write(tmp_path, xml))
    assert [layer.id for layer in model.layers] == ["0", "1", "2", "3", "4"]


# ---- resource exhaustion -----------------------------------------------------------------

@pytest.mark.parametrize("depth", [300, 100_000])
def test_deep_nesting_is_refused_quickly(tmp_path, depth):
    nested = "<rt_info>" * depth + "</rt_info>" * depth
    message = refused_quickly(write(tmp_path, edit("</layers>", "</layers>" + nested)))
    assert "not well-formed" in message or "depth" in message.lower()


def test_nesting_the_parser_accepts_is_read_without_recursion_errors(tmp_path):
    nested = '<attribute name="a" value="b">' * 200 + "</attribute>" * 200
    model = read_model(write(tmp_path, edit("</edges>", f"</edges><rt_info>{nested}</rt_info>")))
    assert len(model.rt_info) == 200


def test_huge_attribute_value_is_refused(tmp_path):
    xml = GOOD.replace('name="x" type="Parameter"', f'name="{"x" * 20_000_000}" type="Parameter"')
    message = refused_quickly(write(tmp_path, xml), seconds=5)
    assert "not well-formed" in message


def test_many_attributes_are_refused_in_linear_time(tmp_path):
    many = " ".join(f'a{i}="{i}"' for i in range(200_000))
    message = refused_quickly(write(tmp_path, edit('<data kernel="2, 2"', f'<data {many} kernel="2, 2"')),
                              seconds=5)
    assert "200006 attributes" in message and "name='pool'" in message


def test_a_long_attribute_list_is_read_in_linear_time(tmp_path):
    long_list = ", ".join(["2"] * 300_000)
    start = time.perf_counter()
    message = refused_quickly(write(tmp_path, edit('kernel="2, 2"', f'kernel="{long_list}"')),
                              kind=OvpoolError, seconds=10)
    assert "kernel" in message and len(message) < 2000
    assert time.perf_counter() - start < 10


@pytest.mark.parametrize("value", ["9" * 5000, "99999999999999999999", "9223372036854775808",
                                   "-9223372036854775809"])
@pytest.mark.parametrize("where", ["strides", "dim", "port", "edge", "offset"])
def test_integers_beyond_int64_are_refused(tmp_path, value, where):
    if where == "strides":
        xml = edit('strides="2, 2"', f'strides="2, {value}"')
    elif where == "dim":
        xml = edit("<dim>4</dim></port></output>", f"<dim>{value.lstrip('-')}</dim></port></output>")
    elif where == "port":
        xml = edit('<port id="1" precision="FP32" names="pooled">',
                   f'<port id="{value}" precision="FP32" names="pooled">')
    elif where == "edge":
        xml = edit('from-layer="1" from-port="1"', f'from-layer="1" from-port="{value.lstrip("-")}"')
    else:
        xml = edit('offset="0" size="12"', f'offset="{value}" size="12"')
    message = refused_quickly(write(tmp_path, xml), kind=OvpoolError)
    assert len(message) < 2000


def test_unicode_digits_are_not_numbers(tmp_path):
    for xml in (edit('version="11"', 'version="²"'), edit('version="11"', 'version="١١"'),
                edit('strides="2, 2"', 'strides="٢, 2"'), edit("<dim>4</dim></port></output>",
                                                              "<dim>٤</dim></port></output>")):
        refused_quickly(write(tmp_path, xml), kind=OvpoolError)


def test_rank_beyond_numpy_is_refused(tmp_path):
    xml = edit('shape="?,2,4,4"', 'shape="' + ",".join(["1"] * 65) + '"')
    message = refused_quickly(write(tmp_path, xml), kind=UnsupportedError)
    assert "rank 65" in message
    xml = edit("<dim>4</dim></port></output>", "<dim>4</dim>" + "<dim>1</dim>" * 70
               + "</port></output>")
    message = refused_quickly(write(tmp_path, xml), kind=UnsupportedError)
    assert "rank 74" in message


def _chain_ir(layers):
    """Parameter -> ``layers`` Abs layers -> Result."""
    dims = "<dim>1</dim><dim>2</dim>"
    parts = ['<?xml version="1.0"?>\n<net name="long" version="11"><layers>\n'
             '<layer id="0" name="x" type="Parameter" version="opset1">'
             '<data shape="1,2" element_type="f32"/>'
             f'<output><port id="0" precision="FP32" names="x">{dims}</port></output></layer>\n']
    parts += [f'<layer id="{i}" name="l{i}" type="Abs" version="opset1"><input><port id="0">'
              f'{dims}</port></input><output><port id="1">{dims}</port></output></layer>\n'
              for i in range(1, layers + 1)]
    parts.append(f'<layer id="{layers + 1}" name="out" type="Result" version="opset1"><input>'
                 f'<port id="0">{dims}</port></input></layer>\n</layers><edges>\n'
                 '<edge from-layer="0" from-port="0" to-layer="1" to-port="0"/>\n')
    parts += [f'<edge from-layer="{i}" from-port="1" to-layer="{i + 1}" to-port="0"/>\n'
              for i in range(1, layers + 1)]
    parts.append("</edges></net>\n")
    return "".join(parts)


def _time_read_compile_run(tmp_path, layers):
    path = write(tmp_path, _chain_ir(layers), weights=None, name=f"chain{layers}")
    # CPU time of the process, not wall time: other work on a shared machine slows the wall
    # clock of one run and not the other, which a ratio of wall times would read as growth.
    start = time.process_time()
    compiled = ovpool.compile_model(read_model(path))
    out = compiled(np.array([[-1.0, 2.0]], np.float32))
    assert out["out"].tolist() == [[1.0, 2.0]]
    return time.process_time() - start


def test_many_layers_take_linear_time(request, tmp_path):
    """Reading, compiling and running a chain of layers takes time linear in its length
    (a quadratic step would make 8x the layers take 64x the time). ``--long``: 200k layers."""
    small, big = (25_000, 200_000) if request.config.getoption("--long") else (1_000, 8_000)
    t_small = min(_time_read_compile_run(tmp_path, small) for _ in range(2))
    t_big = _time_read_compile_run(tmp_path, big)
    ratio = t_big / t_small
    print(f"\n{small} layers: {t_small:.2f} s, {big} layers: {t_big:.2f} s (x{ratio:.1f})")
    assert ratio < 3 * big / small, f"{t_small:.3f} s -> {t_big:.3f} s"
