// The "ovpool" opset: OpenVINO operations running ovpool's kernels inside any OpenVINO process.
//
// AvgPool, MaxPool, AdaptiveAvgPool, AdaptiveMaxPool (attributes and semantics of AvgPool-16,
// MaxPool-14, AdaptiveAvgPool-8, AdaptiveMaxPool-8) and OnnxAveragePool, OnnxMaxPool (ONNX
// AveragePool-22 / MaxPool-22 attributes and semantics), all with version "ovpool", exactly as
// ovpool's Python bridge (ovpool/openvino.py) and its IR runtime name them, so an IR saved by
// either bridge loads in the other and in ovpool's runtime. Their type infos are not OpenVINO's
// own: the CPU plugin would take an op typed ("MaxPool", "opset8") for its own node.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "openvino/op/op.hpp"
#include "rules_bridge.hpp"

namespace ovpool {
namespace native {

extern const char* const OPSET;  // "ovpool"

// The exceptions the extension throws: ov::Exceptions (Python sees RuntimeError) whose message is
// the layer and the core's message, without the source location OPENVINO_THROW adds.
class ExtensionError : public ov::Exception {
public:
    explicit ExtensionError(const std::string& message) : ov::Exception(message) {}
};

// Attributes of the fixed-window ops, as the IR holds them.
struct AvgAttributes {
    PoolSpec window;
    bool exclude_pad = false;
};
struct MaxAttributes {
    PoolSpec window;
    std::string index_element_type = "i64";
    std::int64_t axis = 0;
};
struct OnnxAvgAttributes {
    OnnxSpec window;
    std::int64_t ceil_mode = 0, count_include_pad = 0;
};
struct OnnxMaxAttributes {
    OnnxSpec window;
    std::int64_t ceil_mode = 0, storage_order = 0;
};

// Where a node built by a reader of a native op came from: the native version ("opset14"),
// for messages, and an error of that version's own rules found while reading (reported when
// the node is validated).
struct Origin {
    std::string version;
    std::string error;
};

// What every ovpool op shares: the error context, the plan cache for evaluate, whether the
// next visit reads (a node built empty by OpenVINO's OpExtension reads every attribute on its
// first visit; later visits write, and absent attributes are never written).
//
// Errors found while a node is created from an IR layer would name an automatic node name:
// OpenVINO's IR reader sets the layer's name after creating the node. So the first validation
// of a node read from an IR (built empty by OpExtension, or by a reader) does not throw; it
// leaves the outputs dynamic, and the next validation, when OpenVINO validates the model with
// the names set (read_model or compile_model), reports the error with the layer's name.
class PoolingBase : public ov::op::Op {
public:
    PoolingBase() : m_defer_errors(true) {}
    explicit PoolingBase(const ov::OutputVector& inputs) : ov::op::Op(inputs) {}
    bool has_evaluate() const override { return true; }

protected:
    // Runs `check` (validation and output types) with the error handling above. `outputs` is the
    // op's output count, for the dynamic outputs of a deferred error.
    template <class F>
    void validate(std::size_t outputs, F&& check) {
        const bool defer = m_defer_errors;
        m_defer_errors = false;
        try {
            if (!m_origin.error.empty())
                throw std::invalid_argument(m_origin.error);
            check();
        } catch (...) {
            if (!defer)
                rethrow();
            set_dynamic_outputs(outputs);
        }
    }
    void set_origin(const Origin* origin) {
        if (origin) {
            m_origin = *origin;
            m_defer_errors = true;
        }
    }
    void set_dynamic_outputs(std::size_t outputs);
    // Finishes a clone of this node (built empty, attributes copied): same origin and name,
    // set before it is validated so that errors name the layer.
    std::shared_ptr<ov::Node> finish_clone(const std::shared_ptr<PoolingBase>& clone,
                                           const ov::OutputVector& inputs) const;
    // "layer 'name' type=MaxPool version=ovpool (ovpool's OpenVINO extension)".
    std::string context() const;
    // Rethrows the exception being handled as an ov::Exception naming the layer.
    [[noreturn]] void rethrow() const;
    void set_outputs(const std::vector<ov::PartialShape>& shapes, const std::vector<ov::element::Type>& types);

