// OnnxAveragePool and OnnxMaxPool of the "ovpool" opset: an ONNX AveragePool / MaxPool node's
// attributes (names, spelling and defaults of the operator spec) with ONNX's semantics, which
// OpenVINO's own ops cannot express exactly (count_include_pad with windows past the padding,
// storage_order indices, SAME padding with ceil_mode). The rules are those of AveragePool-22 /
// MaxPool-22, as in ovpool/ops/onnx_pooling.py.
#include <string>

#include "op_schema.hpp"
#include "ops.hpp"

namespace ovpool {
namespace native {

namespace {

// Refuses an element type ONNX's `op` does not accept at schema::ONNX_OPSET (`accepted`: the
// numpy names of ovpool.onnx.VERSIONS, from op_schema.hpp), with the Python side's message.
template <std::size_t N>
void check_onnx_type(const char* op, const ov::element::Type& type, const char* const (&accepted)[N]) {
    if (type.is_dynamic())
        return;
    using T = ov::element::Type_t;
    static const std::pair<T, const char*> names[] = {
        {T::f32, "float32"}, {T::f16, "float16"}, {T::bf16, "bfloat16"}, {T::f64, "float64"},
        {T::i8, "int8"},     {T::u8, "uint8"},    {T::i32, "int32"},     {T::i64, "int64"}};
    std::string name = type.get_type_name();
    for (const auto& entry : names)
        if (entry.first == ov::element::Type_t(type))
            name = entry.second;
    std::string list;
    for (const char* dtype : accepted) {
        if (name == dtype)
            return;
        list += (list.empty() ? "" : ", ") + std::string(dtype);
    }
    const std::string opset = std::to_string(schema::ONNX_OPSET);
    throw std::invalid_argument(std::string(op) + "-" + opset + " (opset " + opset +
                                ") does not accept input dtype " + name + "; it accepts " + list);
}

ov::PartialShape onnx_pooled(const ov::PartialShape& input, const OnnxSpec& window, const char* op) {
    if (input.rank().is_dynamic())
        return ov::PartialShape::dynamic();
    const Dims dims = known_dims(input);
    return with_spatial(input, onnx_output(window, op, Dims(dims.begin() + 2, dims.end())));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
namespace {
constexpr const char* AVG = "AveragePool";
constexpr const char* MAX = "MaxPool";
}  // namespace

void OnnxAveragePool::visit(ov::AttributeVisitor& visitor) {
    auto& w = m_attributes.window;
    visitor.on_attribute("auto_pad", w.auto_pad);
    visitor.on_attribute("ceil_mode", m_attributes.ceil_mode);
    visitor.on_attribute("count_include_pad", m_attributes.count_include_pad);
    visit_ints(visitor, "dilations", w.dilations, m_reading);
    visit_ints(visitor, "kernel_shape", w.kernel_shape, m_reading);
    visit_ints(visitor, "pads", w.pads, m_reading);
    visit_ints(visitor, "strides", w.strides, m_reading);
}

void OnnxAveragePool::infer_types() {
    m_attributes.window.ceil_mode = onnx_flag("ceil_mode", m_attributes.ceil_mode);
    onnx_flag("count_include_pad", m_attributes.count_include_pad);
    check_onnx_type(AVG, get_input_element_type(0), schema::ONNX_AVERAGE_POOL_DTYPES);
    check_onnx(m_attributes.window, AVG);
    set_outputs({onnx_pooled(get_input_partial_shape(0), m_attributes.window, AVG)}, {get_input_element_type(0)});
}

void OnnxAveragePool::check_input(const ov::Tensor& x) const {
    check_onnx_type(AVG, x.get_element_type(), schema::ONNX_AVERAGE_POOL_DTYPES);
}

Plan OnnxAveragePool::build_plan(const Dims& shape, bool, bool) const {
    const AvgRule rule = m_attributes.count_include_pad ? AvgRule::include_padded : AvgRule::exclude_pad;
    return onnx_plan(m_attributes.window, AVG, shape, &rule);
}

// ---------------------------------------------------------------------------------------------
void OnnxMaxPool::visit(ov::AttributeVisitor& visitor) {
    auto& w = m_attributes.window;
    visitor.on_attribute("auto_pad", w.auto_pad);
    visitor.on_attribute("ceil_mode", m_attributes.ceil_mode);
    visit_ints(visitor, "dilations", w.dilations, m_reading);
    visit_ints(visitor, "kernel_shape", w.kernel_shape, m_reading);
    visit_ints(visitor, "pads", w.pads, m_reading);
    visitor.on_attribute("storage_order", m_attributes.storage_order);
    visit_ints(visitor, "strides", w.strides, m_reading);
}

void OnnxMaxPool::infer_types() {
    m_attributes.window.ceil_mode = onnx_flag("ceil_mode", m_attributes.ceil_mode);
    onnx_flag("storage_order", m_attributes.storage_order);
    check_onnx_type(MAX, get_input_element_type(0), schema::ONNX_MAX_POOL_DTYPES);
    check_onnx(m_attributes.window, MAX);
    const auto shape = onnx_pooled(get_input_partial_shape(0), m_attributes.window, MAX);
    set_outputs({shape, shape}, {get_input_element_type(0), ov::element::i64});
}

void OnnxMaxPool::check_input(const ov::Tensor& x) const {
    check_onnx_type(MAX, x.get_element_type(), schema::ONNX_MAX_POOL_DTYPES);
}

Plan OnnxMaxPool::build_plan(const Dims& shape, bool, bool) const {
    // ONNX indices are flat over the whole input (axis 0), always int64.
    Plan plan = onnx_plan(m_attributes.window, MAX, shape, nullptr);
    return with_index_layout(std::move(plan), index_plan(shape, 0, false));
}

void OnnxMaxPool::finish_indices(ov::Tensor& indices, const Dims& shape) const {
    if (m_attributes.storage_order == 1 && shape.size() > 3)
        column_major(indices.data<std::int64_t>(), indices.get_size(), Dims(shape.begin() + 2, shape.end()));
}

}  // namespace native
}  // namespace ovpool
