// Readers of OpenVINO's native pooling ops: extensions registered under the native type info
// (("MaxPool", "opset8"), ...) whose create() reads the native layer's attributes and builds
// the "ovpool" op standing in, so core.read_model runs every pooling layer with ovpool's
// kernels. ov::OpExtension<T> cannot do this (it returns the outputs of the T it built), hence
// a BaseOpExtension per native version (op_schema.hpp, generated from ovpool/_opschema.py).
#include "readers.hpp"

#include "op_schema.hpp"
#include "openvino/core/op_extension.hpp"
#include "ops.hpp"

namespace ovpool {
namespace native {

namespace {

enum class Family { avg, max, adaptive_avg, adaptive_max };

Family family_of(const std::string& name) {
    if (name == "AvgPool")
        return Family::avg;
    if (name == "MaxPool")
        return Family::max;
    return name == "AdaptiveAvgPool" ? Family::adaptive_avg : Family::adaptive_max;
}

template <std::size_t N>
std::vector<const char*> words(const char* const (&all)[N], std::size_t count = N) {
    return std::vector<const char*>(all, all + count);
}

class NativeReader : public ov::BaseOpExtension {
public:
    explicit NativeReader(const schema::NativeVersion& op)
        : m_op(op), m_family(family_of(op.name)), m_type(op.name, op.opset) {}

    const ov::DiscreteTypeInfo& get_type_info() const override { return m_type; }

    std::vector<ov::Extension::Ptr> get_attached_extensions() const override { return {}; }

    ov::OutputVector create(const ov::OutputVector& inputs, ov::AttributeVisitor& visitor) const override {
        Origin origin{m_op.opset, ""};
        switch (m_family) {
        case Family::avg: return create_avg(inputs, visitor, origin);
        case Family::max: return create_max(inputs, visitor, origin);
        case Family::adaptive_avg:
            return std::make_shared<AdaptiveAvgPool>(inputs.at(0), inputs.at(1), &origin)->outputs();
        case Family::adaptive_max: {
            std::string index_element_type = MaxAttributes().index_element_type;
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
            check_choice("rounding_type", w.rounding_type, words(schema::ROUNDING_TYPES, m_op.roundings));
            check_choice("auto_pad", w.auto_pad, words(schema::IR_AUTO_PADS));
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
        native_window(visitor, attributes.window, m_op.dilations, origin);
        visitor.on_attribute("exclude-pad", attributes.exclude_pad);
        return std::make_shared<AvgPool>(inputs.at(0), attributes, &origin)->outputs();
    }

    ov::OutputVector create_max(const ov::OutputVector& inputs, ov::AttributeVisitor& visitor,
                                Origin& origin) const {
        MaxAttributes attributes;
        native_window(visitor, attributes.window, m_op.dilations, origin);
        if (m_op.outputs == 2) {
            visitor.on_attribute("index_element_type", attributes.index_element_type);
            visitor.on_attribute("axis", attributes.axis);
        }
        auto node = std::make_shared<MaxPool>(inputs.at(0), attributes, &origin);
        // MaxPool-1 has the values output only.
        if (m_op.outputs == 1)
            return {node->output(0)};
        return node->outputs();
    }

    schema::NativeVersion m_op;
    Family m_family;
    ov::DiscreteTypeInfo m_type;
};

}  // namespace

std::vector<ov::Extension::Ptr> reader_extensions() {
    std::vector<ov::Extension::Ptr> readers;
    for (const auto& op : schema::NATIVE_VERSIONS)
        readers.push_back(std::make_shared<NativeReader>(op));
    return readers;
}

}  // namespace native
}  // namespace ovpool
