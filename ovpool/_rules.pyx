# distutils: language = c++
# cython: language_level=3
"""Python bindings of the pooling rules in ``ovpool/core/rules.hpp`` (the only copy of them).

Thin conversions only: tuples of ints in, tuples / numpy arrays out, and
``ovpool::core::Error`` raised as the matching :mod:`ovpool.errors` class with the same message.
Python type checks (is this an int, a string, a sequence) stay in the Python callers, except
:func:`attribute_key`, the exact-type test every pooling call makes before its cache lookups.
"""

from cpython.list cimport PyList_CheckExact
from cpython.long cimport PyLong_CheckExact
from cpython.tuple cimport PyTuple_CheckExact
from cpython.unicode cimport PyUnicode_CheckExact
from libc.stdint cimport INT64_MAX, INT64_MIN, int64_t, uint64_t
from libc.string cimport memcpy
from libcpp cimport bool as cbool
from libcpp.string cimport string
from libcpp.vector cimport vector

import numpy as np

from .errors import BadArgumentError, BadAttributeError, BadShapeError, MemoryLimitError

cdef extern from *:
    """
    #include "core/rules.hpp"
    #include <new>
    namespace ovrules = ovpool::core;
    static PyObject* ovpool_rules_error_classes[4] = {NULL, NULL, NULL, NULL};

    static void ovpool_rules_set_error_classes(PyObject* attribute, PyObject* shape,
                                               PyObject* argument, PyObject* memory) {
        PyObject* classes[4] = {attribute, shape, argument, memory};
        for (int i = 0; i < 4; ++i) {
            Py_INCREF(classes[i]);
            Py_XDECREF(ovpool_rules_error_classes[i]);
            ovpool_rules_error_classes[i] = classes[i];
        }
    }

    // Called by Cython inside its catch(...) block: raise the Python twin of the C++ error.
    static void ovpool_rules_raise() {
        try {
            throw;
        } catch (const ovrules::Error& e) {
            PyObject* cls = ovpool_rules_error_classes[static_cast<int>(e.kind)];
            PyErr_SetString(cls ? cls : PyExc_ValueError, e.what());
        } catch (const std::bad_alloc&) {
            PyErr_NoMemory();
        } catch (const std::exception& e) {
            PyErr_SetString(PyExc_RuntimeError, e.what());
        } catch (...) {
            PyErr_SetString(PyExc_RuntimeError, "unknown C++ exception in ovpool._rules");
        }
    }

    static int ovpool_rules_parse_rounding(const std::string& s) {
        return static_cast<int>(ovrules::parse_rounding(s));
    }
    static int ovpool_rules_parse_auto_pad(const std::string& s) {
        return static_cast<int>(ovrules::parse_auto_pad(s));
    }
    static int ovpool_rules_parse_onnx_auto_pad(const std::string& op, const std::string& s) {
        return static_cast<int>(ovrules::parse_onnx_auto_pad(op, s));
    }
    static int ovpool_rules_parse_divisor_rule(const std::string& s) {
        return static_cast<int>(ovrules::parse_divisor_rule(s));
    }

    static ovrules::PoolAttributes ovpool_rules_attributes(
            const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
            const std::vector<int64_t>& pads_begin, const std::vector<int64_t>& pads_end,
            const std::vector<int64_t>& dilations, int rounding, int auto_pad) {
        ovrules::PoolAttributes a;
        a.kernel = kernel; a.strides = strides; a.pads_begin = pads_begin; a.pads_end = pads_end;
        a.dilations = dilations;
        a.rounding = static_cast<ovrules::Rounding>(rounding);
        a.auto_pad = static_cast<ovrules::AutoPad>(auto_pad);
        return a;
    }

    static std::vector<ovrules::AxisWindow> ovpool_rules_onnx(
            const std::string& op, const std::vector<int64_t>& lengths,
            const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
            const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads,
            const std::string& pads_text, int auto_pad, const std::string& auto_pad_text,
            bool ceil_mode) {
        ovrules::OnnxAttributes a;
        a.op = op; a.kernel_shape = kernel; a.strides = strides; a.dilations = dilations;
        a.pads = pads; a.pads_text = pads_text;
        a.auto_pad = static_cast<ovrules::AutoPad>(auto_pad); a.auto_pad_text = auto_pad_text;
        a.ceil_mode = ceil_mode;
        return ovrules::resolve_onnx_windows(lengths, a);
    }

    static ovrules::WindowPlan ovpool_rules_fixed_plan(
            const std::vector<ovrules::AxisWindow>& windows, int rule, uint64_t limit) {
        if (rule < 0) return ovrules::fixed_plan(windows, nullptr, limit);
        ovrules::DivisorRule r = static_cast<ovrules::DivisorRule>(rule);
        return ovrules::fixed_plan(windows, &r, limit);
    }

    static double ovpool_rules_lowest(const std::string& name) {
        return ovrules::lowest_value(ovrules::parse_storage_type(name));
    }
    """
    void set_error_classes "ovpool_rules_set_error_classes" (object, object, object, object)
    void raise_rules_error "ovpool_rules_raise" ()


