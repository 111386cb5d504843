// AdaptiveAvgPool and AdaptiveMaxPool of the "ovpool" opset (AdaptiveAvgPool-8 /
// AdaptiveMaxPool-8): input 1 holds the output size of each spatial axis.
#include <algorithm>

#include "openvino/op/constant.hpp"
#include "ops.hpp"

namespace ovpool {
namespace native {

namespace {

// The output shape: (N, C) and the output sizes when input 1 is a Constant; otherwise only
// the rank (from the data, or from the length of input 1) is known.
ov::PartialShape adaptive_shape(const ov::Node& node) {
    const auto type = node.get_input_element_type(1);
    if (type.is_static() && type != ov::element::i32 && type != ov::element::i64)
        throw std::invalid_argument("the output size (input 1) has element type " + type.get_type_name() +
                                    "; expected i32 or i64");
    const auto& input = node.get_input_partial_shape(0);
    const auto constant =
        ov::as_type_ptr<ov::op::v0::Constant>(node.input_value(1).get_node_shared_ptr());
    if (input.rank().is_dynamic()) {
        const auto& sizes = node.get_input_partial_shape(1);
        if (sizes.rank().is_static() && sizes.size() == 1 && sizes[0].is_static())
            return ov::PartialShape::dynamic(2 + sizes[0].get_length());
        return ov::PartialShape::dynamic();
    }
    const Dims dims = known_dims(input);
    if (!constant)
        return with_spatial(input, Dims(dims.size() - 2, -1));
    const auto sizes = constant->cast_vector<std::int64_t>();
    check_adaptive_sizes(sizes, dims.size() - 2);
    return with_spatial(input, sizes);
}

Dims sizes_of(const ov::Tensor& tensor) {
    const std::size_t n = tensor.get_size();
    Dims sizes(n);
    if (tensor.get_element_type() == ov::element::i32) {
        const auto* data = tensor.data<const std::int32_t>();
        for (std::size_t i = 0; i < n; ++i)
            sizes[i] = data[i];
    } else if (tensor.get_element_type() == ov::element::i64) {
        const auto* data = tensor.data<const std::int64_t>();
        for (std::size_t i = 0; i < n; ++i)
            sizes[i] = data[i];
    } else {
        throw std::invalid_argument("the output size (input 1) has element type " +
                                    tensor.get_element_type().get_type_name() + "; expected i32 or i64");
    }
    return sizes;
}

// The plan cache's key: the data shape, -1, the output sizes.
Dims adaptive_key(const ov::TensorVector& inputs) {
    Dims key = tensor_dims(inputs[0]);
    const Dims sizes = sizes_of(inputs[1]);
    key.push_back(-1);
    key.insert(key.end(), sizes.begin(), sizes.end());
    return key;
}

// The plan for an adaptive_key; with the index layout when `with_indices`.
Plan adaptive(const Dims& key, bool with_indices, bool int32) {
    const auto split = std::find(key.begin(), key.end(), -1);
    const Dims shape(key.begin(), split);
    Plan plan = adaptive_plan(shape, Dims(split + 1, key.end()));
    if (!with_indices)
        return plan;
    return with_index_layout(std::move(plan), adaptive_index_plan(shape, int32));
}

}  // namespace

// ---------------------------------------------------------------------------------------------
void AdaptiveAvgPool::infer_types() {
    check_element_type(get_input_element_type(0));
    set_outputs({adaptive_shape(*this)}, {get_input_element_type(0)});
}

Dims AdaptiveAvgPool::plan_key(const ov::TensorVector& inputs) const {
    return adaptive_key(inputs);
}

Plan AdaptiveAvgPool::build_plan(const Dims& key, bool, bool) const {
    return adaptive(key, false, false);
}

// ---------------------------------------------------------------------------------------------
void AdaptiveMaxPool::visit(ov::AttributeVisitor& visitor) {
    visitor.on_attribute("index_element_type", m_attributes.index_element_type);
}

void AdaptiveMaxPool::infer_types() {
    check_element_type(get_input_element_type(0));
    const auto indices = index_type(m_attributes.index_element_type);
    const auto shape = adaptive_shape(*this);
    set_outputs({shape, shape}, {get_input_element_type(0), indices});
}

bool AdaptiveMaxPool::int32_indices() const {
    return index_type(m_attributes.index_element_type) == ov::element::i32;
}

Dims AdaptiveMaxPool::plan_key(const ov::TensorVector& inputs) const {
    return adaptive_key(inputs);
}

Plan AdaptiveMaxPool::build_plan(const Dims& key, bool with_indices, bool int32) const {
    return adaptive(key, with_indices, int32);
}

}  // namespace native
}  // namespace ovpool
