#include "gates/json_reader.h"

#include <cstdint>
#include <limits>

#include "runner/base/vocab/enum_names.h"

namespace envgate::gates::json_read {
namespace {

// The word for each JSON type; a number of any kind is "number".
constexpr EnumName<json::value_t> k_type_names[] = {
    {json::value_t::null, "null"},        {json::value_t::object, "object"},
    {json::value_t::array, "array"},      {json::value_t::string, "string"},
    {json::value_t::boolean, "boolean"},  {json::value_t::binary, "binary"},
    {json::value_t::discarded, "nothing"}};

const char* type_of(const json& j) {
    return name_of(k_type_names, j.type(), "number");
}

std::string shown(const std::string& path) {
    return path.empty() ? "." : path;
}

Result<int> to_int(const json& j, const std::string& path) {
    if (!j.is_number_integer()) {
        return type_error(path, "an integer", j);
    }
    constexpr std::int64_t k_min = std::numeric_limits<std::int32_t>::min();
    constexpr std::int64_t k_max = std::numeric_limits<std::int32_t>::max();
    if (j.is_number_unsigned()) {
        if (j.get<std::uint64_t>() > static_cast<std::uint64_t>(k_max)) {
            return Status(Code::invalid, shown(path) + ": out of the int32 range");
        }
        return static_cast<int>(j.get<std::uint64_t>());
    }
    std::int64_t v = j.get<std::int64_t>();
    if (v < k_min || v > k_max) {
        return Status(Code::invalid, shown(path) + ": out of the int32 range");
    }
    return static_cast<int>(v);
}

}  // namespace

std::string child(const std::string& path, std::string_view key) {
    return path + "." + std::string(key);
}

std::string element(const std::string& path, std::size_t index) {
    return path + "[" + std::to_string(index) + "]";
}

Status type_error(const std::string& path, const char* want, const json& got) {
    return {Code::invalid, shown(path) + ": expected " + want + ", got " + type_of(got)};
}

Status expect_object(const json& j, const std::string& path) {
    return j.is_object() ? Status::ok() : type_error(path, "an object", j);
}

const json* field(const json& obj, std::string_view key) {
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
        return nullptr;
    }
    return &*it;
}

namespace {

// The reader of a field's plain form (read_string, read_int, ...).
template <class T>
using PlainReader = Status (*)(const json&, std::string_view, const std::string&, T&);

// An optional field read with `read`: left unset when `key` is absent or null.
template <class T>
Status read_if_present(const json& obj, std::string_view key, const std::string& path,
                       std::optional<T>& out, PlainReader<T> read) {
    if (field(obj, key) == nullptr) {
        return Status::ok();
    }
    T v{};
    TRY(read(obj, key, path, v));
    out = std::move(v);
    return Status::ok();
}

}  // namespace

Status read_string(const json& obj, std::string_view key, const std::string& path,
                   std::string& out) {
    const json* v = field(obj, key);
    if (v == nullptr) {
        return Status::ok();
    }
    if (!v->is_string()) {
        return type_error(child(path, key), "a string", *v);
    }
    out = v->get<std::string>();
    return Status::ok();
}

Status read_string(const json& obj, std::string_view key, const std::string& path,
                   std::optional<std::string>& out) {
    return read_if_present<std::string>(obj, key, path, out, read_string);
}

Status read_int(const json& obj, std::string_view key, const std::string& path, int& out) {
    const json* v = field(obj, key);
    if (v == nullptr) {
        return Status::ok();
    }
    TRY_ASSIGN(out, to_int(*v, child(path, key)));
    return Status::ok();
}

Status read_int(const json& obj, std::string_view key, const std::string& path,
                std::optional<int>& out) {
    return read_if_present<int>(obj, key, path, out, read_int);
}

Status read_count(const json& obj, std::string_view key, const std::string& path, int& out) {
    int v = out;
    TRY(read_int(obj, key, path, v));
    if (v < 0) {
        return {Code::invalid,
                child(path, key) + ": expected a non-negative integer, got " + std::to_string(v)};
    }
    out = v;
    return Status::ok();
}

Status read_count(const json& obj, std::string_view key, const std::string& path,
                  std::optional<int>& out) {
    return read_if_present<int>(obj, key, path, out, read_count);
}

Status read_bool(const json& obj, std::string_view key, const std::string& path, bool& out) {
    const json* v = field(obj, key);
    if (v == nullptr) {
        return Status::ok();
    }
    if (!v->is_boolean()) {
        return type_error(child(path, key), "a boolean", *v);
    }
    out = v->get<bool>();
    return Status::ok();
}

Status read_time(const json& obj, std::string_view key, const std::string& path,
                 std::optional<TimePoint>& out) {
    std::optional<std::string> text;
    TRY(read_string(obj, key, path, text));
    if (!text) {
        return Status::ok();
    }
    out = parse_rfc3339(*text);
    if (!out) {
        return {Code::invalid, child(path, key) + ": expected an RFC 3339 time, got \"" +
                                   text->substr(0, 40) + "\""};
    }
    return Status::ok();
}

Status read_string_map(const json& obj, std::string_view key, const std::string& path,
                       std::map<std::string, std::string>& out) {
    const json* m = field(obj, key);
    if (m == nullptr) {
        return Status::ok();
    }
    std::string p = child(path, key);
    TRY(expect_object(*m, p));
    for (const auto& [k, v] : m->items()) {
        if (!v.is_string()) {
            return type_error(child(p, k), "a string", v);
        }
        out[k] = v.get<std::string>();
    }
    return Status::ok();
}

Status read_string_list(const json& obj, std::string_view key, const std::string& path,
                        std::vector<std::string>& out) {
    return read_array(obj, key, path, [&](const json& item, const std::string& p) {
        if (!item.is_string()) {
            return type_error(p, "a string", item);
        }
        out.push_back(item.get<std::string>());
        return Status::ok();
    });
}

Result<json> parse(std::string_view text, std::string_view source) {
    try {
        return json::parse(text);
    } catch (const json::exception& e) {
        return Status(Code::invalid, std::string(source) + ": not valid JSON: " + e.what());
    }
}

}  // namespace envgate::gates::json_read
