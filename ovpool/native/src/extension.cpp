// The library's entry point: OpenVINO calls create_extensions when a process runs
// core.add_extension("libovpool_extension.so").
//
// The ops are compiled against one OpenVINO's headers (its Node layout, its Tensor, its
// attribute visitor); another version could crash in them, so the library refuses, with a
// clear ov::Exception, to load into an OpenVINO whose version differs from the one it was
// built for.
#include <string>

#include "kernels.hpp"
#include "onnx_conversions.hpp"
#include "openvino/core/except.hpp"
#include "openvino/core/op_extension.hpp"
#include "openvino/core/version.hpp"
#include "ops.hpp"
#include "readers.hpp"

#define OVPOOL_STR2(x) #x
#define OVPOOL_STR(x) OVPOOL_STR2(x)

namespace ovpool {
namespace native {

namespace {

// The release whose headers this library is compiled with.
const char BUILT_FOR[] = OVPOOL_STR(OPENVINO_VERSION_MAJOR) "." OVPOOL_STR(OPENVINO_VERSION_MINOR) "." OVPOOL_STR(
    OPENVINO_VERSION_PATCH);

// "2026.4.1" from a build number such as "2026.4.1-22982-e213a147257-releases/2026/4".
std::string release_of(const std::string& build_number) {
    return build_number.substr(0, build_number.find('-'));
}

void check_openvino_version() {
    const ov::Version running = ov::get_openvino_version();
    const std::string build = running.buildNumber ? running.buildNumber : "";
    if (release_of(build) != BUILT_FOR)
        throw ExtensionError(std::string("ovpool's OpenVINO extension was built for OpenVINO ") + BUILT_FOR +
                             " but this process runs OpenVINO " + build +
                             "; rebuild it against this OpenVINO (python -m ovpool.native.build)");
}

std::vector<ov::Extension::Ptr> extensions() {
    check_openvino_version();
    std::vector<ov::Extension::Ptr> all = {
        std::make_shared<ov::OpExtension<AvgPool>>(),
        std::make_shared<ov::OpExtension<MaxPool>>(),
        std::make_shared<ov::OpExtension<AdaptiveAvgPool>>(),
        std::make_shared<ov::OpExtension<AdaptiveMaxPool>>(),
        std::make_shared<ov::OpExtension<OnnxAveragePool>>(),
        std::make_shared<ov::OpExtension<OnnxMaxPool>>(),
    };
    for (auto& reader : reader_extensions())
        all.push_back(reader);
    for (auto& conversion : onnx_conversions())
        all.push_back(conversion);
    return all;
}

}  // namespace

}  // namespace native
}  // namespace ovpool

OPENVINO_CREATE_EXTENSIONS(ovpool::native::extensions());

// Which kernel build runs ("avx2" / "baseline"), for diagnostics: dlsym("ovpool_kernel_isa").
extern "C" OPENVINO_CORE_EXPORTS const char* ovpool_kernel_isa() { return ovpool::native::kernel_isa(); }