cdef extern from "core/rules.hpp" namespace "ovpool::core":
    cdef cppclass AxisWindow:
        int64_t length, kernel, stride, dilation, pad_begin, pad_end, output

    cdef cppclass PoolAttributes:
        pass

    cdef cppclass WindowPlan:
        vector[Py_ssize_t] packed
        int64_t in_plane, out_plane
        vector[int64_t] divisor
        vector[double] divisor_real
        vector[float] real32, divisor32, inverse32
        cbool small_divisors
        vector[int64_t] output_spatial

    cdef cppclass IndexLayout:
        int64_t plane_modulus, offset_modulus, largest_index

    const vector[string]& rounding_names()
    const vector[string]& auto_pad_names()
    const vector[string]& divisor_rule_names()
    int64_t MAX_ATTRIBUTE_VALUE

    void c_check_input_shape "ovpool::core::check_input_shape" (
        const vector[int64_t]&, cbool, const string*) except +raise_rules_error
    void c_check_per_axis "ovpool::core::check_per_axis" (
        const string&, const vector[int64_t]&, size_t, int64_t, const string*) \
        except +raise_rules_error
    vector[AxisWindow] c_resolve_pool_axes "ovpool::core::resolve_pool_axes" (
        const vector[int64_t]&, const PoolAttributes&) except +raise_rules_error
    int64_t c_stand_in_length "ovpool::core::stand_in_length" (
        const vector[int64_t]&, const vector[int64_t]&, size_t)
    void c_check_exclude_pad_pads "ovpool::core::check_exclude_pad_pads" (
        const PoolAttributes&) except +raise_rules_error
    vector[AxisWindow] c_resolve_directml "ovpool::core::resolve_directml_windows" (
        const string&, const vector[int64_t]&, const vector[int64_t]&, const vector[int64_t]&,
        const vector[int64_t]&, const vector[int64_t]&, const vector[int64_t]&) \
        except +raise_rules_error
    int64_t c_adaptive_start "ovpool::core::adaptive_start" (int64_t, int64_t, int64_t) \
        except +raise_rules_error
    int64_t c_adaptive_end "ovpool::core::adaptive_end" (int64_t, int64_t, int64_t) \
        except +raise_rules_error
    WindowPlan c_adaptive_plan "ovpool::core::adaptive_plan" (
        const vector[int64_t]&, const vector[int64_t]&, uint64_t) except +raise_rules_error
    IndexLayout c_index_layout "ovpool::core::index_layout" (
        const vector[int64_t]&, int64_t, const string*) except +raise_rules_error
    void c_check_index_range "ovpool::core::check_index_range" (cbool, int64_t) \
        except +raise_rules_error
    void c_to_column_major "ovpool::core::to_column_major" (
        int64_t*, Py_ssize_t, const vector[int64_t]&) except +raise_rules_error


