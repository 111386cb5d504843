// Readers making core.read_model build "ovpool" ops for OpenVINO's native pooling layers
// (AvgPool-1/14/16, MaxPool-1/8/14, AdaptiveAvgPool-8, AdaptiveMaxPool-8).
#pragma once

#include <vector>

#include "openvino/core/extension.hpp"

namespace ovpool {
namespace native {

std::vector<ov::Extension::Ptr> reader_extensions();

}  // namespace native
}  // namespace ovpool