    // Cached plan for the last input shape seen by evaluate (evaluate may run concurrently).
    std::shared_ptr<const Plan> cached_plan(const Dims& key) const;
    void store_plan(const Dims& key, std::shared_ptr<const Plan> plan) const;
    void forget_plans() { std::lock_guard<std::mutex> lock(m_mutex); m_plan.reset(); }
    // Whether anything reads output `index` (asked of the node the plugin runs).
    bool output_used(std::size_t index) const;

    bool m_reading = true;

private:
    bool m_defer_errors = false;
    Origin m_origin;
    mutable std::mutex m_mutex;
    mutable Dims m_plan_key;
    mutable std::shared_ptr<const Plan> m_plan;
};

// Attribute visiting shared by the ops and the readers of native ops. `reading` says whether
// the visitor fills the values (read_model) or reads them (save_model, clone): absent list
// attributes are offered only when reading, and are absent afterwards if the IR lacks them.
void visit_ints(ov::AttributeVisitor& visitor, const char* name, IntList& list, bool reading);
// The IR's attribute spellings are checked by the ops; these give the kernel storage type.
bool storage_for(const ov::element::Type& type, Storage& storage);
// "i32" / "i64" (case-insensitive) -> element type; throws the Python runtime's message.
ov::element::Type index_type(const std::string& index_element_type);
// ONNX 0/1 flags; throws "attribute 'name' is 'v'; expected one of 0, 1".
bool onnx_flag(const char* name, std::int64_t value);
// Refuses a choice not in `choices` with the Python runtime's message.
void check_choice(const char* name, const std::string& value, const std::vector<const char*>& choices);
// Refuses an element type the kernels do not have (a dynamic type passes).
// The kernels' storage type of an element type; unsupported types are refused with the message
// check_element_type gives.
Storage storage_of(const ov::element::Type& type);
void check_element_type(const ov::element::Type& type);

// An input's partial shape as Dims (-1: unknown); throws when the rank is below 3.
Dims known_dims(const ov::PartialShape& shape);
// (N, C) of `input` followed by `spatial` (-1: unknown).
ov::PartialShape with_spatial(const ov::PartialShape& input, const Dims& spatial);
// A tensor's shape as Dims, and Dims as an ov::Shape.
Dims tensor_dims(const ov::Tensor& tensor);
ov::Shape to_shape(const Dims& dims);
// Runs a plan's kernels on OpenVINO's threads (nothing when the output is empty).
void run_avg(const Plan& plan, Storage storage, const void* x, void* out);
void run_max(const Plan& plan, Storage storage, const void* x, void* out, std::int64_t* index64,
             std::int32_t* index32);
// Sets a (possibly placeholder) output tensor to `shape`.
void shape_output(ov::Tensor& tensor, const Dims& shape);

// One ovpool op: its attributes (the IR's), the node's constructor and clone, the attribute
// visit and validation with the error handling of PoolingBase, and evaluate's course shared by
// every op (input checks, the plan cached for the input shape, outputs shaped, then the average
// or max kernels), with the op's own steps as hooks `Derived` defines:
//   void visit(visitor)                  visits the attributes, in the IR's order (default: none)
//   void infer_types()                   checks attributes and inputs, then set_outputs (required)
//   Plan build_plan(key, with_indices, int32) const   the plan for `key` (required)
//   Dims plan_key(inputs) const          what the plan is cached under (default: the input shape)
//   void check_input(x) const            checks before the storage type's (default: none)
//   bool int32_indices() const           indices as i32 (default: i64)
//   void finish_indices(indices, key) const   after the max kernels wrote them (default: none)
// `Derived::OUTPUTS`: 1 (average pooling) or 2 (max pooling: values and indices).
// Derived constructors call constructor_validate_and_infer_types() themselves: during this
// base's constructor the node is not yet a `Derived`.
template <class Derived, class Attributes>
class PoolingOp : public PoolingBase {
public:
    const Attributes& attributes() const { return m_attributes; }

