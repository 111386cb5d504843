// Conversions for OpenVINO's ONNX frontend: ONNX AveragePool and MaxPool nodes become
// OnnxAveragePool / OnnxMaxPool, so core.read_model("model.onnx") keeps ONNX's exact semantics
// (ovpool/openvino.py: _onnx_conversion).
#include "onnx_conversions.hpp"

#ifdef OVPOOL_NATIVE_WITH_ONNX

#include "openvino/frontend/onnx/extension/conversion.hpp"
#include "ops.hpp"

namespace ovpool {
namespace native {

namespace {

// The node's attributes as written in the ONNX model; absent ones keep ONNX's defaults.
void read_ints(const ov::frontend::NodeContext& node, const char* name, IntList& list) {
    if (node.has_attribute(name)) {
        list.given = true;
        list.values = node.get_attribute<std::vector<std::int64_t>>(name);
    }
}

void read_window(const ov::frontend::NodeContext& node, OnnxSpec& w, std::int64_t& ceil_mode) {
    read_ints(node, "kernel_shape", w.kernel_shape);
    read_ints(node, "strides", w.strides);
    read_ints(node, "pads", w.pads);
    read_ints(node, "dilations", w.dilations);
    if (node.has_attribute("auto_pad"))
        w.auto_pad = node.get_attribute<std::string>("auto_pad");
    ceil_mode = node.get_attribute<std::int64_t>("ceil_mode", 0);
}

// The ONNX node's name (empty if the frontend has none), for error messages.
std::string name_of(const ov::frontend::NodeContext& node) {
    try {
        return node.get_name();
    } catch (const std::exception&) {
        return "";
    }
}

ov::OutputVector average_pool(const ov::frontend::NodeContext& node) {
    OnnxAvgAttributes attributes;
    read_window(node, attributes.window, attributes.ceil_mode);
    attributes.count_include_pad = node.get_attribute<std::int64_t>("count_include_pad", 0);
    return std::make_shared<OnnxAveragePool>(node.get_input(0), attributes, name_of(node))->outputs();
}

ov::OutputVector max_pool(const ov::frontend::NodeContext& node) {
    OnnxMaxAttributes attributes;
    read_window(node, attributes.window, attributes.ceil_mode);
    attributes.storage_order = node.get_attribute<std::int64_t>("storage_order", 0);
    // The frontend maps outputs in order: a MaxPool without Indices uses the values only.
    return std::make_shared<OnnxMaxPool>(node.get_input(0), attributes, name_of(node))->outputs();
}

}  // namespace

std::vector<ov::Extension::Ptr> onnx_conversions() {
    return {std::make_shared<ov::frontend::onnx::ConversionExtension>("AveragePool", average_pool),
            std::make_shared<ov::frontend::onnx::ConversionExtension>("MaxPool", max_pool)};
}

}  // namespace native
}  // namespace ovpool

#else

namespace ovpool {
namespace native {

std::vector<ov::Extension::Ptr> onnx_conversions() { return {}; }

}  // namespace native
}  // namespace ovpool

#endif
