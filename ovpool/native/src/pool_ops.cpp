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
void AvgPool::visit(ov::AttributeVisitor& visitor) {
    auto& w = m_attributes.window;
    visit_window(visitor, w, m_reading, false);
    visitor.on_attribute("exclude-pad", m_attributes.exclude_pad);
    visitor.on_attribute("auto_pad", w.auto_pad);
    visitor.on_attribute("rounding_type", w.rounding_type);
    visit_ints(visitor, "dilations", w.dilations, m_reading);
}

void AvgPool::infer_types() {
    check_element_type(get_input_element_type(0));
    check_pool(m_attributes.window, m_attributes.exclude_pad);
    set_outputs({pooled(get_input_partial_shape(0), m_attributes.window)}, {get_input_element_type(0)});
}

Plan AvgPool::build_plan(const Dims& shape, bool, bool) const {
    const AvgRule rule = m_attributes.exclude_pad ? AvgRule::exclude_pad : AvgRule::openvino_include_pad;
    return pool_plan(m_attributes.window, shape, &rule);
}

// ---------------------------------------------------------------------------------------------
void MaxPool::visit(ov::AttributeVisitor& visitor) {
    visit_window(visitor, m_attributes.window, m_reading, true);
    visitor.on_attribute("index_element_type", m_attributes.index_element_type);
    visitor.on_attribute("axis", m_attributes.axis);
}

void MaxPool::infer_types() {
    check_element_type(get_input_element_type(0));
    check_pool(m_attributes.window, false);
    const auto indices = index_type(m_attributes.index_element_type);
    const auto& input = get_input_partial_shape(0);
    const auto shape = pooled(input, m_attributes.window);
    if (input.rank().is_static())
        check_axis(m_attributes.axis, input.rank().get_length());
    set_outputs({shape, shape}, {get_input_element_type(0), indices});
}

bool MaxPool::int32_indices() const {
    return index_type(m_attributes.index_element_type) == ov::element::i32;
}

Plan MaxPool::build_plan(const Dims& shape, bool with_indices, bool int32) const {
    Plan plan = pool_plan(m_attributes.window, shape, nullptr);
    if (!with_indices)
        return plan;
    return with_index_layout(std::move(plan), index_plan(shape, m_attributes.axis, int32));
}

}  // namespace native
}  // namespace ovpool
