// Readers of OpenVINO's native pooling ops: extensions registered under the native type info
// (("MaxPool", "opset8"), ...) whose create() reads the native layer's attributes and builds
// the "ovpool" op standing in, so core.read_model runs every pooling layer with ovpool's
// kernels. ov::OpExtension<T> cannot do this (it returns the outputs of the T it built), hence
// a BaseOpExtension per native version.
#include "readers.hpp"

#include "openvino/core/op_extension.hpp"
#include "ops.hpp"

namespace ovpool {
namespace native {

namespace {

enum class Family { avg, max, adaptive_avg, adaptive_max };

struct NativeOp {
    const char* name;
    const char* opset;
    Family family;
    int version;
};

// The rounding types each native version knows (AvgPool-1 and MaxPool-1/8: no ceil_torch).
std::vector<const char*> roundings(int version) {
    if (version >= 14)
        return {"floor", "ceil", "ceil_torch"};
    return {"floor", "ceil"};
}

class NativeReader : public ov::BaseOpExtension {
public:
    explicit NativeReader(const NativeOp& op) : m_op(op), m_type(op.name, op.opset) {}

    const ov::DiscreteTypeInfo& get_type_info() const override { return m_type; }

    std::vector<ov::Extension::Ptr> get_attached_extensions() const override { return {}; }

    ov::OutputVector create(const ov::OutputVector& inputs, ov::AttributeVisitor& visitor) const override {
        Origin origin{m_op.opset, ""};
        switch (m_op.family) {
        case Family::avg: return create_avg(inputs, visitor, origin);
        case Family::max: return create_max(inputs, visitor, origin);
        case Family::adaptive_avg:
            return std::make_shared<AdaptiveAvgPool>(inputs.at(0), inputs.at(1), &origin)->outputs();
        case Family::adaptive_max: {
            std::string index_element_type = "i64";
            visitor.on_attribute("index_element_type", index_element_type);
            return std::make_shared<AdaptiveMaxPool>(inputs.at(0), inputs.at(1), index_element_type, &origin)
                ->outputs();
        }
        }
        return {};
    }

private:
    // The native version's own rules first, then the ovpool op's (dilations 1 where the
    // version has none).
    void native_window(ov::AttributeVisitor& visitor, PoolSpec& w, bool has_dilations, Origin& origin) const {
        visit_ints(visitor, "kernel", w.kernel, true);
        visit_ints(visitor, "strides", w.strides, true);
        visit_ints(visitor, "pads_begin", w.pads_begin, true);
        visit_ints(visitor, "pads_end", w.pads_end, true);
        if (has_dilations)
            visit_ints(visitor, "dilations", w.dilations, true);
        visitor.on_attribute("rounding_type", w.rounding_type);
        visitor.on_attribute("auto_pad", w.auto_pad);
        try {
            check_choice("rounding_type", w.rounding_type, roundings(m_op.version));
            check_choice("auto_pad", w.auto_pad, {"explicit", "same_upper", "same_lower", "valid", "notset"});
        } catch (const std::exception& error) {
            origin.error = error.what();  // reported once the layer has its name
        }
        if (!w.dilations.given && w.kernel.given) {
            w.dilations.given = true;
            w.dilations.values.assign(w.kernel.values.size(), 1);
        }
    }

    ov::OutputVector create_avg(const ov::OutputVector& inputs, ov::AttributeVisitor& visitor,
                                Origin& origin) const {
        AvgAttributes attributes;
        native_window(visitor, attributes.window, m_op.version >= 16, origin);
        visitor.on_attribute("exclude-pad", attributes.exclude_pad);
        return std::make_shared<AvgPool>(inputs.at(0), attributes, &origin)->outputs();
    }

    ov::OutputVector create_max(const ov::OutputVector& inputs, ov::AttributeVisitor& visitor,
                                Origin& origin) const {
        MaxAttributes attributes;
        native_window(visitor, attributes.window, m_op.version >= 8, origin);
        if (m_op.version >= 8) {
            visitor.on_attribute("index_element_type", attributes.index_element_type);
            visitor.on_attribute("axis", attributes.axis);
        }
        auto node = std::make_shared<MaxPool>(inputs.at(0), attributes, &origin);
        // MaxPool-1 has the values output only.
        if (m_op.version == 1)
            return {node->output(0)};
        return node->outputs();
    }

    NativeOp m_op;
    ov::DiscreteTypeInfo m_type;
};

const NativeOp NATIVE_OPS[] = {
    {"AvgPool", "opset1", Family::avg, 1},
    {"AvgPool", "opset14", Family::avg, 14},
    {"AvgPool", "opset16", Family::avg, 16},
    {"MaxPool", "opset1", Family::max, 1},
    {"MaxPool", "opset8", Family::max, 8},
    {"MaxPool", "opset14", Family::max, 14},
    {"AdaptiveAvgPool", "opset8", Family::adaptive_avg, 8},
    {"AdaptiveMaxPool", "opset8", Family::adaptive_max, 8},
};

}  // namespace

std::vector<ov::Extension::Ptr> reader_extensions() {
    std::vector<ov::Extension::Ptr> readers;
    for (const auto& op : NATIVE_OPS)
        readers.push_back(std::make_shared<NativeReader>(op));
    return readers;
}

}  // namespace native
}  // namespace ovpool