cdef extern from *:
    int c_parse_rounding "ovpool_rules_parse_rounding" (const string&) except +raise_rules_error
    int c_parse_auto_pad "ovpool_rules_parse_auto_pad" (const string&) except +raise_rules_error
    int c_parse_onnx_auto_pad "ovpool_rules_parse_onnx_auto_pad" (const string&, const string&) \
        except +raise_rules_error
    int c_parse_divisor_rule "ovpool_rules_parse_divisor_rule" (const string&) \
        except +raise_rules_error
    PoolAttributes c_attributes "ovpool_rules_attributes" (
        const vector[int64_t]&, const vector[int64_t]&, const vector[int64_t]&,
        const vector[int64_t]&, const vector[int64_t]&, int, int) except +raise_rules_error
    vector[AxisWindow] c_onnx "ovpool_rules_onnx" (
        const string&, const vector[int64_t]&, const vector[int64_t]&, const vector[int64_t]&,
        const vector[int64_t]&, const vector[int64_t]&, const string&, int, const string&,
        cbool) except +raise_rules_error
    WindowPlan c_fixed_plan "ovpool_rules_fixed_plan" (
        const vector[AxisWindow]&, int, uint64_t) except +raise_rules_error
    double c_lowest "ovpool_rules_lowest" (const string&) except +raise_rules_error


set_error_classes(BadAttributeError, BadShapeError, BadArgumentError, MemoryLimitError)

ROUNDING_TYPES = tuple(name.decode() for name in rounding_names())
AUTO_PADS = tuple(name.decode() for name in auto_pad_names())
DIVISOR_RULES = tuple(name.decode() for name in divisor_rule_names())
MAX_ATTRIBUTE_VALUE_ = MAX_ATTRIBUTE_VALUE

cdef int64_t _I64_MAX = INT64_MAX
cdef int64_t _I64_MIN = INT64_MIN


cdef inline string _s(text):
    return text.encode("utf-8", "surrogatepass")


cdef vector[int64_t] _vec(values, bint* clamped):
    """Python ints as int64; values out of range are clamped (callers then pass their own
    spelling of the values for messages)."""
    cdef vector[int64_t] out
    out.reserve(len(values))
    for v in values:
        if v > _I64_MAX:
            out.push_back(_I64_MAX)
            clamped[0] = True
        elif v < _I64_MIN:
            out.push_back(_I64_MIN)
            clamped[0] = True
        else:
            out.push_back(v)
    return out


cdef inline uint64_t _limit(limit):
    return <uint64_t>min(int(limit), 0xffffffffffffffff)


cdef tuple _windows_out(const vector[AxisWindow]& windows):
    return tuple((w.length, w.kernel, w.stride, w.dilation, w.pad_begin, w.pad_end, w.output)
                 for w in windows)


cdef vector[AxisWindow] _windows_in(windows):
    cdef vector[AxisWindow] out
    cdef AxisWindow w
    cdef bint clamped = False
    for window in windows:
        values = _vec(window, &clamped)
        if clamped:
            raise BadAttributeError(f"window {window!r} has values beyond int64")
        w.length, w.kernel, w.stride, w.dilation, w.pad_begin, w.pad_end, w.output = values
        out.push_back(w)
    return out


def parse_rounding(value):
    """The canonical name of a rounding_type string (case-insensitive)."""
    return ROUNDING_TYPES[c_parse_rounding(_s(value))]


def parse_auto_pad(value):
    """The canonical name of an auto_pad string (case-insensitive; "notset" is explicit)."""
    return AUTO_PADS[c_parse_auto_pad(_s(value))]


def parse_onnx_auto_pad(op, value):
    """The canonical auto_pad of an ONNX auto_pad string (NOTSET, SAME_UPPER, ...)."""
    return AUTO_PADS[c_parse_onnx_auto_pad(_s(op), _s(value))]


def check_input_shape(shape, bint allow_zero_spatial=False):
    """Validate an (N, C, spatial...) shape given as a tuple of ints."""
    cdef bint clamped = False
    cdef vector[int64_t] v = _vec(shape, &clamped)
    cdef string shown
    if clamped:
        shown = _s(str(list(shape)))
    c_check_input_shape(v, allow_zero_spatial, &shown if clamped else NULL)
    if clamped:
        raise BadShapeError(f"input shape {list(shape)} has a dimension that does not fit int64")


