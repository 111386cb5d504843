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

class AvgPool : public PoolingBase {
public:
    OPENVINO_OP("AvgPool", "ovpool");
    AvgPool() = default;
    AvgPool(const ov::Output<ov::Node>& x, const AvgAttributes& attributes, const Origin* origin = nullptr);
    bool visit_attributes(ov::AttributeVisitor& visitor) override;
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& inputs) const override;
    bool evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;
    const AvgAttributes& attributes() const { return m_attributes; }

private:
    AvgAttributes m_attributes;
};

class MaxPool : public PoolingBase {
public:
    OPENVINO_OP("MaxPool", "ovpool");
    MaxPool() = default;
    MaxPool(const ov::Output<ov::Node>& x, const MaxAttributes& attributes, const Origin* origin = nullptr);
    bool visit_attributes(ov::AttributeVisitor& visitor) override;
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& inputs) const override;
    bool evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;
    const MaxAttributes& attributes() const { return m_attributes; }

private:
    MaxAttributes m_attributes;
};

class AdaptiveAvgPool : public PoolingBase {
public:
    OPENVINO_OP("AdaptiveAvgPool", "ovpool");
    AdaptiveAvgPool() = default;
    AdaptiveAvgPool(const ov::Output<ov::Node>& x, const ov::Output<ov::Node>& output_size,
                    const Origin* origin = nullptr);
    bool visit_attributes(ov::AttributeVisitor& visitor) override;
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& inputs) const override;
    bool evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;
};

class AdaptiveMaxPool : public PoolingBase {
public:
    OPENVINO_OP("AdaptiveMaxPool", "ovpool");
    AdaptiveMaxPool() = default;
    AdaptiveMaxPool(const ov::Output<ov::Node>& x, const ov::Output<ov::Node>& output_size,
                    const std::string& index_element_type, const Origin* origin = nullptr);
    bool visit_attributes(ov::AttributeVisitor& visitor) override;
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& inputs) const override;
    bool evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;
    const std::string& index_element_type() const { return m_index_element_type; }

private:
    std::string m_index_element_type = "i64";
};

class OnnxAveragePool : public PoolingBase {
public:
    OPENVINO_OP("OnnxAveragePool", "ovpool");
    OnnxAveragePool() = default;
    // `name`: the friendly name, set before validating so that errors name the node.
    OnnxAveragePool(const ov::Output<ov::Node>& x, const OnnxAvgAttributes& attributes, const std::string& name = "");
    bool visit_attributes(ov::AttributeVisitor& visitor) override;
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& inputs) const override;
    bool evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;

private:
    OnnxAvgAttributes m_attributes;
};

class OnnxMaxPool : public PoolingBase {
public:
    OPENVINO_OP("OnnxMaxPool", "ovpool");
    OnnxMaxPool() = default;
    OnnxMaxPool(const ov::Output<ov::Node>& x, const OnnxMaxAttributes& attributes, const std::string& name = "");
    bool visit_attributes(ov::AttributeVisitor& visitor) override;
    void validate_and_infer_types() override;
    std::shared_ptr<ov::Node> clone_with_new_inputs(const ov::OutputVector& inputs) const override;
    bool evaluate(ov::TensorVector& outputs, const ov::TensorVector& inputs) const override;

private:
    OnnxMaxAttributes m_attributes;
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

}  // namespace native
}  // namespace ovpool
