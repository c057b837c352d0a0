// Reading typed fields out of nlohmann::json with the JSON path in every error, shared
// by the decoders of gates/ (snapshots, memory). Absent or null fields leave the target
// unchanged; a field of the wrong type is a Code::invalid Status, never an exception.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "runner/base/vocab/status.h"
#include "runner/base/vocab/time.h"

namespace envgate::gates::json_read {

using nlohmann::json;

std::string child(const std::string& path, std::string_view key);
std::string element(const std::string& path, std::size_t index);

// "`path`: expected `want`, got <type of `got`>".
Status type_error(const std::string& path, const char* want, const json& got);
Status expect_object(const json& j, const std::string& path);

// The field `key` of `obj`, or nullptr when it is absent or null. REQUIRES: obj is an object.
const json* field(const json& obj, std::string_view key);

Status read_string(const json& obj, std::string_view key, const std::string& path,
                   std::string& out);
Status read_string(const json& obj, std::string_view key, const std::string& path,
                   std::optional<std::string>& out);
Status read_int(const json& obj, std::string_view key, const std::string& path, int& out);
Status read_int(const json& obj, std::string_view key, const std::string& path,
                std::optional<int>& out);
// As read_int, and rejects negative values (counters, limits).
Status read_count(const json& obj, std::string_view key, const std::string& path, int& out);
Status read_count(const json& obj, std::string_view key, const std::string& path,
                  std::optional<int>& out);
Status read_bool(const json& obj, std::string_view key, const std::string& path, bool& out);
Status read_time(const json& obj, std::string_view key, const std::string& path,
                 std::optional<TimePoint>& out);
Status read_string_map(const json& obj, std::string_view key, const std::string& path,
                       std::map<std::string, std::string>& out);
Status read_string_list(const json& obj, std::string_view key, const std::string& path,
                        std::vector<std::string>& out);

// Calls `read(value, value_path)` for the field `key` of `obj` when it is present;
// an absent or null field calls nothing.
template <typename F>
Status read_present(const json& obj, std::string_view key, const std::string& path, F&& read) {
    const json* value = field(obj, key);
    return value == nullptr ? Status::ok() : read(*value, child(path, key));
}

// Calls `each(item, item_path)` for every element of the array `key`; stops at the
// first error. An absent or null field is an empty array.
template <typename F>
Status read_array(const json& obj, std::string_view key, const std::string& path, F&& each) {
    return read_present(obj, key, path, [&](const json& a, const std::string& p) {
        if (!a.is_array()) {
            return type_error(p, "an array", a);
        }
        for (std::size_t i = 0; i < a.size(); ++i) {
            TRY(each(a[i], element(p, i)));
        }
        return Status::ok();
    });
}

// Calls `each(object, object_path)` for the object `key` when it is present; a field
// that is no object is a type_error. An absent or null field calls nothing.
template <typename F>
Status read_object(const json& obj, std::string_view key, const std::string& path, F&& each) {
    return read_present(obj, key, path, [&](const json& o, const std::string& p) {
        TRY(expect_object(o, p));
        return each(o, p);
    });
}

// One member of a struct `S` as the JSON key `key`, read by `read` (read_string,
// read_count, ...). A tuple of them is a struct's one key list: its reader walks it
// with read_fields, and its writer, where it has one, walks the same list.
template <typename S, typename M>
struct Field {
    std::string_view key;
    M S::*member;
    Status (*read)(const json& obj, std::string_view key, const std::string& path, M& out);
};

// field("pod", &Failure::pod, read_string): M comes from the member, so that the
// reader's overload is the one for its type.
template <typename S, typename M>
constexpr Field<S, M> field(std::string_view key, M S::*member,
                            Status (*read)(const json&, std::string_view, const std::string&,
                                           std::type_identity_t<M>&)) {
    return {key, member, read};
}

// Reads the object `j` at `path` into `out`, field by field in the order of `fields`;
// stops at the first error.
template <typename S, typename... M>
Status read_fields(const json& j, const std::string& path, const std::tuple<Field<S, M>...>& fields,
                   S& out) {
    TRY(expect_object(j, path));
    Status status = Status::ok();
    std::apply(
        [&](const auto&... f) {
            (void)((status = f.read(j, f.key, path, out.*f.member), status.is_ok()) && ...);
        },
        fields);
    return status;
}

// Parses `text`, converting nlohmann's parse errors into a Status naming `source`.
Result<json> parse(std::string_view text, std::string_view source);

}  // namespace envgate::gates::json_read
