// The op versions the native library takes over, and the words their attributes take.
// Generated from ovpool/_opschema.py and ovpool/_vocabulary.py by
// `python -m ovpool.native.schema`: edit those, not this file.
#pragma once

namespace ovpool {
namespace native {
namespace schema {

struct NativeVersion {
    const char* name;
    const char* opset;
    int version;
    bool dilations;   // has the dilations attribute
    int roundings;    // knows the first `roundings` of ROUNDING_TYPES
    int outputs;      // 2: values and indices
};

inline constexpr NativeVersion NATIVE_VERSIONS[] = {
    {"AvgPool", "opset1", 1, false, 2, 1},
    {"AvgPool", "opset14", 14, false, 3, 1},
    {"AvgPool", "opset16", 16, true, 3, 1},
    {"MaxPool", "opset1", 1, false, 2, 1},
    {"MaxPool", "opset8", 8, true, 2, 2},
    {"MaxPool", "opset14", 14, true, 3, 2},
    {"AdaptiveAvgPool", "opset8", 8, false, 0, 1},
    {"AdaptiveMaxPool", "opset8", 8, false, 0, 2},
};

inline constexpr const char* ROUNDING_TYPES[] = {"floor", "ceil", "ceil_torch"};
inline constexpr const char* IR_AUTO_PADS[] = {"explicit", "same_upper", "same_lower", "valid", "notset"};
inline constexpr const char* INDEX_TYPES[] = {"i32", "i64"};

// The ai.onnx opset whose rules the Onnx* ops carry, and the element types (numpy names)
// its operators accept.
inline constexpr int ONNX_OPSET = 22;
inline constexpr const char* ONNX_AVERAGE_POOL_DTYPES[] = {"bfloat16", "float16", "float32", "float64"};
inline constexpr const char* ONNX_MAX_POOL_DTYPES[] = {"bfloat16", "float16", "float32", "float64", "int8", "uint8"};

}  // namespace schema
}  // namespace native
}  // namespace ovpool
