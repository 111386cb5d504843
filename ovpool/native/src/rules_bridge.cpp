// The one file calling ovpool's rules (core/rules.hpp): attribute values in, validated windows,
// kernel tables and divisors out. Nothing here decides a rule; it only fills the defaults the
// IR leaves out (an absent list is the attribute's default for every axis) and hands unknown
// lengths to the core's stand-ins (core::with_stand_ins).
#include "rules_bridge.hpp"

#include <cstdint>
#include <string>

#include "core/rules.hpp"
#include "op_schema.hpp"

namespace ovpool {
namespace native {

namespace core = ::ovpool::core;

namespace {

std::vector<std::int64_t> or_default(const IntList& list, std::size_t count, std::int64_t value) {
    return list.given ? list.values : std::vector<std::int64_t>(count, value);
}

core::PoolAttributes pool_attributes(const PoolSpec& spec, std::size_t rank) {
    if (!spec.kernel.given)
        throw core::Error(core::ErrorKind::attribute, "attribute 'kernel' is required");
    core::PoolAttributes a;
    a.kernel = spec.kernel.values;
    a.strides = or_default(spec.strides, rank, 1);
    a.pads_begin = or_default(spec.pads_begin, rank, 0);
    a.pads_end = or_default(spec.pads_end, rank, 0);
    a.dilations = or_default(spec.dilations, rank, 1);
    a.rounding = core::parse_rounding(spec.rounding_type);
    a.auto_pad = core::parse_auto_pad(spec.auto_pad);
    return a;
}

Dims outputs_of(const std::vector<core::AxisWindow>& windows, const Dims& spatial) {
    Dims out(spatial.size());
    for (std::size_t a = 0; a < spatial.size(); ++a)
        out[a] = spatial[a] < 0 ? -1 : windows[a].output;
    return out;
}

Plan to_plan(core::WindowPlan&& p, const Dims& shape) {
    Plan plan;
    plan.packed = std::move(p.packed);
    plan.divisor = std::move(p.divisor);
    plan.divisor_real = std::move(p.divisor_real);
    plan.real32 = std::move(p.real32);
    plan.divisor32 = std::move(p.divisor32);
    plan.inverse32 = std::move(p.inverse32);
    plan.small_divisors = p.small_divisors;
    plan.out_shape = {shape[0], shape[1]};
    plan.out_shape.insert(plan.out_shape.end(), p.output_spatial.begin(), p.output_spatial.end());
    plan.planes = shape[0] * shape[1];
    plan.in_plane = p.in_plane;
    plan.in_elements = plan.planes * p.in_plane;
    return plan;
}

core::DivisorRule divisor_rule(AvgRule rule) {
    switch (rule) {
    case AvgRule::exclude_pad: return core::DivisorRule::exclude_pad;
    case AvgRule::openvino_include_pad: return core::DivisorRule::openvino_include_pad;
    case AvgRule::include_padded: return core::DivisorRule::include_padded;
    }
    return core::DivisorRule::exclude_pad;
}

Dims spatial_of(const Dims& shape) { return Dims(shape.begin() + 2, shape.end()); }

// ONNX attributes of AveragePool-22 / MaxPool-22 for `rank` spatial axes; absent lists take
// the operator's defaults.
// "AveragePool-22": the operator version whose rules the Onnx* ops carry.
std::string onnx_version(const char* op) { return std::string(op) + "-" + std::to_string(schema::ONNX_OPSET); }

core::OnnxAttributes onnx_attributes(const OnnxSpec& spec, const char* op, std::size_t rank) {
    core::OnnxAttributes a;
    a.op = onnx_version(op);
    if (!spec.kernel_shape.given)
        throw core::Error(core::ErrorKind::attribute, a.op + ": attribute 'kernel_shape' is required");
    a.kernel_shape = spec.kernel_shape.values;
    a.strides = or_default(spec.strides, rank, 1);
    a.dilations = or_default(spec.dilations, rank, 1);
    a.pads = or_default(spec.pads, 2 * rank, 0);
    a.auto_pad = core::parse_onnx_auto_pad(a.op, spec.auto_pad);
    a.auto_pad_text = spec.auto_pad;
    a.ceil_mode = spec.ceil_mode;
    return a;
}

}  // namespace

void check_pool(const PoolSpec& spec, bool exclude_pad) {
    const auto attributes = pool_attributes(spec, spec.kernel.values.size());
    if (exclude_pad)
        core::check_exclude_pad_pads(attributes);
}

Dims pool_output(const PoolSpec& spec, const Dims& spatial) {
    const auto attributes = pool_attributes(spec, spatial.size());
    const auto windows =
        core::resolve_pool_axes(core::with_stand_ins(spatial, attributes.kernel, attributes.dilations), attributes);
    return outputs_of(windows, spatial);
}

Plan pool_plan(const PoolSpec& spec, const Dims& shape, const AvgRule* rule) {
    const auto attributes = pool_attributes(spec, shape.size() - 2);
    const auto windows = core::resolve_pool_axes(spatial_of(shape), attributes);
    core::DivisorRule core_rule{};
    if (rule)
        core_rule = divisor_rule(*rule);
    return to_plan(core::fixed_plan(windows, rule ? &core_rule : nullptr), shape);
}

void check_onnx(const OnnxSpec& spec, const char* op) {
    core::parse_onnx_auto_pad(onnx_version(op), spec.auto_pad);
}

Dims onnx_output(const OnnxSpec& spec, const char* op, const Dims& spatial) {
    const auto attributes = onnx_attributes(spec, op, spatial.size());
    const auto lengths = core::with_stand_ins(spatial, spec.kernel_shape.values, spec.dilations.values);
    return outputs_of(core::resolve_onnx_windows(lengths, attributes), spatial);
}

Plan onnx_plan(const OnnxSpec& spec, const char* op, const Dims& shape, const AvgRule* rule) {
    const auto windows = core::resolve_onnx_windows(spatial_of(shape), onnx_attributes(spec, op, shape.size() - 2));
    core::DivisorRule core_rule{};
    if (rule)
        core_rule = divisor_rule(*rule);
    return to_plan(core::fixed_plan(windows, rule ? &core_rule : nullptr), shape);
}

void check_adaptive_sizes(const Dims& sizes, std::size_t spatial_rank) {
    core::check_adaptive_output(sizes, spatial_rank);
}

Plan adaptive_plan(const Dims& shape, const Dims& sizes) {
    return to_plan(core::adaptive_plan(spatial_of(shape), sizes), shape);
}

void check_axis(std::int64_t axis, std::int64_t rank) {
    core::index_layout(std::vector<std::int64_t>(static_cast<std::size_t>(rank), 1), axis);
}

IndexPlan index_plan(const Dims& shape, std::int64_t axis, bool int32_indices) {
    const core::IndexLayout layout = core::index_layout(shape, axis);
    core::check_index_range(int32_indices, layout.largest_index);
    return {layout.plane_modulus, layout.offset_modulus};
}

IndexPlan adaptive_index_plan(const Dims& shape, bool int32_indices) {
    std::int64_t plane = 1;
    for (std::size_t a = 2; a < shape.size(); ++a)
        plane *= shape[a];
    core::check_index_range(int32_indices, plane - 1);
    return {1, plane};
}

void column_major(std::int64_t* indices, std::size_t count, const Dims& spatial) {
    core::to_column_major(indices, static_cast<std::ptrdiff_t>(count), spatial);
}

double empty_max_value(Storage storage) {
    switch (storage) {
    case Storage::f32: return core::lowest_value(core::StorageType::f32);
    case Storage::f16: return core::lowest_value(core::StorageType::f16);
    case Storage::bf16: return core::lowest_value(core::StorageType::bf16);
    case Storage::f64: return core::lowest_value(core::StorageType::f64);
    case Storage::i8: return core::lowest_value(core::StorageType::i8);
    case Storage::u8: return core::lowest_value(core::StorageType::u8);
    case Storage::i32: return core::lowest_value(core::StorageType::i32);
    case Storage::i64: return core::lowest_value(core::StorageType::i64);
    }
    return 0;
}

void check_shape(const Dims& dims, const std::string& shown) {
    Dims known(dims);
    for (auto& d : known)
        if (d < 0)
            d = 1;
    core::check_input_shape(known, false, &shown);
}

}  // namespace native
}  // namespace ovpool
