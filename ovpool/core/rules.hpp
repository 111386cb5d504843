// The numeric rules of pooling: output lengths, pads, window tables, divisors, adaptive bounds,
// index layout, and their validation.
//
// This is the single source of these rules: ovpool's Python front ends call it through
// ovpool/_rules.pyx and the native OpenVINO extension calls it directly. Plain C++17: no Python,
// no threads. Invalid values throw ovpool::core::Error whose message is the one ovpool has
// always given, word for word; the only other exception is std::bad_alloc.
//
// Arithmetic is int64 and checked: attributes are at most MAX_ATTRIBUTE_VALUE (2**40), lengths
// may be anything an int64 holds, and every product that could overflow is checked (or done in
// 128 bits where the exact value is part of a message).
#ifndef OVPOOL_CORE_RULES_HPP
#define OVPOOL_CORE_RULES_HPP

#if defined(__has_include)
#if __has_include("config.hpp")
#include "config.hpp"
#endif
#endif

#ifndef OVPOOL_CORE_ISA
#define OVPOOL_CORE_ISA baseline
#endif

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace ovpool {
namespace core {
inline namespace OVPOOL_CORE_ISA {

// ------------------------------------------------------------------------------------------
// errors
// ------------------------------------------------------------------------------------------

// Which ovpool.errors class a refusal maps to: BadAttributeError, BadShapeError,
// BadArgumentError, MemoryLimitError.
enum class ErrorKind { attribute, shape, argument, memory };

struct Error : std::runtime_error {
    ErrorKind kind;
    Error(ErrorKind k, const std::string& message) : std::runtime_error(message), kind(k) {}
};

// Larger attribute values cannot describe a real window; they are refused outright.
constexpr int64_t MAX_ATTRIBUTE_VALUE = int64_t(1) << 40;
constexpr int64_t INT64_MAX_VALUE = std::numeric_limits<int64_t>::max();

namespace detail {

inline std::string str(int64_t v) { return std::to_string(static_cast<long long>(v)); }

// Python's repr of a list of ints: [1, 2, 3].
inline std::string list_text(const std::vector<int64_t>& values) {
    std::string s = "[";
    for (size_t i = 0; i < values.size(); ++i) {
        if (i) s += ", ";
        s += str(values[i]);
    }
    return s + "]";
}

// Python's repr of a str (ASCII escapes as Python writes them; other bytes kept as they are).
inline std::string py_repr(const std::string& text) {
    bool single = text.find('\'') != std::string::npos;
    bool dbl = text.find('"') != std::string::npos;
    char quote = (single && !dbl) ? '"' : '\'';
    static const char hex[] = "0123456789abcdef";
    std::string s(1, quote);
    for (unsigned char c : text) {
        if (c == '\\') s += "\\\\";
        else if (c == static_cast<unsigned char>(quote)) { s += '\\'; s += quote; }
        else if (c == '\n') s += "\\n";
        else if (c == '\r') s += "\\r";
        else if (c == '\t') s += "\\t";
        else if (c < 0x20 || c == 0x7f) { s += "\\x"; s += hex[c >> 4]; s += hex[c & 15]; }
        else s += static_cast<char>(c);
    }
    return s + quote;
}

inline std::string lower(std::string text) {
    for (char& c : text)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return text;
}

inline std::string upper(std::string text) {
    for (char& c : text)
        if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    return text;
}

// 128-bit unsigned values, only where an exact result beyond int64 is needed.
struct U128 { uint64_t hi, lo; };

inline U128 mul_wide(uint64_t a, uint64_t b) {
    uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
    uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
    uint64_t middle = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
    U128 r;
    r.lo = (middle << 32) | (p00 & 0xffffffffu);
    r.hi = p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32);
    return r;
}

inline U128 add_wide(U128 a, uint64_t b) {
    U128 r{a.hi, a.lo + b};
    if (r.lo < a.lo) ++r.hi;
    return r;
}

// n / d and n % d when the quotient fits 64 bits (n.hi < d).
inline uint64_t div_wide(U128 n, uint64_t d, uint64_t* remainder) {
    if (n.hi == 0) {  // (the common case: one hardware division, not 64 steps)
        if (remainder) *remainder = n.lo % d;
        return n.lo / d;
    }
    uint64_t rem = n.hi, q = 0;
    for (int bit = 63; bit >= 0; --bit) {
        bool carry = (rem >> 63) != 0;
        rem = (rem << 1) | ((n.lo >> bit) & 1u);
        if (carry || rem >= d) {
            rem -= d;
            q |= uint64_t(1) << bit;
        }
    }
    if (remainder) *remainder = rem;
    return q;
}

inline std::string wide_text(U128 v) {
    if (v.hi == 0) return std::to_string(static_cast<unsigned long long>(v.lo));
    const uint64_t chunk = 10000000000000000000ull;  // 10**19
    uint64_t high_rem = v.hi % chunk;
    U128 q_high{0, v.hi / chunk};
    uint64_t low_rem = 0;
    uint64_t q_low = div_wide(U128{high_rem, v.lo}, chunk, &low_rem);
    U128 quotient{q_high.lo, q_low};
    std::string tail = std::to_string(static_cast<unsigned long long>(low_rem));
    return wide_text(quotient) + std::string(19 - tail.size(), '0') + tail;
}

inline bool mul_overflows(int64_t a, int64_t b) {  // a, b >= 0
    return a != 0 && b > INT64_MAX_VALUE / a;
}

inline bool add_overflows(int64_t a, int64_t b) {  // a, b >= 0
    return a > INT64_MAX_VALUE - b;
}

// Saturating unsigned products, for comparisons with a limit.
inline uint64_t sat_mul(uint64_t a, uint64_t b) {
    if (a != 0 && b > std::numeric_limits<uint64_t>::max() / a)
        return std::numeric_limits<uint64_t>::max();
    return a * b;
}

inline uint64_t sat_add(uint64_t a, uint64_t b) {
    uint64_t r = a + b;
    return r < a ? std::numeric_limits<uint64_t>::max() : r;
}

inline int64_t floor_div(int64_t a, int64_t b) {  // b > 0
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

inline int64_t ceil_div(int64_t a, int64_t b) {  // b > 0
    int64_t q = a / b;
    return (a % b != 0 && a > 0) ? q + 1 : q;
}

// Product of non-negative values, refused with `what` when it overflows int64.
inline int64_t checked_product(const std::vector<int64_t>& values, size_t begin, size_t end,
                               ErrorKind kind, const std::string& what) {
    int64_t p = 1;
    for (size_t i = begin; i < end; ++i) {
        if (mul_overflows(p, values[i])) throw Error(kind, what);
        p *= values[i];
    }
    return p;
}

}  // namespace detail

// ------------------------------------------------------------------------------------------
// attribute spellings
// ------------------------------------------------------------------------------------------

enum class Rounding { floor, ceil, ceil_torch };
enum class AutoPad { explicit_pads, same_upper, same_lower, valid };
// How an average divides each window's sum (docs/semantics.md):
//   exclude_pad           the number of input elements in the window;
//   openvino_include_pad  the kernel volume whenever any pad is non-zero, else as exclude_pad;
//   include_padded        the taps inside the padded extent [-pad_begin, length + pad_end)
//                         (ONNX count_include_pad=1, DirectML IncludePadding=TRUE);
//   sum                   1: the window sums themselves (for LpPool).
enum class DivisorRule { exclude_pad, openvino_include_pad, include_padded, sum };

inline const std::vector<std::string>& rounding_names() {
    static const std::vector<std::string> names{"floor", "ceil", "ceil_torch"};
    return names;
}

inline const std::vector<std::string>& auto_pad_names() {
    static const std::vector<std::string> names{"explicit", "same_upper", "same_lower", "valid"};
    return names;
}

inline const std::vector<std::string>& divisor_rule_names() {
    static const std::vector<std::string> names{"exclude_pad", "openvino_include_pad",
                                                "include_padded", "sum"};
    return names;
}

namespace detail {
inline size_t parse_name(const std::string& attribute, const std::string& value,
                         const std::vector<std::string>& allowed, bool notset_alias) {
    std::string key = lower(value);
    if (notset_alias && key == "notset") key = "explicit";  // OpenVINO's PadType spelling
    for (size_t i = 0; i < allowed.size(); ++i)
        if (allowed[i] == key) return i;
    std::string expected;
    for (size_t i = 0; i < allowed.size(); ++i) expected += (i ? ", " : "") + allowed[i];
    throw Error(ErrorKind::attribute, "attribute '" + attribute + "' is " + py_repr(value) +
                                          "; expected one of " + expected);
}
}  // namespace detail

// Case-insensitive, as ovpool accepts them ("notset" is explicit padding).
inline Rounding parse_rounding(const std::string& value) {
    return static_cast<Rounding>(detail::parse_name("rounding_type", value, rounding_names(), false));
}

inline AutoPad parse_auto_pad(const std::string& value) {
    return static_cast<AutoPad>(detail::parse_name("auto_pad", value, auto_pad_names(), true));
}

inline DivisorRule parse_divisor_rule(const std::string& value) {
    const auto& names = divisor_rule_names();
    for (size_t i = 0; i < names.size(); ++i)
        if (names[i] == value) return static_cast<DivisorRule>(i);
    std::string all = "(";
    for (size_t i = 0; i < names.size(); ++i) all += (i ? ", '" : "'") + names[i] + "'";
    throw Error(ErrorKind::attribute,
                "divisor rule " + detail::py_repr(value) + " is not one of " + all + ")");
}

// ------------------------------------------------------------------------------------------
// shapes and per-axis attribute values
// ------------------------------------------------------------------------------------------

// Validate an (N, C, spatial...) shape. `shown`, if given, is the caller's spelling of the
// shape for messages (e.g. when its values did not fit int64).
inline void check_input_shape(const std::vector<int64_t>& shape, bool allow_zero_spatial = false,
                              const std::string* shown = nullptr) {
    std::string text = shown ? *shown : detail::list_text(shape);
    if (shape.size() < 3)
        throw Error(ErrorKind::shape, "input shape " + text + " has rank " +
                                          std::to_string(shape.size()) +
                                          "; pooling needs (N, C, spatial...) with at least one "
                                          "spatial axis");
    for (int64_t d : shape)
        if (d < 0) throw Error(ErrorKind::shape, "input shape " + text + " has a negative dimension");
    if (!allow_zero_spatial)
        for (size_t i = 2; i < shape.size(); ++i)
            if (shape[i] == 0)
                throw Error(ErrorKind::shape, "input shape " + text +
                                                  " has an empty spatial axis; there is nothing "
                                                  "to pool");
}

// Refuse a per-axis attribute with the wrong number of values or a value out of range
// (above MAX_ATTRIBUTE_VALUE or below `minimum`). `shown` as for check_input_shape.
inline void check_per_axis(const std::string& name, const std::vector<int64_t>& values,
                           size_t rank, int64_t minimum, const std::string* shown = nullptr) {
    std::string text = shown ? *shown : detail::list_text(values);
    if (values.size() != rank)
        throw Error(ErrorKind::attribute, "attribute '" + name + "' has " +
                                              std::to_string(values.size()) + " values " + text +
                                              ", expected one per spatial axis (" +
                                              std::to_string(rank) + ")");
    for (int64_t v : values) {
        if (v > MAX_ATTRIBUTE_VALUE)
            throw Error(ErrorKind::attribute, "attribute '" + name + "' is " + text +
                                                  "; values above " +
                                                  detail::str(MAX_ATTRIBUTE_VALUE) +
                                                  " are not supported");
        if (v < minimum) {
            std::string what = minimum == 1 ? "positive" : "at least " + detail::str(minimum);
            throw Error(ErrorKind::attribute,
                        "attribute '" + name + "' must be " + what + ", got " + text);
        }
    }
}

// ------------------------------------------------------------------------------------------
// fixed windows
// ------------------------------------------------------------------------------------------

// Window parameters of one spatial axis, after auto_pad and rounding are resolved. Window j
// reads input positions j*stride - pad_begin + t*dilation for t = 0 .. kernel-1; positions
// outside [0, length) are padding.
struct AxisWindow {
    int64_t length, kernel, stride, dilation, pad_begin, pad_end, output;
};

// One value per spatial axis.
struct PoolAttributes {
    std::vector<int64_t> kernel, strides, pads_begin, pads_end, dilations;
    Rounding rounding = Rounding::floor;
    AutoPad auto_pad = AutoPad::explicit_pads;
};

namespace detail {

// (kernel - 1) * dilation + 1 for validated attributes (both in [1, 2**40]); false when it
// does not fit int64, with its decimal text in `text`.
inline bool effective_kernel(int64_t kernel, int64_t dilation, int64_t* effective,
                             std::string* text) {
    U128 e = add_wide(mul_wide(uint64_t(kernel - 1), uint64_t(dilation)), 1);
    if (e.hi == 0 && e.lo <= uint64_t(INT64_MAX_VALUE)) {
        *effective = int64_t(e.lo);
        if (text) *text = str(*effective);
        return true;
    }
    if (text) *text = wide_text(e);
    return false;
}

inline Error too_large_for_int64(size_t axis, int64_t kernel, int64_t dilation,
                                 const std::string& effective) {
    return Error(ErrorKind::attribute,
                 "attribute 'kernel' on spatial axis " + std::to_string(axis) +
                     ": the dilated kernel (" + str(kernel) + " with dilation " + str(dilation) +
                     " spans " + effective + ") is too large for int64 window arithmetic");
}

// The output length of explicit (or valid) pads; the window already known to fit.
inline int64_t explicit_output(int64_t length, int64_t stride, int64_t pad_begin, int64_t span,
                               Rounding rounding) {
    if (rounding == Rounding::floor) return span / stride + 1;
    int64_t output = ceil_div(span, stride) + 1;
    // ceil_torch drops a last window that would start inside the right padding.
    if (rounding == Rounding::ceil_torch && (output - 1) * stride >= length + pad_begin)
        --output;
    return output;
}

inline AxisWindow resolve_axis(size_t axis, int64_t length, int64_t kernel, int64_t stride,
                               int64_t dilation, int64_t pad_begin, int64_t pad_end,
                               Rounding rounding, AutoPad auto_pad) {
    int64_t effective = 0;
    std::string effective_text;
    bool fits = effective_kernel(kernel, dilation, &effective, &effective_text);
    if (auto_pad == AutoPad::same_upper || auto_pad == AutoPad::same_lower) {
        int64_t output = ceil_div(length, stride);
        // (output - 1) * stride < length, so only the dilated kernel can overflow.
        int64_t reach = (output - 1) * stride;
        if (!fits || add_overflows(reach, effective))
            throw too_large_for_int64(axis, kernel, dilation, effective_text);
        int64_t total = reach + effective - length;
        if (total < 0) total = 0;
        int64_t small = total / 2, large = total - total / 2;
        if (auto_pad == AutoPad::same_upper) return {length, kernel, stride, dilation, small, large, output};
        return {length, kernel, stride, dilation, large, small, output};
    }
    if (auto_pad == AutoPad::valid) pad_begin = pad_end = 0;
    if (add_overflows(length, pad_begin) || add_overflows(length + pad_begin, pad_end))
        throw Error(ErrorKind::shape, "spatial axis " + std::to_string(axis) + ": the padded input (" +
                                          str(length) + " + pads " + str(pad_begin) + "/" +
                                          str(pad_end) + ") does not fit int64");
    int64_t padded = length + pad_begin + pad_end;
    if (!fits || effective > padded)
        throw Error(ErrorKind::attribute,
                    "attribute 'kernel' on spatial axis " + std::to_string(axis) +
                        ": the dilated kernel (" + str(kernel) + " with dilation " + str(dilation) +
                        " spans " + effective_text + ") is larger than the padded input (" +
                        str(length) + " + pads " + str(pad_begin) + "/" + str(pad_end) + " = " +
                        str(padded) + ")");
    int64_t output = explicit_output(length, stride, pad_begin, padded - effective, rounding);
    return {length, kernel, stride, dilation, pad_begin, pad_end, output};
}

inline void check_pool_attributes(size_t rank, const PoolAttributes& a) {
    check_per_axis("kernel", a.kernel, rank, 1);
    check_per_axis("strides", a.strides, rank, 1);
    check_per_axis("dilations", a.dilations, rank, 1);
    check_per_axis("pads_begin", a.pads_begin, rank, 0);
    check_per_axis("pads_end", a.pads_end, rank, 0);
}

}  // namespace detail

// Resolve pooling attributes into one AxisWindow per spatial axis (lengths >= 1). With
// auto_pad same_upper / same_lower the given pads are ignored and recomputed from the dilated
// kernel with output ceil(length / stride); with valid they are zero.
inline std::vector<AxisWindow> resolve_pool_axes(const std::vector<int64_t>& spatial_lengths,
                                                 const PoolAttributes& attributes) {
    size_t rank = spatial_lengths.size();
    std::vector<int64_t> shape{1, 1};
    shape.insert(shape.end(), spatial_lengths.begin(), spatial_lengths.end());
    check_input_shape(shape);
    detail::check_pool_attributes(rank, attributes);
    std::vector<AxisWindow> windows;
    windows.reserve(rank);
    for (size_t a = 0; a < rank; ++a)
        windows.push_back(detail::resolve_axis(a, spatial_lengths[a], attributes.kernel[a],
                                               attributes.strides[a], attributes.dilations[a],
                                               attributes.pads_begin[a], attributes.pads_end[a],
                                               attributes.rounding, attributes.auto_pad));
    return windows;
}

// The length standing in for an unknown (dynamic) length of spatial axis `axis` while
// attributes are checked and output lengths computed (the outputs of such axes stay unknown):
// the axis's dilated kernel, which every rule accepts without padding; 1 for an axis without a
// kernel value (adaptive pooling has none). Values below 1 count as 1, and the result is
// clamped to 2**61, so that values the checks refuse reach them instead of overflowing here.
inline int64_t stand_in_length(const std::vector<int64_t>& kernel,
                               const std::vector<int64_t>& dilations, size_t axis) {
    const int64_t clamp = int64_t(1) << 61;
    int64_t k = axis < kernel.size() && kernel[axis] > 1 ? kernel[axis] : 1;
    int64_t d = axis < dilations.size() && dilations[axis] > 1 ? dilations[axis] : 1;
    int64_t effective = 0;
    if (!detail::effective_kernel(k, d, &effective, nullptr) || effective > clamp) return clamp;
    return effective;
}

// `spatial_lengths` with each unknown (negative) length replaced by its stand_in_length.
inline std::vector<int64_t> with_stand_ins(const std::vector<int64_t>& spatial_lengths,
                                           const std::vector<int64_t>& kernel,
                                           const std::vector<int64_t>& dilations) {
    std::vector<int64_t> lengths(spatial_lengths);
    for (size_t a = 0; a < lengths.size(); ++a)
        if (lengths[a] < 0) lengths[a] = stand_in_length(kernel, dilations, a);
    return lengths;
}

// Refuse, as OpenVINO's AvgPool does, exclude_pad=True with an explicit pad that reaches the
// dilated kernel: a window could then lie wholly in the padding. Computed same_* pads are
// never refused.
inline void check_exclude_pad_pads(const PoolAttributes& a) {
    if (a.auto_pad != AutoPad::explicit_pads) return;
    size_t rank = a.kernel.size();
    check_per_axis("kernel", a.kernel, rank, 1);
    check_per_axis("dilations", a.dilations, rank, 1);
    check_per_axis("pads_begin", a.pads_begin, rank, 0);
    check_per_axis("pads_end", a.pads_end, rank, 0);
    for (size_t axis = 0; axis < rank; ++axis) {
        int64_t effective = 0;
        std::string text;
        if (!detail::effective_kernel(a.kernel[axis], a.dilations[axis], &effective, &text))
            continue;  // larger than any pad
        int64_t pad = a.pads_begin[axis] > a.pads_end[axis] ? a.pads_begin[axis] : a.pads_end[axis];
        if (pad >= effective)
            throw Error(ErrorKind::attribute,
                        "attribute 'pads_begin'/'pads_end' on spatial axis " +
                            std::to_string(axis) + " is " + detail::str(a.pads_begin[axis]) + "/" +
                            detail::str(a.pads_end[axis]) + ", not smaller than the dilated kernel " +
                            text + " (required with exclude_pad=True)");
    }
}

// ------------------------------------------------------------------------------------------
// ONNX and DirectML windows
// ------------------------------------------------------------------------------------------

// ONNX auto_pad spellings (upper-case names, case-insensitive): NOTSET, SAME_UPPER,
// SAME_LOWER, VALID; the empty string is NOTSET, as onnxruntime, OpenVINO's ONNX frontend and
// the onnx checker read it (exporters write auto_pad=""). `op` is the versioned operator name
// that prefixes messages.
inline AutoPad parse_onnx_auto_pad(const std::string& op, const std::string& value) {
    static const char* names[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"};
    if (value.empty()) return static_cast<AutoPad>(0);
    std::string key = detail::upper(value);
    for (int i = 0; i < 4; ++i)
        if (key == names[i]) return static_cast<AutoPad>(i);
    throw Error(ErrorKind::attribute, op + ": attribute 'auto_pad' is " + detail::py_repr(value) +
                                          "; expected one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
}

struct OnnxAttributes {
    std::string op;                       // versioned name for messages, e.g. "MaxPool-12"
    std::vector<int64_t> kernel_shape, strides, dilations;
    std::vector<int64_t> pads;            // [x1_begin, x2_begin, ..., x1_end, x2_end, ...]
    std::string pads_text;                // the caller's spelling of pads for messages
    AutoPad auto_pad = AutoPad::explicit_pads;
    std::string auto_pad_text;            // the caller's spelling of auto_pad (e.g. "SAME_UPPER")
    bool ceil_mode = false;
};

// ONNX rules (every operator and version): explicit pads, O = floor or, with ceil_mode, the
// ceil length minus a last window that would start in the right padding; SAME_* pads computed
// from the dilated kernel with O = ceil(L / s) whatever ceil_mode is; VALID is zero pads and
// then the explicit rule. Explicit pads not smaller than the kernel are refused, as
// onnxruntime does; pads given with an auto_pad other than NOTSET are refused.
inline std::vector<AxisWindow> resolve_onnx_windows(const std::vector<int64_t>& spatial_lengths,
                                                    const OnnxAttributes& a) {
    size_t rank = spatial_lengths.size();
    check_per_axis("kernel_shape", a.kernel_shape, rank, 1);
    check_per_axis("strides", a.strides, rank, 1);
    check_per_axis("dilations", a.dilations, rank, 1);
    check_per_axis("pads", a.pads, 2 * rank, 0);
    std::string pads_text = a.pads_text.empty() ? detail::list_text(a.pads) : a.pads_text;
    if (a.auto_pad != AutoPad::explicit_pads) {
        for (int64_t p : a.pads)
            if (p != 0)
                throw Error(ErrorKind::attribute,
                            a.op + ": attribute 'pads' = " + pads_text + " cannot be used with auto_pad=" +
                                detail::py_repr(a.auto_pad_text));
    } else {
        for (size_t i = 0; i < rank; ++i) {
            int64_t begin = a.pads[i], end = a.pads[rank + i];
            if (begin >= a.kernel_shape[i] || end >= a.kernel_shape[i])
                throw Error(ErrorKind::attribute,
                            a.op + ": attribute 'pads' = " + pads_text + ": the pads of spatial axis " +
                                std::to_string(i) + " (" + detail::str(begin) + "/" +
                                detail::str(end) + ") must be smaller than kernel_shape " +
                                detail::str(a.kernel_shape[i]) + " (onnxruntime's rule)");
        }
    }
    PoolAttributes p;
    p.kernel = a.kernel_shape;
    p.strides = a.strides;
    p.dilations = a.dilations;
    p.pads_begin.assign(a.pads.begin(), a.pads.begin() + rank);
    p.pads_end.assign(a.pads.begin() + rank, a.pads.end());
    p.rounding = a.ceil_mode ? Rounding::ceil_torch : Rounding::floor;
    p.auto_pad = a.auto_pad;
    return resolve_pool_axes(spatial_lengths, p);
}

// DirectML: OutputSize = (PaddedSize - dilated WindowSize) / Strides + 1 (the floor rule with
// explicit pads); a window larger than the padded input is refused (the unsigned subtraction
// of the documented rule would wrap around). `op` prefixes messages.
inline std::vector<AxisWindow> resolve_directml_windows(
    const std::string& op, const std::vector<int64_t>& spatial_lengths,
    const std::vector<int64_t>& strides, const std::vector<int64_t>& window_size,
    const std::vector<int64_t>& start_padding, const std::vector<int64_t>& end_padding,
    const std::vector<int64_t>& dilations) {
    size_t rank = spatial_lengths.size();
    check_per_axis("strides", strides, rank, 1);
    check_per_axis("window_size", window_size, rank, 1);
    check_per_axis("start_padding", start_padding, rank, 0);
    check_per_axis("end_padding", end_padding, rank, 0);
    check_per_axis("dilations", dilations, rank, 1);
    std::vector<AxisWindow> windows;
    for (size_t a = 0; a < rank; ++a) {
        int64_t length = spatial_lengths[a];
        if (length < 0 || detail::add_overflows(length, start_padding[a]) ||
            detail::add_overflows(length + start_padding[a], end_padding[a]))
            throw Error(ErrorKind::shape, op + ": spatial axis " + std::to_string(a) +
                                              " has length " + detail::str(length) +
                                              ", which cannot be padded");
        int64_t padded = length + start_padding[a] + end_padding[a];
        int64_t span = 0;
        std::string span_text;
        bool fits = detail::effective_kernel(window_size[a], dilations[a], &span, &span_text);
        if (!fits || span > padded)
            throw Error(ErrorKind::attribute,
                        op + ": window_size " + detail::str(window_size[a]) + " (dilation " +
                            detail::str(dilations[a]) + ", spanning " + span_text +
                            ") on spatial axis " + std::to_string(a) +
                            " is larger than the padded input (" + detail::str(length) + " + " +
                            detail::str(start_padding[a]) + " + " + detail::str(end_padding[a]) +
                            " = " + detail::str(padded) + ")");
        windows.push_back(detail::resolve_axis(a, length, window_size[a], strides[a], dilations[a],
                                               start_padding[a], end_padding[a], Rounding::floor,
                                               AutoPad::explicit_pads));
    }
    return windows;
}

// ------------------------------------------------------------------------------------------
// adaptive windows
// ------------------------------------------------------------------------------------------

namespace detail {
inline void check_adaptive(int64_t index, int64_t length, int64_t output) {
    if (output < 1 || length < 0 || index < 0 || index >= output)
        throw Error(ErrorKind::argument, "adaptive window " + str(index) + " of length " +
                                             str(length) + " pooled to " + str(output) +
                                             " does not exist");
}
}  // namespace detail

// First input position of adaptive window `index`: floor(index * length / output).
inline int64_t adaptive_start(int64_t index, int64_t length, int64_t output) {
    detail::check_adaptive(index, length, output);
    return int64_t(detail::div_wide(detail::mul_wide(uint64_t(index), uint64_t(length)),
                                    uint64_t(output), nullptr));
}

// One past the last input position: ceil((index + 1) * length / output).
inline int64_t adaptive_end(int64_t index, int64_t length, int64_t output) {
    detail::check_adaptive(index, length, output);
    uint64_t remainder = 0;
    uint64_t q = detail::div_wide(detail::mul_wide(uint64_t(index + 1), uint64_t(length)),
                                  uint64_t(output), &remainder);
    return int64_t(q + (remainder != 0));
}

// Output spatial sizes of adaptive pooling, validated (each in [1, 2**40]).
inline void check_adaptive_output(const std::vector<int64_t>& output_size, size_t rank,
                                  const std::string* shown = nullptr) {
    check_per_axis("output_size", output_size, rank, 1, shown);
}

// ------------------------------------------------------------------------------------------
// window tables, divisors, plan size
// ------------------------------------------------------------------------------------------

// Elements of the scratch buffer of separable passes: pass a (outermost axis first) turns
// axis a from length into output.
inline int64_t scratch_elements(const std::vector<int64_t>& lengths,
                                const std::vector<int64_t>& outputs) {
    uint64_t best = 0;
    for (size_t a = 0; a < lengths.size(); ++a) {
        uint64_t p = 1;
        for (size_t i = 0; i <= a; ++i) p = detail::sat_mul(p, uint64_t(outputs[i]));
        for (size_t i = a + 1; i < lengths.size(); ++i) p = detail::sat_mul(p, uint64_t(lengths[i]));
        if (p > best) best = p;
    }
    if (best > uint64_t(INT64_MAX_VALUE))
        throw Error(ErrorKind::memory, "pooling " + detail::list_text(lengths) + " to " +
                                           detail::list_text(outputs) +
                                           " per plane: the scratch size overflows int64");
    return int64_t(best);
}

// Bytes of one output's divisor in every form a plan keeps (WindowPlan: int64, float64 and
// three float32).
constexpr uint64_t DIVISOR_BYTES = 2 * 8 + 3 * 4;

// Refuse before building window tables whose size (or the per-plane output and scratch they
// imply, or the divisors when `with_divisors`) exceeds `limit_bytes`, whatever the batch:
// tables are O(sum of outputs).
inline void check_plan_size(const std::vector<int64_t>& lengths,
                            const std::vector<int64_t>& outputs, uint64_t limit_bytes,
                            bool with_divisors = false) {
    uint64_t per_plane = 8, tables = 0, scratch = 0, divisors = with_divisors ? DIVISOR_BYTES : 0;
    for (int64_t o : outputs) {
        per_plane = detail::sat_mul(per_plane, uint64_t(o));
        divisors = detail::sat_mul(divisors, uint64_t(o));
        tables = detail::sat_add(tables, uint64_t(o));
    }
    tables = detail::sat_mul(tables, 32);
    for (size_t a = 0; a < lengths.size(); ++a) {
        uint64_t p = 16;
        for (size_t i = 0; i <= a; ++i) p = detail::sat_mul(p, uint64_t(outputs[i]));
        for (size_t i = a + 1; i < lengths.size(); ++i) p = detail::sat_mul(p, uint64_t(lengths[i]));
        if (p > scratch) scratch = p;
    }
    uint64_t most = per_plane > scratch ? per_plane : scratch;
    if (tables > most) most = tables;
    if (divisors > most) most = divisors;
    if (most > limit_bytes)
        throw Error(ErrorKind::memory,
                    "pooling " + detail::list_text(lengths) + " to " + detail::list_text(outputs) +
                        " per plane needs more than the memory limit of " +
                        std::to_string(static_cast<unsigned long long>(limit_bytes)) +
                        " bytes for its output, window tables or scratch space "
                        "(see ovpool.set_memory_limit)");
}

// Kernel tables and divisors of one pooling, for a plane of `in_plane` input elements.
//   packed: [naxes, scratch, length[n], output[n], dilation[n], offset[n], stride[n],
//            interior[2n], begin[sum(output)], count[sum(output)]]
//   divisor / divisor_real: one per output element of a plane (empty for max pooling);
//   divisor_real is +inf where the divisor is 0 (that window's sum 0 / inf gives 0).
//   real32, divisor32, inverse32, small_divisors: the divisors in the forms the kernels
//   divide by (see set_divisor), made here once per plan so that no call derives them again.
struct WindowPlan {
    std::vector<std::ptrdiff_t> packed;
    int64_t in_plane = 0, out_plane = 0;
    std::vector<int64_t> divisor;
    std::vector<double> divisor_real;
    std::vector<float> real32, divisor32, inverse32;
    bool small_divisors = false;
    std::vector<int64_t> output_spatial;
};

// No memory check unless a limit is given.
constexpr uint64_t NO_MEMORY_LIMIT = std::numeric_limits<uint64_t>::max();

namespace detail {

struct AxisTaps {
    int64_t length, output, dilation, stride;
    std::vector<int64_t> begin, count;
    int64_t interior_lo = 0, interior_hi = 0;
};

// The run of windows with the most taps, if their begins advance by `stride`.
inline void find_interior(AxisTaps& t) {
    t.interior_lo = t.interior_hi = 0;
    int64_t most = 0;
    for (int64_t c : t.count) most = c > most ? c : most;
    if (most == 0) return;
    int64_t lo = -1, hi = -1, n = 0;
    for (int64_t j = 0; j < int64_t(t.count.size()); ++j)
        if (t.count[j] == most) {
            if (lo < 0) lo = j;
            hi = j + 1;
            ++n;
        }
    if (lo < 0 || hi - lo != n) return;
    for (int64_t j = lo + 1; j < hi; ++j)
        if (t.begin[j] - t.begin[j - 1] != t.stride) return;
    t.interior_lo = lo;
    t.interior_hi = hi;
}

inline void check_window(size_t axis, const AxisWindow& w) {
    bool ok = w.length >= 0 && w.kernel >= 1 && w.stride >= 1 && w.dilation >= 1 &&
              w.pad_begin >= 0 && w.pad_end >= 0 && w.output >= 0 &&
              w.kernel <= MAX_ATTRIBUTE_VALUE && w.dilation <= MAX_ATTRIBUTE_VALUE &&
              w.stride <= MAX_ATTRIBUTE_VALUE &&
              !add_overflows(w.pad_begin, w.pad_end) &&
              !add_overflows(w.length, w.pad_begin + w.pad_end) &&
              !add_overflows(w.length + w.pad_begin + w.pad_end, 2 * MAX_ATTRIBUTE_VALUE) &&
              !mul_overflows(w.output, w.stride);
    if (!ok)
        throw Error(ErrorKind::attribute,
                    "window of spatial axis " + std::to_string(axis) + " is invalid: length " +
                        str(w.length) + ", kernel " + str(w.kernel) + ", stride " + str(w.stride) +
                        ", dilation " + str(w.dilation) + ", pads " + str(w.pad_begin) + "/" +
                        str(w.pad_end) + ", output " + str(w.output));
}

// First in-bounds tap position and number of in-bounds taps of every window.
inline AxisTaps fixed_axis_taps(const AxisWindow& w) {
    AxisTaps t{w.length, w.output, w.dilation, w.stride, {}, {}};
    t.begin.resize(size_t(w.output));
    t.count.resize(size_t(w.output));
    const int64_t d = w.dilation;
    for (int64_t j = 0; j < w.output; ++j) {
        int64_t start = j * w.stride - w.pad_begin;
        int64_t first = -floor_div(start, d);  // ceil(-start / d)
        if (first < 0) first = 0;
        int64_t stop = ceil_div(w.length - start, d);
        if (stop > w.kernel) stop = w.kernel;
        int64_t count = stop - first > 0 ? stop - first : 0;
        t.count[size_t(j)] = count;
        t.begin[size_t(j)] = count > 0 ? start + first * d : 0;
    }
    find_interior(t);
    return t;
}

// Taps of every window that fall inside the padded extent (they all start inside it).
inline std::vector<int64_t> padded_taps(const AxisWindow& w) {
    std::vector<int64_t> taps(size_t(w.output));
    for (int64_t j = 0; j < w.output; ++j) {
        int64_t start = j * w.stride - w.pad_begin;
        int64_t reach = w.length + w.pad_end - start;
        int64_t t = ceil_div(reach, w.dilation);
        taps[size_t(j)] = t < w.kernel ? t : w.kernel;
    }
    return taps;
}

// One output whose window holds the whole axis, each element once.
inline bool is_global(const AxisTaps& t) {
    return t.output == 1 && t.begin[0] == 0 && t.count[0] == t.length &&
           (t.dilation == 1 || t.length == 1);
}

// Row-major outer product of per-axis factors (last axis fastest).
inline std::vector<int64_t> outer_product(const std::vector<std::vector<int64_t>>& factors,
                                          const std::string& overflow_message) {
    std::vector<int64_t> out{1};
    for (const auto& f : factors) {
        std::vector<int64_t> next;
        next.reserve(out.size() * f.size());
        for (int64_t a : out)
            for (int64_t b : f) {
                if (b < 0 || mul_overflows(a, b)) throw Error(ErrorKind::attribute, overflow_message);
                next.push_back(a * b);
            }
        out.swap(next);
    }
    return out;
}

inline void pack(WindowPlan& plan, const std::vector<AxisTaps>& axes) {
    std::vector<int64_t> lengths, outputs;
    for (const auto& t : axes) {
        lengths.push_back(t.length);
        outputs.push_back(t.output);
    }
    size_t n = axes.size();
    int64_t total = 0;
    for (int64_t o : outputs) total += o;
    std::vector<std::ptrdiff_t>& p = plan.packed;
    p.clear();
    p.reserve(2 + 7 * n + 2 * size_t(total));
    p.push_back(std::ptrdiff_t(n));
    p.push_back(std::ptrdiff_t(scratch_elements(lengths, outputs)));
    for (const auto& t : axes) p.push_back(std::ptrdiff_t(t.length));
    for (const auto& t : axes) p.push_back(std::ptrdiff_t(t.output));
    for (const auto& t : axes) p.push_back(std::ptrdiff_t(t.dilation));
    int64_t offset = 0;
    for (const auto& t : axes) {
        p.push_back(std::ptrdiff_t(offset));
        offset += t.output;
    }
    for (const auto& t : axes) p.push_back(std::ptrdiff_t(t.stride));
    for (const auto& t : axes) {
        p.push_back(std::ptrdiff_t(t.interior_lo));
        p.push_back(std::ptrdiff_t(t.interior_hi));
    }
    for (const auto& t : axes)
        for (int64_t b : t.begin) p.push_back(std::ptrdiff_t(b));
    for (const auto& t : axes)
        for (int64_t c : t.count) p.push_back(std::ptrdiff_t(c));
    std::string what = "pooling " + list_text(lengths) + " to " + list_text(outputs) +
                       " per plane: the plane size overflows int64";
    plan.in_plane = checked_product(lengths, 0, n, ErrorKind::memory, what);
    plan.out_plane = checked_product(outputs, 0, n, ErrorKind::memory, what);
}

// The divisors and their float forms: real32 is divisor_real as float32 (what float32 sums
// divide by); divisor32 and inverse32 are the divisor as float32 and its correctly rounded
// inverse, 1 and 0 for an empty window (whose average is then 0), from which the AVX2 kernels
// take the quotients of int16 sums without dividing; small_divisors says whether every divisor
// is below small_divisor_limit (exact in float32). IEEE float32 conversions and divisions, so
// the same bits in every build.
inline void set_divisor(WindowPlan& plan, std::vector<int64_t> divisor) {
    const size_t n = divisor.size();
    plan.divisor_real.resize(n);
    plan.real32.resize(n);
    plan.divisor32.resize(n);
    plan.inverse32.resize(n);
    int64_t largest = 0;
    for (size_t i = 0; i < n; ++i) {
        const bool empty = divisor[i] == 0;
        plan.divisor_real[i] = empty ? std::numeric_limits<double>::infinity() : double(divisor[i]);
        plan.real32[i] = static_cast<float>(plan.divisor_real[i]);
        plan.divisor32[i] = empty ? 1.0f : plan.real32[i];
        plan.inverse32[i] = empty ? 0.0f : 1.0f / plan.divisor32[i];
        largest = divisor[i] > largest ? divisor[i] : largest;
    }
    plan.small_divisors = largest < small_divisor_limit;
    plan.divisor = std::move(divisor);
}

}  // namespace detail

// Tables (and divisors, when `rule` is not null: null is max pooling) for resolved windows.
// Trailing axes pooled globally are merged into one axis (flat offsets within a plane do not
// change), so global pooling is one pass over contiguous memory.
inline WindowPlan fixed_plan(const std::vector<AxisWindow>& windows, const DivisorRule* rule,
                             uint64_t limit_bytes = NO_MEMORY_LIMIT) {
    if (windows.empty())
        throw Error(ErrorKind::attribute, "expected one AxisWindow per spatial axis, got none");
    std::vector<int64_t> lengths, outputs;
    for (size_t a = 0; a < windows.size(); ++a) {
        detail::check_window(a, windows[a]);
        lengths.push_back(windows[a].length);
        outputs.push_back(windows[a].output);
    }
    check_plan_size(lengths, outputs, limit_bytes, rule != nullptr);
    std::vector<detail::AxisTaps> taps;
    for (const auto& w : windows) taps.push_back(detail::fixed_axis_taps(w));

    WindowPlan plan;
    plan.output_spatial = outputs;
    size_t trailing_global = 0;
    for (size_t a = taps.size(); a-- > 0 && detail::is_global(taps[a]);) ++trailing_global;
    if (trailing_global >= 2) {
        size_t keep = taps.size() - trailing_global;
        int64_t merged = detail::checked_product(
            lengths, keep, lengths.size(), ErrorKind::memory,
            "pooling " + detail::list_text(lengths) + " to " + detail::list_text(outputs) +
                " per plane: the plane size overflows int64");
        std::vector<detail::AxisTaps> kept(taps.begin(), taps.begin() + std::ptrdiff_t(keep));
        detail::AxisTaps global{merged, 1, 1, merged, {0}, {merged}};
        detail::find_interior(global);
        kept.push_back(global);
        detail::pack(plan, kept);
    } else {
        detail::pack(plan, taps);
    }
    if (!rule) return plan;

    bool any_pad = false;
    for (const auto& w : windows) any_pad = any_pad || w.pad_begin || w.pad_end;
    std::vector<int64_t> kernels;
    for (const auto& w : windows) kernels.push_back(w.kernel);
    std::string overflow = "attribute 'kernel' is " + detail::list_text(kernels) +
                           ": the window volume overflows int64";
    std::vector<std::vector<int64_t>> factors;
    switch (*rule) {
        case DivisorRule::openvino_include_pad:
            if (any_pad) {
                // OpenVINO's exclude-pad=false divides every window, hanging ones too, by the
                // full kernel volume whenever there is padding at all.
                int64_t volume = detail::checked_product(kernels, 0, kernels.size(),
                                                         ErrorKind::attribute, overflow);
                detail::set_divisor(plan, std::vector<int64_t>(size_t(plan.out_plane), volume));
                return plan;
            }
            for (const auto& t : taps) factors.push_back(t.count);
            break;
        case DivisorRule::include_padded:
            for (const auto& w : windows) factors.push_back(detail::padded_taps(w));
            break;
        case DivisorRule::sum:
            detail::set_divisor(plan, std::vector<int64_t>(size_t(plan.out_plane), 1));
            return plan;
        case DivisorRule::exclude_pad:
            for (const auto& t : taps) factors.push_back(t.count);
            break;
    }
    detail::set_divisor(plan, detail::outer_product(factors, overflow));
    return plan;
}

// Tables and divisors of adaptive pooling: output i of an axis of length L pooled to O reads
// [adaptive_start(i), adaptive_end(i)); the window's stride is max(L / O, 1).
inline WindowPlan adaptive_plan(const std::vector<int64_t>& lengths,
                                const std::vector<int64_t>& outputs,
                                uint64_t limit_bytes = NO_MEMORY_LIMIT) {
    std::vector<int64_t> shape{1, 1};
    shape.insert(shape.end(), lengths.begin(), lengths.end());
    check_input_shape(shape);
    check_adaptive_output(outputs, lengths.size());
    check_plan_size(lengths, outputs, limit_bytes, true);
    std::vector<detail::AxisTaps> axes;
    std::vector<std::vector<int64_t>> counts;
    for (size_t a = 0; a < lengths.size(); ++a) {
        int64_t L = lengths[a], O = outputs[a];
        int64_t stride = L / O > 1 ? L / O : 1;
        detail::AxisTaps t{L, O, 1, stride, {}, {}};
        t.begin.resize(size_t(O));
        t.count.resize(size_t(O));
        for (int64_t i = 0; i < O; ++i) {
            int64_t start = adaptive_start(i, L, O);
            t.begin[size_t(i)] = start;
            t.count[size_t(i)] = adaptive_end(i, L, O) - start;
        }
        detail::find_interior(t);
        counts.push_back(t.count);
        axes.push_back(std::move(t));
    }
    WindowPlan plan;
    plan.output_spatial = outputs;
    detail::pack(plan, axes);
    detail::set_divisor(plan, detail::outer_product(counts, "adaptive window volume overflows int64"));
    return plan;
}

// ------------------------------------------------------------------------------------------
// indices
// ------------------------------------------------------------------------------------------

// Max pooling's indices are flat positions in the unpadded input counted from dimension
// `axis` on: index = (plane % plane_modulus) * offset_modulus + offset within the plane.
struct IndexLayout {
    int64_t plane_modulus, offset_modulus, largest_index;
};

// `axis_text`, if given, is the caller's spelling of axis for messages.
inline IndexLayout index_layout(const std::vector<int64_t>& shape, int64_t axis,
                                const std::string* axis_text = nullptr) {
    int64_t rank = int64_t(shape.size());
    if (!(-rank <= axis && axis < rank))
        throw Error(ErrorKind::attribute, "attribute 'axis' is " +
                                              (axis_text ? *axis_text : detail::str(axis)) +
                                              "; expected an int in [" + detail::str(-rank) +
                                              ", " + detail::str(rank - 1) + "]");
    axis = ((axis % rank) + rank) % rank;
    std::string what = "input shape " + detail::list_text(shape) + ": the element count overflows int64";
    size_t n = shape.size();
    IndexLayout layout{};
    int64_t planes = detail::checked_product(shape, 0, 2, ErrorKind::shape, what);
    int64_t choices[4] = {planes ? planes : 1, shape[1] ? shape[1] : 1, 1, 1};
    layout.plane_modulus = choices[axis < 2 ? axis : 2];
    layout.offset_modulus = detail::checked_product(shape, size_t(axis > 2 ? axis : 2), n,
                                                    ErrorKind::shape, what);
    layout.largest_index = detail::checked_product(shape, size_t(axis), n, ErrorKind::shape, what) - 1;
    return layout;
}

// Refuse int32 indices when the largest index does not fit.
inline void check_index_range(bool int32_indices, int64_t largest_index) {
    if (int32_indices && largest_index > int64_t(std::numeric_limits<int32_t>::max()))
        throw Error(ErrorKind::attribute,
                    "attribute 'index_element_type' is int32, too small for index " +
                        detail::str(largest_index) + " of this input; use i64");
}

// ONNX storage_order=1: remap flat row-major indices, in place, to column-major positions
// within each spatial plane: (n*C + c)*P + ravel_multi_index(coords, order='F').
inline void to_column_major(int64_t* indices, std::ptrdiff_t n,
                            const std::vector<int64_t>& spatial) {
    int64_t plane = detail::checked_product(spatial, 0, spatial.size(), ErrorKind::shape,
                                            "spatial shape " + detail::list_text(spatial) +
                                                ": the plane size overflows int64");
    if (plane == 0) return;
    size_t k = spatial.size();
    for (std::ptrdiff_t e = 0; e < n; ++e) {
        int64_t index = indices[e];
        int64_t base = detail::floor_div(index, plane);
        int64_t within = index - base * plane;
        int64_t result = 0, column_stride = 1;
        std::vector<int64_t> coords(k);
        for (size_t i = k; i-- > 0;) {
            coords[i] = within % spatial[i];
            within /= spatial[i];
        }
        for (size_t i = 0; i < k; ++i) {
            result += coords[i] * column_stride;
            column_stride *= spatial[i];
        }
        indices[e] = base * plane + result;
    }
}

// ------------------------------------------------------------------------------------------
// lowest values: what a max window without input elements gives
// ------------------------------------------------------------------------------------------

enum class StorageType { f32, f64, f16, bf16, i8, u8, i32, i64 };

// The storage type's lowest finite value (bfloat16: -(2 - 2**-7) * 2**127).
inline double lowest_value(StorageType type) {
    switch (type) {
        case StorageType::f32: return double(std::numeric_limits<float>::lowest());
        case StorageType::f64: return std::numeric_limits<double>::lowest();
        case StorageType::f16: return -65504.0;
        case StorageType::bf16: return -3.3895313892515355e38;
        case StorageType::i8: return double(std::numeric_limits<int8_t>::lowest());
        case StorageType::u8: return 0.0;
        case StorageType::i32: return double(std::numeric_limits<int32_t>::lowest());
        case StorageType::i64: return double(std::numeric_limits<int64_t>::lowest());
    }
    return 0.0;
}

// Storage type names as numpy spells them (float32, float64, float16, bfloat16, int8, uint8,
// int32, int64).
inline StorageType parse_storage_type(const std::string& name) {
    static const char* names[] = {"float32", "float64", "float16", "bfloat16",
                                  "int8", "uint8", "int32", "int64"};
    for (int i = 0; i < 8; ++i)
        if (name == names[i]) return static_cast<StorageType>(i);
    throw Error(ErrorKind::argument, "storage type " + detail::py_repr(name) + " is not supported");
}

template <class S>
inline double lowest_value() {
    return double(std::numeric_limits<S>::lowest());
}

}  // namespace OVPOOL_CORE_ISA
}  // namespace core
}  // namespace ovpool

#endif