    bool visit_attributes(ov::AttributeVisitor& visitor) override {
        static_cast<Derived&>(*this).visit(visitor);
        m_reading = false;
        return true;
    }

    void validate_and_infer_types() override {
        validate(Derived::OUTPUTS, [this] { static_cast<Derived&>(*this).infer_types(); });
    }

    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& inputs) const override {
        check_new_args_count(this, inputs);
        auto clone = std::make_shared<Derived>();
        clone->m_attributes = m_attributes;
        return finish_clone(clone, inputs);
    }

    bool evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override {
        try {
            const auto& op = static_cast<const Derived&>(*this);
            const auto& x = inputs[0];
            op.check_input(x);
            const Storage storage = storage_of(x.get_element_type());
            // Indices nothing reads are not computed (the plugin may still hand over a tensor).
            const bool with_indices = outputs.size() > 1 && output_used(1);
            const bool int32 = op.int32_indices();
            const Dims key = op.plan_key(inputs);
            auto plan = cached_plan(key);
            if (!plan) {
                plan = std::make_shared<const Plan>(op.build_plan(key, with_indices, int32));
                store_plan(key, plan);
            }
            for (auto& tensor : outputs)
                shape_output(tensor, plan->out_shape);
            if (Derived::OUTPUTS == 1) {
                run_avg(*plan, storage, x.data(), outputs[0].data());
                return true;
            }
            std::int64_t* index64 = nullptr;
            std::int32_t* index32 = nullptr;
            if (with_indices) {
                if (int32)
                    index32 = outputs[1].data<std::int32_t>();
                else
                    index64 = outputs[1].data<std::int64_t>();
            }
            run_max(*plan, storage, x.data(), outputs[0].data(), index64, index32);
            if (with_indices)
                op.finish_indices(outputs[1], key);
        } catch (...) {
            rethrow();
        }
        return true;
    }

protected:
    PoolingOp() = default;
    // `origin`: see Origin; `name`: the friendly name, set before validating so that errors
    // name the node.
    PoolingOp(const ov::OutputVector& inputs, const Attributes& attributes, const Origin* origin,
              const std::string& name = "")
        : PoolingBase(inputs), m_attributes(attributes) {
        m_reading = false;
        set_origin(origin);
        if (!name.empty())
            set_friendly_name(name);
    }

    // The hooks' defaults (see above).
    void visit(ov::AttributeVisitor&) {}
    Dims plan_key(const ov::TensorVector& inputs) const { return tensor_dims(inputs[0]); }
    void check_input(const ov::Tensor&) const {}
    bool int32_indices() const { return false; }
    void finish_indices(ov::Tensor&, const Dims&) const {}

