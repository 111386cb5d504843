// What the ovpool ops share: error context, attribute helpers, element types, plan cache.
#include <algorithm>
#include <cctype>
#include <iterator>
#include <limits>
#include <new>

#include "op_schema.hpp"
#include "openvino/core/except.hpp"
#include "ops.hpp"

namespace ovpool {
namespace native {

const char* const OPSET = "ovpool";

std::string PoolingBase::context() const {
    const auto& info = get_type_info();
    const std::string version = m_origin.version.empty() ? info.version_id : m_origin.version;
    return "layer '" + get_friendly_name() + "' type=" + info.name + " version=" + version +
           " (ovpool's OpenVINO extension)";
}

std::shared_ptr<ov::Node> PoolingBase::finish_clone(const std::shared_ptr<PoolingBase>& clone,
                                                    const ov::OutputVector& inputs) const {
    clone->m_reading = false;
    clone->m_defer_errors = false;
    clone->m_origin = m_origin;
    clone->set_arguments(inputs);
    clone->set_friendly_name(get_friendly_name());
    clone->constructor_validate_and_infer_types();
    return clone;
}

void PoolingBase::set_dynamic_outputs(std::size_t outputs) {
    for (std::size_t i = 0; i < outputs; ++i)
        set_output_type(i, i == 0 ? get_input_element_type(0) : ov::element::i64, ov::PartialShape::dynamic());
}

void PoolingBase::rethrow() const {
    try {
        throw;
    } catch (const std::bad_alloc&) {
        throw ExtensionError(context() + ": out of memory");
    } catch (const ov::Exception&) {
        throw;
    } catch (const std::exception& error) {
        throw ExtensionError(context() + ": " + error.what());
    } catch (...) {
        throw ExtensionError(context() + ": unknown error");
    }
}

void PoolingBase::set_outputs(const std::vector<ov::PartialShape>& shapes,
                              const std::vector<ov::element::Type>& types) {
    for (std::size_t i = 0; i < shapes.size(); ++i)
        set_output_type(i, types[i], shapes[i]);
    forget_plans();
}

std::shared_ptr<const Plan> PoolingBase::cached_plan(const Dims& key) const {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_plan && m_plan_key == key)
        return m_plan;
    return nullptr;
}

void PoolingBase::store_plan(const Dims& key, std::shared_ptr<const Plan> plan) const {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_plan_key = key;
    m_plan = std::move(plan);
}

bool PoolingBase::output_used(std::size_t index) const {
    return index < get_output_size() && !output(index).get_target_inputs().empty();
}

void visit_ints(ov::AttributeVisitor& visitor, const char* name, IntList& list, bool reading) {
    if (reading) {
        // A value no IR writes marks "absent": the visitor leaves it alone when the IR lacks
        // the attribute.
        const std::int64_t mark = std::numeric_limits<std::int64_t>::min();
        std::vector<std::int64_t> values{mark};
        visitor.on_attribute(name, values);
        if (values.size() == 1 && values[0] == mark) {
            list.given = false;
            list.values.clear();
        } else {
            list.given = true;
            list.values = std::move(values);
        }
    } else if (list.given) {
        visitor.on_attribute(name, list.values);
    }
}

bool storage_for(const ov::element::Type& type, Storage& storage) {
    switch (ov::element::Type_t(type)) {
    case ov::element::Type_t::f32: storage = Storage::f32; return true;
    case ov::element::Type_t::f16: storage = Storage::f16; return true;
    case ov::element::Type_t::bf16: storage = Storage::bf16; return true;
    case ov::element::Type_t::f64: storage = Storage::f64; return true;
    case ov::element::Type_t::i8: storage = Storage::i8; return true;
    case ov::element::Type_t::u8: storage = Storage::u8; return true;
    case ov::element::Type_t::i32: storage = Storage::i32; return true;
    case ov::element::Type_t::i64: storage = Storage::i64; return true;
    default: return false;
    }
}

namespace {

std::string lower(std::string text) {
    std::transform(text.begin(), text.end(), text.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return text;
}

std::string strip(const std::string& text) {
    const auto begin = text.find_first_not_of(" \t\r\n");
    if (begin == std::string::npos)
        return "";
    const auto end = text.find_last_not_of(" \t\r\n");
    return text.substr(begin, end - begin + 1);
}

// Python's repr of a short string, as the runtime's messages show values.
std::string shown(const std::string& raw) {
    std::string text = raw.size() <= 60 ? raw : raw.substr(0, 57) + "...";
    const char quote = text.find('\'') != std::string::npos && text.find('"') == std::string::npos ? '"' : '\'';
    std::string out(1, quote);
    for (char c : text) {
        if (c == quote || c == '\\')
            out += '\\';
        out += c;
    }
    return out + quote;
}

}  // namespace

void check_choice(const char* name, const std::string& value, const std::vector<const char*>& choices) {
    const std::string key = lower(strip(value));
    std::string listed;
    for (const char* choice : choices) {
        if (key == choice)
            return;
        listed += listed.empty() ? choice : std::string(", ") + choice;
    }
    throw std::invalid_argument("attribute '" + std::string(name) + "' is " + shown(value) +
                                "; expected one of " + listed);
}

ov::element::Type index_type(const std::string& index_element_type) {
    check_choice("index_element_type", index_element_type,
                 {std::begin(schema::INDEX_TYPES), std::end(schema::INDEX_TYPES)});
    return lower(strip(index_element_type)) == "i32" ? ov::element::i32 : ov::element::i64;
}

bool onnx_flag(const char* name, std::int64_t value) {
    if (value != 0 && value != 1)
        throw std::invalid_argument("attribute '" + std::string(name) + "' is '" + std::to_string(value) +
                                    "'; expected one of 0, 1");
    return value == 1;
}

}  // namespace native
}  // namespace ovpool

