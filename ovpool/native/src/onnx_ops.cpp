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

OnnxAveragePool::OnnxAveragePool(const ov::Output<ov::Node>& x, const OnnxAvgAttributes& attributes,
                                 const std::string& name)
    : PoolingBase({x}), m_attributes(attributes) {
    m_reading = false;
    if (!name.empty())
        set_friendly_name(name);
    constructor_validate_and_infer_types();
}

bool OnnxAveragePool::visit_attributes(ov::AttributeVisitor& visitor) {
    auto& w = m_attributes.window;
    visitor.on_attribute("auto_pad", w.auto_pad);
    visitor.on_attribute("ceil_mode", m_attributes.ceil_mode);
    visitor.on_attribute("count_include_pad", m_attributes.count_include_pad);
    visit_ints(visitor, "dilations", w.dilations, m_reading);
    visit_ints(visitor, "kernel_shape", w.kernel_shape, m_reading);
    visit_ints(visitor, "pads", w.pads, m_reading);
    visit_ints(visitor, "strides", w.strides, m_reading);
    m_reading = false;
    return true;
}

void OnnxAveragePool::validate_and_infer_types() {
    validate(1, [&] {
        m_attributes.window.ceil_mode = onnx_flag("ceil_mode", m_attributes.ceil_mode);
        onnx_flag("count_include_pad", m_attributes.count_include_pad);
        check_onnx_type(AVG, get_input_element_type(0), schema::ONNX_AVERAGE_POOL_DTYPES);
        check_onnx(m_attributes.window, AVG);
        set_outputs({onnx_pooled(get_input_partial_shape(0), m_attributes.window, AVG)}, {get_input_element_type(0)});
    });
}

std::shared_ptr<ov::Node> OnnxAveragePool::clone_with_new_inputs(const ov::OutputVector& inputs) const {
    check_new_args_count(this, inputs);
    auto clone = std::make_shared<OnnxAveragePool>();
    clone->m_attributes = m_attributes;
    return finish_clone(clone, inputs);
}

bool OnnxAveragePool::evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
    try {
        const auto& x = inputs[0];
        check_onnx_type(AVG, x.get_element_type(), schema::ONNX_AVERAGE_POOL_DTYPES);
        const Storage storage = storage_of(x.get_element_type());
        const Dims shape = tensor_dims(x);
        auto plan = cached_plan(shape);
        if (!plan) {
            const AvgRule rule = m_attributes.count_include_pad ? AvgRule::include_padded : AvgRule::exclude_pad;
            plan = std::make_shared<const Plan>(onnx_plan(m_attributes.window, AVG, shape, &rule));
            store_plan(shape, plan);
        }
        shape_output(outputs[0], plan->out_shape);
        run_avg(*plan, storage, x.data(), outputs[0].data());
    } catch (...) {
        rethrow();
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
OnnxMaxPool::OnnxMaxPool(const ov::Output<ov::Node>& x, const OnnxMaxAttributes& attributes,
                         const std::string& name)
    : PoolingBase({x}), m_attributes(attributes) {
    m_reading = false;
    if (!name.empty())
        set_friendly_name(name);
    constructor_validate_and_infer_types();
}

bool OnnxMaxPool::visit_attributes(ov::AttributeVisitor& visitor) {
    auto& w = m_attributes.window;
    visitor.on_attribute("auto_pad", w.auto_pad);
    visitor.on_attribute("ceil_mode", m_attributes.ceil_mode);
    visit_ints(visitor, "dilations", w.dilations, m_reading);
    visit_ints(visitor, "kernel_shape", w.kernel_shape, m_reading);
    visit_ints(visitor, "pads", w.pads, m_reading);
    visitor.on_attribute("storage_order", m_attributes.storage_order);
    visit_ints(visitor, "strides", w.strides, m_reading);
    m_reading = false;
    return true;
}

void OnnxMaxPool::validate_and_infer_types() {
    validate(2, [&] {
        m_attributes.window.ceil_mode = onnx_flag("ceil_mode", m_attributes.ceil_mode);
        onnx_flag("storage_order", m_attributes.storage_order);
        check_onnx_type(MAX, get_input_element_type(0), schema::ONNX_MAX_POOL_DTYPES);
        check_onnx(m_attributes.window, MAX);
        const auto shape = onnx_pooled(get_input_partial_shape(0), m_attributes.window, MAX);
        set_outputs({shape, shape}, {get_input_element_type(0), ov::element::i64});
    });
}

std::shared_ptr<ov::Node> OnnxMaxPool::clone_with_new_inputs(const ov::OutputVector& inputs) const {
    check_new_args_count(this, inputs);
    auto clone = std::make_shared<OnnxMaxPool>();
    clone->m_attributes = m_attributes;
    return finish_clone(clone, inputs);
}

bool OnnxMaxPool::evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
    try {
        const auto& x = inputs[0];
        check_onnx_type(MAX, x.get_element_type(), schema::ONNX_MAX_POOL_DTYPES);
        const Storage storage = storage_of(x.get_element_type());
        const bool with_indices = outputs.size() > 1 && output_used(1);
        const Dims shape = tensor_dims(x);
        auto plan = cached_plan(shape);
        if (!plan) {
            Plan fresh = onnx_plan(m_attributes.window, MAX, shape, nullptr);
            // ONNX indices are flat over the whole input (axis 0), always int64.
            const IndexPlan layout = index_plan(shape, 0, false);
            fresh.plane_modulus = layout.plane_modulus;
            fresh.offset_modulus = layout.offset_modulus;
            plan = std::make_shared<const Plan>(std::move(fresh));
            store_plan(shape, plan);
        }
        for (auto& tensor : outputs)
            shape_output(tensor, plan->out_shape);
        std::int64_t* indices = with_indices ? outputs[1].data<std::int64_t>() : nullptr;
        run_max(*plan, storage, x.data(), outputs[0].data(), indices, nullptr);
        if (indices && m_attributes.storage_order == 1 && shape.size() > 3)
            column_major(indices, outputs[1].get_size(), Dims(shape.begin() + 2, shape.end()));
    } catch (...) {
        rethrow();
    }
    return true;
}

}  // namespace native
}  // namespace ovpool
