// The extension's view of ovpool's rules (core/rules.hpp): plain structs in, validated window
// plans out. rules_bridge.cpp is the one file calling the core's rule functions; every check
// and number comes from there, and errors are the core's ovpool::core::Error (a
// std::runtime_error) with the core's message, which the ops prefix with the layer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels.hpp"

namespace ovpool {
namespace native {

// An int-list attribute; `given` is false when the IR does not have it.
struct IntList {
    bool given = false;
    std::vector<std::int64_t> values;
};

// AvgPool-16 / MaxPool-14 window attributes as read from the IR.
struct PoolSpec {
    IntList kernel, strides, pads_begin, pads_end, dilations;
    std::string rounding_type = "floor";
    std::string auto_pad = "explicit";
};

// ONNX AveragePool-22 / MaxPool-22 window attributes (ceil_mode already checked to be 0 or 1).
struct OnnxSpec {
    IntList kernel_shape, strides, pads, dilations;
    std::string auto_pad = "NOTSET";
    bool ceil_mode = false;
};

enum class AvgRule { exclude_pad, openvino_include_pad, include_padded };

// Kernel tables, divisors and shapes of one pooling of one input shape.
struct Plan {
    std::vector<std::ptrdiff_t> packed;
    std::vector<std::int64_t> divisor;
    std::vector<double> divisor_real;
    // The divisors' float32 forms and whether all are below 2^24 (core/rules.hpp's WindowPlan).
    std::vector<float> real32, divisor32, inverse32;
    bool small_divisors = false;
    std::vector<std::int64_t> out_shape;  // N, C, spatial...
    std::int64_t planes = 0;              // N * C
    std::int64_t in_elements = 0;
    std::int64_t in_plane = 0;
    // Max pooling with indices: their layout (see index_plan).
    std::int64_t plane_modulus = 1, offset_modulus = 1;
};

// Unknown lengths are -1 in and out.
using Dims = std::vector<std::int64_t>;

// Shape-independent checks: enum spellings and, with exclude_pad, explicit pads that reach the
// dilated kernel (OpenVINO refuses those when the layer is built).
void check_pool(const PoolSpec& spec, bool exclude_pad);
// Output spatial lengths for these spatial lengths (-1: unknown, stays unknown).
Dims pool_output(const PoolSpec& spec, const Dims& spatial);
Plan pool_plan(const PoolSpec& spec, const Dims& shape, const AvgRule* rule /* null: max */);

// `op` is "AveragePool" or "MaxPool" (messages name the operator version, e.g. "MaxPool-22").
void check_onnx(const OnnxSpec& spec, const char* op);
Dims onnx_output(const OnnxSpec& spec, const char* op, const Dims& spatial);
Plan onnx_plan(const OnnxSpec& spec, const char* op, const Dims& shape, const AvgRule* rule);

// Adaptive pooling: output sizes checked against the spatial rank.
void check_adaptive_sizes(const Dims& sizes, std::size_t spatial_rank);
Plan adaptive_plan(const Dims& shape, const Dims& sizes);

// Index layout of max pooling with indices flat from `axis` on (checks the axis and that the
// largest index fits int32 when `int32_indices`).
struct IndexPlan {
    std::int64_t plane_modulus, offset_modulus;
};
void check_axis(std::int64_t axis, std::int64_t rank);
IndexPlan index_plan(const Dims& shape, std::int64_t axis, bool int32_indices);
// Adaptive max pooling: indices within each plane.
IndexPlan adaptive_index_plan(const Dims& shape, bool int32_indices);

// ONNX storage_order=1: flat row-major indices -> column-major within each spatial plane.
void column_major(std::int64_t* indices, std::size_t count, const Dims& spatial);

// The value of a max-pooling window holding no input element, per storage type.
double empty_max_value(Storage storage);

// An (N, C, spatial...) shape (-1: unknown, taken as 1), checked with the core's messages;
// `shown` spells the shape in them.
void check_shape(const Dims& dims, const std::string& shown);

}  // namespace native
}  // namespace ovpool