namespace ovpool {
namespace native {

Storage storage_of(const ov::element::Type& type) {
    Storage storage;
    if (!storage_for(type, storage))
        throw std::invalid_argument("input element type " + type.get_type_name() +
                                    " is not supported; use one of f32, f16, bf16, f64, i8, u8, i32, i64");
    return storage;
}

void check_element_type(const ov::element::Type& type) {
    if (!type.is_dynamic())
        storage_of(type);
}

Dims known_dims(const ov::PartialShape& shape) {
    Dims dims;
    for (const auto& d : shape)
        dims.push_back(d.is_static() ? d.get_length() : -1);
    check_shape(dims, shape.to_string());
    return dims;
}

ov::PartialShape with_spatial(const ov::PartialShape& input, const Dims& spatial) {
    std::vector<ov::Dimension> dims{input[0], input[1]};
    for (auto d : spatial)
        dims.push_back(d < 0 ? ov::Dimension::dynamic() : ov::Dimension(d));
    return ov::PartialShape(dims);
}

Dims tensor_dims(const ov::Tensor& tensor) {
    const auto& shape = tensor.get_shape();
    return Dims(shape.begin(), shape.end());
}

ov::Shape to_shape(const Dims& dims) {
    return ov::Shape(dims.begin(), dims.end());
}

void shape_output(ov::Tensor& tensor, const Dims& shape) {
    const auto& current = tensor.get_shape();
    if (!std::equal(current.begin(), current.end(), shape.begin(), shape.end(),
                    [](std::size_t a, std::int64_t b) { return static_cast<std::int64_t>(a) == b; }))
        tensor.set_shape(to_shape(shape));
}

}  // namespace native
}  // namespace ovpool

namespace ovpool {
namespace native {

namespace {

// Bytes per element of a storage type.
std::int64_t storage_bytes(Storage storage) {
    switch (storage) {
        case Storage::f64:
        case Storage::i64: return 8;
        case Storage::f32:
        case Storage::i32: return 4;
        case Storage::f16:
        case Storage::bf16: return 2;
        default: return 1;
    }
}

// The plan's part of every job's arguments; workers: see workers_for, for the bytes the call
// reads and writes (`index_bytes` per output: the indices').
JobArgs job_args(const Plan& plan, Storage storage, const void* x, void* out,
                 std::int64_t index_bytes = 0) {
    std::int64_t out_elements = 1;
    for (std::int64_t n : plan.out_shape) out_elements *= n;
    const std::int64_t element = storage_bytes(storage);
    const std::int64_t bytes =
        plan.in_elements * element + out_elements * (element + index_bytes);
    return {storage, x, out, static_cast<std::ptrdiff_t>(plan.planes), plan.packed.data(),
            workers_for(bytes)};
}

}  // namespace

void run_avg(const Plan& plan, Storage storage, const void* x, void* out) {
    if (plan.planes == 0)
        return;
    const AvgArgs args{job_args(plan, storage, x, out), plan.divisor.data(), plan.divisor_real.data(),
                       plan.real32.data(), plan.divisor32.data(), plan.inverse32.data(),
                       plan.small_divisors};
    run_job(*make_job(args), args.workers);
}

void run_max(const Plan& plan, Storage storage, const void* x, void* out, std::int64_t* index64,
             std::int32_t* index32) {
    if (plan.planes == 0)
        return;
    const std::int64_t index_bytes = index64 ? 8 : index32 ? 4 : 0;
    const MaxArgs args{job_args(plan, storage, x, out, index_bytes), index64, index32,
                       plan.plane_modulus,
                       plan.offset_modulus, empty_max_value(storage)};
    run_job(*make_job(args), args.workers);
}

}  // namespace native
}  // namespace ovpool