    Attributes m_attributes;
};

// The index layout of max pooling added to a plan.
inline Plan with_index_layout(Plan plan, const IndexPlan& layout) {
    plan.plane_modulus = layout.plane_modulus;
    plan.offset_modulus = layout.offset_modulus;
    return plan;
}

class AvgPool : public PoolingOp<AvgPool, AvgAttributes> {
public:
    OPENVINO_OP("AvgPool", "ovpool");
    static constexpr std::size_t OUTPUTS = 1;
    AvgPool() = default;
    AvgPool(const ov::Output<ov::Node>& x, const AvgAttributes& attributes, const Origin* origin = nullptr)
        : PoolingOp({x}, attributes, origin) {
        constructor_validate_and_infer_types();
    }

private:
    friend PoolingOp;
    void visit(ov::AttributeVisitor& visitor);
    void infer_types();
    Plan build_plan(const Dims& shape, bool with_indices, bool int32) const;
};

class MaxPool : public PoolingOp<MaxPool, MaxAttributes> {
public:
    OPENVINO_OP("MaxPool", "ovpool");
    static constexpr std::size_t OUTPUTS = 2;
    MaxPool() = default;
    MaxPool(const ov::Output<ov::Node>& x, const MaxAttributes& attributes, const Origin* origin = nullptr)
        : PoolingOp({x}, attributes, origin) {
        constructor_validate_and_infer_types();
    }

private:
    friend PoolingOp;
    void visit(ov::AttributeVisitor& visitor);
    void infer_types();
    Plan build_plan(const Dims& shape, bool with_indices, bool int32) const;
    bool int32_indices() const;
};

// The adaptive ops: input 1 holds the output sizes; plans are cached under the input shape,
// -1, the sizes.
struct AdaptiveAvgAttributes {};
struct AdaptiveMaxAttributes {
    std::string index_element_type = "i64";
};

class AdaptiveAvgPool : public PoolingOp<AdaptiveAvgPool, AdaptiveAvgAttributes> {
public:
    OPENVINO_OP("AdaptiveAvgPool", "ovpool");
    static constexpr std::size_t OUTPUTS = 1;
    AdaptiveAvgPool() = default;
    AdaptiveAvgPool(const ov::Output<ov::Node>& x, const ov::Output<ov::Node>& output_size,
                    const Origin* origin = nullptr)
        : PoolingOp({x, output_size}, {}, origin) {
        constructor_validate_and_infer_types();
    }

private:
    friend PoolingOp;
    void infer_types();
    Dims plan_key(const ov::TensorVector& inputs) const;
    Plan build_plan(const Dims& key, bool with_indices, bool int32) const;
};

class AdaptiveMaxPool : public PoolingOp<AdaptiveMaxPool, AdaptiveMaxAttributes> {
public:
    OPENVINO_OP("AdaptiveMaxPool", "ovpool");
    static constexpr std::size_t OUTPUTS = 2;
    AdaptiveMaxPool() = default;
    AdaptiveMaxPool(const ov::Output<ov::Node>& x, const ov::Output<ov::Node>& output_size,
                    const std::string& index_element_type, const Origin* origin = nullptr)
        : PoolingOp({x, output_size}, {index_element_type}, origin) {
        constructor_validate_and_infer_types();
    }

private:
    friend PoolingOp;
    void visit(ov::AttributeVisitor& visitor);
    void infer_types();
    Dims plan_key(const ov::TensorVector& inputs) const;
    Plan build_plan(const Dims& key, bool with_indices, bool int32) const;
    bool int32_indices() const;
};

class OnnxAveragePool : public PoolingOp<OnnxAveragePool, OnnxAvgAttributes> {
public:
    OPENVINO_OP("OnnxAveragePool", "ovpool");
    static constexpr std::size_t OUTPUTS = 1;
    OnnxAveragePool() = default;
    OnnxAveragePool(const ov::Output<ov::Node>& x, const OnnxAvgAttributes& attributes, const std::string& name = "")
        : PoolingOp({x}, attributes, nullptr, name) {
        constructor_validate_and_infer_types();
    }

private:
    friend PoolingOp;
    void visit(ov::AttributeVisitor& visitor);
    void infer_types();
    void check_input(const ov::Tensor& x) const;
    Plan build_plan(const Dims& shape, bool with_indices, bool int32) const;
};

class OnnxMaxPool : public PoolingOp<OnnxMaxPool, OnnxMaxAttributes> {
public:
    OPENVINO_OP("OnnxMaxPool", "ovpool");
    static constexpr std::size_t OUTPUTS = 2;
    OnnxMaxPool() = default;
    OnnxMaxPool(const ov::Output<ov::Node>& x, const OnnxMaxAttributes& attributes, const std::string& name = "")
        : PoolingOp({x}, attributes, nullptr, name) {
        constructor_validate_and_infer_types();
    }

private:
    friend PoolingOp;
    void visit(ov::AttributeVisitor& visitor);
    void infer_types();
    void check_input(const ov::Tensor& x) const;
    Plan build_plan(const Dims& shape, bool with_indices, bool int32) const;
    void finish_indices(ov::Tensor& indices, const Dims& shape) const;
};

}  // namespace native
}  // namespace ovpool
