// Runs an OpenVINO IR model with ovpool's pooling, from C++ and without Python:
//
//   ovpool_sample <model.xml> <libovpool_extension.so> [device]
//
// The extension makes core.read_model build ovpool's ops for every pooling layer (AvgPool,
// MaxPool, AdaptiveAvgPool, AdaptiveMaxPool of any version, and the "ovpool" opset). Each input
// is filled with a fixed formula, x[i] = ((i * 37) % 101) / 50 - 1 (dynamic dimensions are taken
// as 1), and each output is printed with its shape, its sum and its first values.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "openvino/openvino.hpp"

namespace {

double value_at(std::size_t i) { return static_cast<double>((i * 37) % 101) / 50.0 - 1.0; }

template <class T>
void fill(ov::Tensor& tensor) {
    T* data = tensor.data<T>();
    for (std::size_t i = 0; i < tensor.get_size(); ++i)
        data[i] = static_cast<T>(value_at(i));
}

void fill_input(ov::Tensor& tensor) {
    const auto type = tensor.get_element_type();
    if (type == ov::element::f32)
        fill<float>(tensor);
    else if (type == ov::element::f64)
        fill<double>(tensor);
    else if (type == ov::element::f16)
        fill<ov::float16>(tensor);
    else if (type == ov::element::bf16)
        fill<ov::bfloat16>(tensor);
    else
        throw std::runtime_error("input element type " + type.get_type_name() + " is not handled by this sample");
}

// An output's elements as doubles.
std::vector<double> values_of(const ov::Tensor& tensor) {
    std::vector<double> values(tensor.get_size());
    const auto type = tensor.get_element_type();
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (type == ov::element::f32)
            values[i] = tensor.data<const float>()[i];
        else if (type == ov::element::f64)
            values[i] = tensor.data<const double>()[i];
        else if (type == ov::element::f16)
            values[i] = static_cast<float>(tensor.data<const ov::float16>()[i]);
        else if (type == ov::element::bf16)
            values[i] = static_cast<float>(tensor.data<const ov::bfloat16>()[i]);
        else if (type == ov::element::i64)
            values[i] = static_cast<double>(tensor.data<const std::int64_t>()[i]);
        else if (type == ov::element::i32)
            values[i] = tensor.data<const std::int32_t>()[i];
        else
            throw std::runtime_error("output element type " + type.get_type_name() + " is not handled by this sample");
    }
    return values;
}

std::string name_of(const ov::Output<const ov::Node>& port) {
    return port.get_names().empty() ? port.get_node()->get_friendly_name() : port.get_any_name();
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s <model.xml> <libovpool_extension.so> [device]\n", argv[0]);
        return 2;
    }
    const std::string device = argc > 3 ? argv[3] : "CPU";
    try {
        ov::Core core;
        core.add_extension(argv[2]);
        auto model = core.read_model(argv[1]);
        std::printf("OpenVINO %s\n", ov::get_openvino_version().buildNumber);
        for (const auto& op : model->get_ordered_ops()) {
            const auto& info = op->get_type_info();
            if (std::string(info.name).find("Pool") != std::string::npos)
                std::printf("layer %s: %s-%s\n", op->get_friendly_name().c_str(), info.name, info.version_id);
        }
        auto compiled = core.compile_model(model, device, ov::hint::inference_precision(ov::element::f32));
        auto request = compiled.create_infer_request();
        for (const auto& input : compiled.inputs()) {
            ov::PartialShape partial = input.get_partial_shape();
            ov::Shape shape;
            for (const auto& d : partial)
                shape.push_back(d.is_static() ? d.get_length() : 1);
            ov::Tensor tensor(input.get_element_type(), shape);
            fill_input(tensor);
            request.set_tensor(input, tensor);
            std::printf("input %s: %s %s\n", name_of(input).c_str(), input.get_element_type().get_type_name().c_str(),
                        ov::Shape(shape).to_string().c_str());
        }
        request.infer();
        for (const auto& output : compiled.outputs()) {
            const ov::Tensor tensor = request.get_tensor(output);
            const auto values = values_of(tensor);
            double sum = 0;
            for (double v : values)
                sum += v;
            std::printf("output %s: %s %s sum=%.6f first=", name_of(output).c_str(),
                        tensor.get_element_type().get_type_name().c_str(), tensor.get_shape().to_string().c_str(), sum);
            for (std::size_t i = 0; i < std::min<std::size_t>(values.size(), 6); ++i)
                std::printf("%s%.6f", i ? "," : "", values[i]);
            std::printf("\n");
        }
    } catch (const std::exception& error) {
        std::fprintf(stderr, "error: %s\n", error.what());
        return 1;
    }
    return 0;
}
