// ONNX frontend conversions (empty when the library is built without OpenVINO's ONNX frontend).
#pragma once

#include <vector>

#include "openvino/core/extension.hpp"

namespace ovpool {
namespace native {

std::vector<ov::Extension::Ptr> onnx_conversions();

}  // namespace native
}  // namespace ovpool
