// AvgPool and MaxPool of the "ovpool" opset (AvgPool-16 / MaxPool-14 attributes and semantics).
#include "ops.hpp"

namespace ovpool {
namespace native {

namespace {

void visit_window(ov::AttributeVisitor& visitor, PoolSpec& w, bool reading, bool max_order) {
    // The order OpenVINO's own ops visit them, so save_model writes them in the same order.
    if (max_order) {
        visit_ints(visitor, "strides", w.strides, reading);
        visit_ints(visitor, "dilations", w.dilations, reading);
        visit_ints(visitor, "pads_begin", w.pads_begin, reading);
        visit_ints(visitor, "pads_end", w.pads_end, reading);
        visit_ints(visitor, "kernel", w.kernel, reading);
        visitor.on_attribute("rounding_type", w.rounding_type);
        visitor.on_attribute("auto_pad", w.auto_pad);
    } else {
        visit_ints(visitor, "kernel", w.kernel, reading);
        visit_ints(visitor, "strides", w.strides, reading);
        visit_ints(visitor, "pads_begin", w.pads_begin, reading);
        visit_ints(visitor, "pads_end", w.pads_end, reading);
    }
}

ov::PartialShape pooled(const ov::PartialShape& input, const PoolSpec& window) {
    if (input.rank().is_dynamic())
        return ov::PartialShape::dynamic();
    const Dims dims = known_dims(input);
    return with_spatial(input, pool_output(window, Dims(dims.begin() + 2, dims.end())));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
AvgPool::AvgPool(const ov::Output<ov::Node>& x, const AvgAttributes& attributes, const Origin* origin)
    : PoolingBase({x}), m_attributes(attributes) {
    m_reading = false;
    set_origin(origin);
    constructor_validate_and_infer_types();
}

bool AvgPool::visit_attributes(ov::AttributeVisitor& visitor) {
    auto& w = m_attributes.window;
    visit_window(visitor, w, m_reading, false);
    visitor.on_attribute("exclude-pad", m_attributes.exclude_pad);
    visitor.on_attribute("auto_pad", w.auto_pad);
    visitor.on_attribute("rounding_type", w.rounding_type);
    visit_ints(visitor, "dilations", w.dilations, m_reading);
    m_reading = false;
    return true;
}

void AvgPool::validate_and_infer_types() {
    validate(1, [&] {
        check_element_type(get_input_element_type(0));
        check_pool(m_attributes.window, m_attributes.exclude_pad);
        set_outputs({pooled(get_input_partial_shape(0), m_attributes.window)}, {get_input_element_type(0)});
    });
}

std::shared_ptr<ov::Node> AvgPool::clone_with_new_inputs(const ov::OutputVector& inputs) const {
    check_new_args_count(this, inputs);
    auto clone = std::make_shared<AvgPool>();
    clone->m_attributes = m_attributes;
    return finish_clone(clone, inputs);
}

bool AvgPool::evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
    try {
        const auto& x = inputs[0];
        const Storage storage = storage_of(x.get_element_type());
        const Dims shape = tensor_dims(x);
        auto plan = cached_plan(shape);
        if (!plan) {
            const AvgRule rule = m_attributes.exclude_pad ? AvgRule::exclude_pad : AvgRule::openvino_include_pad;
            plan = std::make_shared<const Plan>(pool_plan(m_attributes.window, shape, &rule));
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
MaxPool::MaxPool(const ov::Output<ov::Node>& x, const MaxAttributes& attributes, const Origin* origin)
    : PoolingBase({x}), m_attributes(attributes) {
    m_reading = false;
    set_origin(origin);
    constructor_validate_and_infer_types();
}

bool MaxPool::visit_attributes(ov::AttributeVisitor& visitor) {
    visit_window(visitor, m_attributes.window, m_reading, true);
    visitor.on_attribute("index_element_type", m_attributes.index_element_type);
    visitor.on_attribute("axis", m_attributes.axis);
    m_reading = false;
    return true;
}

void MaxPool::validate_and_infer_types() {
    validate(2, [&] {
        check_element_type(get_input_element_type(0));
        check_pool(m_attributes.window, false);
        const auto indices = index_type(m_attributes.index_element_type);
        const auto& input = get_input_partial_shape(0);
        const auto shape = pooled(input, m_attributes.window);
        if (input.rank().is_static())
            check_axis(m_attributes.axis, input.rank().get_length());
        set_outputs({shape, shape}, {get_input_element_type(0), indices});
    });
}

std::shared_ptr<ov::Node> MaxPool::clone_with_new_inputs(const ov::OutputVector& inputs) const {
    check_new_args_count(this, inputs);
    auto clone = std::make_shared<MaxPool>();
    clone->m_attributes = m_attributes;
    return finish_clone(clone, inputs);
}

bool MaxPool::evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
    try {
        const auto& x = inputs[0];
        const Storage storage = storage_of(x.get_element_type());
        // Indices nothing reads are not computed (the plugin may still hand over a tensor).
        const bool with_indices = outputs.size() > 1 && output_used(1);
        const bool int32 = index_type(m_attributes.index_element_type) == ov::element::i32;
        const Dims shape = tensor_dims(x);
        auto plan = cached_plan(shape);
        if (!plan) {
            Plan fresh = pool_plan(m_attributes.window, shape, nullptr);
            if (with_indices) {
                const IndexPlan layout = index_plan(shape, m_attributes.axis, int32);
                fresh.plane_modulus = layout.plane_modulus;
                fresh.offset_modulus = layout.offset_modulus;
            }
            plan = std::make_shared<const Plan>(std::move(fresh));
            store_plan(shape, plan);
        }
        for (auto& tensor : outputs)
            shape_output(tensor, plan->out_shape);
        std::int64_t* index64 = nullptr;
        std::int32_t* index32 = nullptr;
        if (with_indices) {
            if (int32)
                index32 = outputs[1].data<std::int32_t>();
            else
                index64 = outputs[1].data<std::int64_t>();
        }
        run_max(*plan, storage, x.data(), outputs[0].data(), index64, index32);
    } catch (...) {
        rethrow();
    }
    return true;
}

}  // namespace native
}  // namespace ovpool