def check_per_axis(name, values, size_t rank, int64_t minimum, shown=None):
    """Refuse a tuple of ints of the wrong length or with a value out of range; ``shown`` is
    the caller's spelling of the values for messages (default: the list of ints)."""
    cdef bint clamped = False
    cdef vector[int64_t] v = _vec(values, &clamped)
    cdef string text
    if clamped and shown is None:
        shown = str(list(values))
    if shown is not None:
        text = _s(shown)
    c_check_per_axis(_s(name), v, rank, minimum, &text if shown is not None else NULL)


def resolve_pool_axes(lengths, kernel, strides, pads_begin, pads_end, dilations, rounding,
                      auto_pad):
    """One (length, kernel, stride, dilation, pad_begin, pad_end, output) tuple per spatial
    axis; attributes are tuples of ints, rounding and auto_pad canonical names."""
    cdef bint clamped = False
    cdef PoolAttributes a = c_attributes(
        _vec(kernel, &clamped), _vec(strides, &clamped), _vec(pads_begin, &clamped),
        _vec(pads_end, &clamped), _vec(dilations, &clamped), ROUNDING_TYPES.index(rounding),
        AUTO_PADS.index(auto_pad))
    return _windows_out(c_resolve_pool_axes(_vec(lengths, &clamped), a))


def stand_in_lengths(kernel, dilations, size_t rank):
    """The length standing in for an unknown length of each of ``rank`` spatial axes, from
    the per-axis ``kernel`` and ``dilations`` (tuples of ints; empty for none)."""
    cdef bint clamped = False
    cdef vector[int64_t] k = _vec(kernel, &clamped)
    cdef vector[int64_t] d = _vec(dilations, &clamped)
    return tuple(c_stand_in_length(k, d, a) for a in range(rank))


def check_exclude_pad_pads(kernel, pads_begin, pads_end, dilations, auto_pad):
    cdef bint clamped = False
    # (strides do not matter to this rule: the kernel's values stand in for them)
    cdef PoolAttributes a = c_attributes(
        _vec(kernel, &clamped), _vec(kernel, &clamped), _vec(pads_begin, &clamped),
        _vec(pads_end, &clamped), _vec(dilations, &clamped), 0, AUTO_PADS.index(auto_pad))
    c_check_exclude_pad_pads(a)


def resolve_onnx_windows(op, lengths, kernel_shape, strides, dilations, pads, pads_text,
                         auto_pad, auto_pad_text, bint ceil_mode):
    cdef bint clamped = False
    return _windows_out(c_onnx(
        _s(op), _vec(lengths, &clamped), _vec(kernel_shape, &clamped), _vec(strides, &clamped),
        _vec(dilations, &clamped), _vec(pads, &clamped), _s(pads_text),
        AUTO_PADS.index(auto_pad), _s(auto_pad_text), ceil_mode))


def resolve_directml_windows(op, lengths, strides, window_size, start_padding, end_padding,
                             dilations):
    cdef bint clamped = False
    return _windows_out(c_resolve_directml(
        _s(op), _vec(lengths, &clamped), _vec(strides, &clamped), _vec(window_size, &clamped),
        _vec(start_padding, &clamped), _vec(end_padding, &clamped), _vec(dilations, &clamped)))


def adaptive_start(int64_t index, int64_t length, int64_t output):
    """First input position of adaptive window ``index``: floor(index * length / output)."""
    return c_adaptive_start(index, length, output)


def adaptive_end(int64_t index, int64_t length, int64_t output):
    """One past the last input position: ceil((index + 1) * length / output)."""
    return c_adaptive_end(index, length, output)


