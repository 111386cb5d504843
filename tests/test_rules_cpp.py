"""The pooling rules of ovpool/core/rules.hpp work without Python: a plain C++17 program (no
Python.h) resolves hand-worked cases and gets the same refusal words as the Python API."""

import os
import shutil
import subprocess

import numpy as np
import pytest

import ovpool
from ovpool.errors import BadAttributeError

CORE = os.path.join(os.path.dirname(ovpool.__file__), "core")

PROGRAM = r"""
#include "rules.hpp"
#include <cstdio>

using namespace ovpool::core;

static void print_axes(const std::vector<AxisWindow>& axes) {
    for (const AxisWindow& w : axes)
        std::printf("axis %lld %lld %lld %lld\n", (long long)w.output, (long long)w.pad_begin,
                    (long long)w.pad_end, (long long)((w.kernel - 1) * w.dilation + 1));
}

int main() {
    // 7x8, kernel 3, stride 2, pads 1/1, ceil: outputs 4 and 5.
    PoolAttributes a;
    a.kernel = {3, 3}; a.strides = {2, 2}; a.pads_begin = {1, 1}; a.pads_end = {1, 1};
    a.dilations = {1, 1}; a.rounding = parse_rounding("CEIL"); a.auto_pad = parse_auto_pad("notset");
    print_axes(resolve_pool_axes({7, 8}, a));
    // same_lower on length 6, kernel 2 dilation 2 (spans 3) stride 2: output 3, total pad
    // 2*2 + 3 - 6 = 1, the larger half first: pads 1/0.
    PoolAttributes s;
    s.kernel = {2}; s.strides = {2}; s.pads_begin = {0}; s.pads_end = {0}; s.dilations = {2};
    s.rounding = Rounding::floor; s.auto_pad = parse_auto_pad("same_lower");
    print_axes(resolve_pool_axes({6}, s));
    // ceil_torch drops a last window starting in the right padding: length 4, kernel 2,
    // stride 2, pads 0/1 -> 2 (ceil alone gives 3).
    PoolAttributes t = s;
    t.dilations = {1}; t.pads_end = {1}; t.auto_pad = AutoPad::explicit_pads;
    t.rounding = Rounding::ceil_torch;
    print_axes(resolve_pool_axes({4}, t));
    // ONNX ceil_mode on the same window.
    OnnxAttributes o;
    o.op = "MaxPool-12"; o.kernel_shape = {2}; o.strides = {2}; o.dilations = {1};
    o.pads = {0, 1}; o.ceil_mode = true;
    print_axes(resolve_onnx_windows({4}, o));
    // Adaptive bounds of 5 -> 3: [0, 2) [1, 4) [3, 5).
    for (int i = 0; i < 3; ++i)
        std::printf("adaptive %lld %lld\n", (long long)adaptive_start(i, 5, 3),
                    (long long)adaptive_end(i, 5, 3));
    // Divisors of a 1-D average with exclude_pad: length 5, kernel 3, stride 2, pads 1/1.
    PoolAttributes d = s;
    d.kernel = {3}; d.dilations = {1}; d.pads_begin = {1}; d.pads_end = {1};
    d.auto_pad = AutoPad::explicit_pads;
    DivisorRule rule = DivisorRule::exclude_pad;
    WindowPlan plan = fixed_plan(resolve_pool_axes({5}, d), &rule, 1 << 20);
    std::printf("divisor");
    for (long long v : plan.divisor) std::printf(" %lld", v);
    std::printf("\n");
    // Column-major indices within a 2x3 plane: row-major 1 = (0, 1) -> 2, 5 = (1, 2) -> 5,
    // 9 = plane 1, (1, 0) -> 6 + 1.
    int64_t idx[3] = {1, 5, 6 + 3};
    to_column_major(idx, 3, {2, 3});
    std::printf("column %lld %lld %lld\n", (long long)idx[0], (long long)idx[1], (long long)idx[2]);
    // A refusal: kernel 4 with dilation 2 spans 7 > 2 + pads 1/1.
    try {
        PoolAttributes r = s;
        r.kernel = {4}; r.pads_begin = {1}; r.pads_end = {1}; r.auto_pad = AutoPad::explicit_pads;
        resolve_pool_axes({2}, r);
        std::printf("accepted\n");
    } catch (const Error& e) {
        std::printf("error %d %s\n", static_cast<int>(e.kind), e.what());
    }
    try {
        check_plan_size({100, 100}, {100, 100}, 1000);
    } catch (const Error& e) {
        std::printf("error %d %s\n", static_cast<int>(e.kind), e.what());
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def program_output(tmp_path_factory):
    # A C++ compiler is needed to build ovpool at all: its absence is a failure, not a skip.
    compiler = shutil.which(os.environ.get("CXX", "g++")) or shutil.which("g++")
    assert compiler, "no C++ compiler found (g++, or set CXX)"
    tmp = tmp_path_factory.mktemp("rules_cpp")
    source, binary = tmp / "rules_test.cpp", tmp / "rules_test"
    source.write_text(PROGRAM)
    subprocess.run([compiler, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-I", CORE,
                    str(source), "-o", str(binary)], check=True, capture_output=True)
    return subprocess.run([str(binary)], check=True, capture_output=True,
                          text=True).stdout.splitlines()


def test_resolutions_without_python(program_output):
    assert program_output[:9] == [
        "axis 4 1 1 3", "axis 5 1 1 3",   # 7x8 k3 s2 p1 ceil
        "axis 3 1 0 3",                   # same_lower, dilated kernel 3
        "axis 2 0 1 2",                   # ceil_torch
        "axis 2 0 1 2",                   # ONNX ceil_mode
        "adaptive 0 2", "adaptive 1 4", "adaptive 3 5",
        "divisor 2 3 2",
    ]
    assert program_output[9] == "column 2 5 7"


def test_refusal_words_match_python(program_output):
    expected = ("attribute 'kernel' on spatial axis 0: the dilated kernel (4 with dilation 2 "
                "spans 7) is larger than the padded input (2 + pads 1/1 = 4)")
    assert program_output[10] == "error 0 " + expected
    with pytest.raises(BadAttributeError) as info:
        ovpool.max_pool(np.zeros((1, 1, 2), np.float32), 4, strides=2, pads_begin=1, pads_end=1,
                        dilations=2)
    assert str(info.value) == expected


def test_memory_refusal_words_match_python(program_output):
    assert program_output[11] == (
        "error 3 pooling [100, 100] to [100, 100] per plane needs more than the memory limit of "
        "1000 bytes for its output, window tables or scratch space (see ovpool.set_memory_limit)")


def test_python_answers_agree_with_the_program():
    axes = ovpool._shapes.resolve_pool_axes((1, 1, 7, 8), 3, 2, 1, 1, rounding_type="ceil")
    assert [(w.output, w.pad_begin, w.pad_end) for w in axes] == [(4, 1, 1), (5, 1, 1)]
    indices = np.array([1, 5, 9], np.int64)
    from ovpool import _rules
    assert _rules.to_column_major(indices, (2, 3)).tolist() == [2, 5, 7]
