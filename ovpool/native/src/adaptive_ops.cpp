// AdaptiveAvgPool and AdaptiveMaxPool of the "ovpool" opset (AdaptiveAvgPool-8 /
// AdaptiveMaxPool-8): input 1 holds the output size of each spatial axis.
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

// The plan for this data shape and these sizes, cached under (shape, sizes).
template <class Lookup, class Store>
std::shared_ptr<const Plan> adaptive(const ov::TensorVector& inputs, Lookup lookup, Store store,
                                     bool with_indices, bool int32) {
    const Dims shape = tensor_dims(inputs[0]);
    const Dims sizes = sizes_of(inputs[1]);
    Dims key = shape;
    key.push_back(-1);
    key.insert(key.end(), sizes.begin(), sizes.end());
    auto plan = lookup(key);
    if (!plan) {
        Plan fresh = adaptive_plan(shape, sizes);
        if (with_indices) {
            const IndexPlan layout = adaptive_index_plan(shape, int32);
            fresh.plane_modulus = layout.plane_modulus;
            fresh.offset_modulus = layout.offset_modulus;
        }
        plan = std::make_shared<const Plan>(std::move(fresh));
        store(key, plan);
    }
    return plan;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
AdaptiveAvgPool::AdaptiveAvgPool(const ov::Output<ov::Node>& x, const ov::Output<ov::Node>& output_size,
                                 const Origin* origin)
    : PoolingBase({x, output_size}) {
    m_reading = false;
    set_origin(origin);
    constructor_validate_and_infer_types();
}

bool AdaptiveAvgPool::visit_attributes(ov::AttributeVisitor&) {
    m_reading = false;
    return true;
}

void AdaptiveAvgPool::validate_and_infer_types() {
    validate(1, [&] {
        check_element_type(get_input_element_type(0));
        set_outputs({adaptive_shape(*this)}, {get_input_element_type(0)});
    });
}

std::shared_ptr<ov::Node> AdaptiveAvgPool::clone_with_new_inputs(const ov::OutputVector& inputs) const {
    check_new_args_count(this, inputs);
    auto clone = std::make_shared<AdaptiveAvgPool>();
    return finish_clone(clone, inputs);
}

bool AdaptiveAvgPool::evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
    try {
        const Storage storage = storage_of(inputs[0].get_element_type());
        const auto plan = adaptive(
            inputs, [this](const Dims& k) { return cached_plan(k); },
            [this](const Dims& k, std::shared_ptr<const Plan> p) { store_plan(k, std::move(p)); }, false, false);
        shape_output(outputs[0], plan->out_shape);
        run_avg(*plan, storage, inputs[0].data(), outputs[0].data());
    } catch (...) {
        rethrow();
    }
    return true;
}

// ---------------------------------------------------------------------------------------------
AdaptiveMaxPool::AdaptiveMaxPool(const ov::Output<ov::Node>& x, const ov::Output<ov::Node>& output_size,
                                 const std::string& index_element_type, const Origin* origin)
    : PoolingBase({x, output_size}),
      m_index_element_type(index_element_type) {
    m_reading = false;
    set_origin(origin);
    constructor_validate_and_infer_types();
}

bool AdaptiveMaxPool::visit_attributes(ov::AttributeVisitor& visitor) {
    visitor.on_attribute("index_element_type", m_index_element_type);
    m_reading = false;
    return true;
}

void AdaptiveMaxPool::validate_and_infer_types() {
    validate(2, [&] {
        check_element_type(get_input_element_type(0));
        const auto indices = index_type(m_index_element_type);
        const auto shape = adaptive_shape(*this);
        set_outputs({shape, shape}, {get_input_element_type(0), indices});
    });
}

std::shared_ptr<ov::Node> AdaptiveMaxPool::clone_with_new_inputs(const ov::OutputVector& inputs) const {
    check_new_args_count(this, inputs);
    auto clone = std::make_shared<AdaptiveMaxPool>();
    clone->m_index_element_type = m_index_element_type;
    return finish_clone(clone, inputs);
}

bool AdaptiveMaxPool::evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const {
    try {
        const Storage storage = storage_of(inputs[0].get_element_type());
        const bool with_indices = outputs.size() > 1 && output_used(1);
        const bool int32 = index_type(m_index_element_type) == ov::element::i32;
        const auto plan = adaptive(
            inputs, [this](const Dims& k) { return cached_plan(k); },
            [this](const Dims& k, std::shared_ptr<const Plan> p) { store_plan(k, std::move(p)); }, with_indices,
            int32);
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
        run_max(*plan, storage, inputs[0].data(), outputs[0].data(), index64, index32);
    } catch (...) {
        rethrow();
    }
    return true;
}

}  // namespace native
}  // namespace ovpool