cdef tuple _plan_out(WindowPlan& plan, bint with_divisor):
    packed = np.empty(plan.packed.size(), np.intp)
    cdef Py_ssize_t[::1] packed_view = packed
    if plan.packed.size():
        memcpy(&packed_view[0], plan.packed.data(), plan.packed.size() * sizeof(Py_ssize_t))
    divisor = divisor_real = divisor_floats = None
    cdef int64_t[::1] count_view
    cdef double[::1] real_view
    cdef float[:, ::1] floats_view
    cdef size_t n = plan.divisor.size()
    if with_divisor:
        divisor = np.empty(n, np.int64)
        divisor_real = np.empty(n, np.float64)
        divisor_floats = np.empty((3, n), np.float32)
        count_view = divisor
        real_view = divisor_real
        floats_view = divisor_floats
        if n:
            memcpy(&count_view[0], plan.divisor.data(), n * sizeof(int64_t))
            memcpy(&real_view[0], plan.divisor_real.data(), n * sizeof(double))
            memcpy(&floats_view[0, 0], plan.real32.data(), n * sizeof(float))
            memcpy(&floats_view[1, 0], plan.divisor32.data(), n * sizeof(float))
            memcpy(&floats_view[2, 0], plan.inverse32.data(), n * sizeof(float))
    return (packed, plan.in_plane, plan.out_plane, divisor, divisor_real,
            tuple(plan.output_spatial), divisor_floats, plan.small_divisors)


def fixed_plan(windows, divisor_rule, limit):
    """(packed tables, in_plane, out_plane, divisor int64 or None, divisor float64 or None,
    output spatial sizes, divisor float32 forms (3, out_plane) or None, whether every divisor
    is below 2**24) for windows given as 7-tuples; ``divisor_rule`` None is max pooling. The
    float32 forms are the divisor as float32, the same with 1 for an empty window, and its
    inverse with 0 for an empty window (core/rules.hpp's set_divisor). Refuses plans over
    ``limit`` bytes."""
    rule = -1 if divisor_rule is None else c_parse_divisor_rule(_s(divisor_rule))
    cdef WindowPlan plan = c_fixed_plan(_windows_in(windows), rule, _limit(limit))
    return _plan_out(plan, rule >= 0)


def adaptive_plan(lengths, outputs, limit):
    """As :func:`fixed_plan` for adaptive pooling (always with divisors)."""
    cdef bint clamped = False
    cdef WindowPlan plan = c_adaptive_plan(_vec(lengths, &clamped), _vec(outputs, &clamped),
                                           _limit(limit))
    return _plan_out(plan, True)


def index_layout(shape, axis):
    """(plane modulus, offset modulus, largest index) of max pooling's indices counted from
    dimension ``axis`` (an int, type-checked by the caller)."""
    cdef bint clamped = False
    cdef vector[int64_t] v = _vec(shape, &clamped)
    cdef string shown = _s(repr(axis))
    cdef int64_t a = max(min(int(axis), _I64_MAX), _I64_MIN)
    cdef IndexLayout layout = c_index_layout(v, a, &shown)
    return layout.plane_modulus, layout.offset_modulus, layout.largest_index


def check_index_range(bint int32_indices, int64_t largest_index):
    c_check_index_range(int32_indices, largest_index)


def to_column_major(indices, spatial):
    """Remap a C-contiguous int64 array of flat row-major indices, in place, to column-major
    positions within each spatial plane (ONNX storage_order=1)."""
    cdef bint clamped = False
    cdef int64_t[::1] flat = indices.reshape(-1)
    if flat.shape[0]:
        c_to_column_major(&flat[0], flat.shape[0], _vec(spatial, &clamped))
    return indices


def lowest_value(dtype_name):
    """The lowest finite value of a storage dtype (float32 ... int64, bfloat16)."""
    return c_lowest(_s(dtype_name))


def attribute_key(tuple values, bint as_given):
    """A cache key of attribute ``values`` whose equality means equal meaning, or None when a
    value is of a kind it cannot key (the caller then checks that value its slow way). Keyed
    are None, an int and a list or tuple of ints (as a tuple of them); with ``as_given`` (the
    ONNX dialect) also a str, and each list or tuple preceded by its type, so that a message
    that quotes a value quotes it as given. Exact types only: a bool, a float or a numpy
    integer compares equal to an int (``2.0 == 2 == True``), so none of them may share its
    key."""
    cdef list key = []
    for value in values:
        if value is None or PyLong_CheckExact(value) or (as_given and PyUnicode_CheckExact(value)):
            key.append(value)
            continue
        if PyTuple_CheckExact(value):
            items = value
        elif PyList_CheckExact(value):
            items = tuple(value)
        else:
            return None
        for item in <tuple> items:
            if not PyLong_CheckExact(item):
                return None
        key.append((type(value), items) if as_given else items)
    return tuple(key)
