#include "runner/base/yaml_json.h"

#include <regex>
#include <stdexcept>

namespace envgate {
namespace {

using nlohmann::json;

Result<json> convert(const YAML::Node& node, const std::string& origin,
                     const YamlScalarToJson& scalar, const std::string& field) {
    switch (node.Type()) {
        case YAML::NodeType::Null:
        case YAML::NodeType::Undefined:
            return json(nullptr);
        case YAML::NodeType::Scalar:
            return scalar ? scalar(node, field) : yaml_scalar_value(node, node.Scalar());
        case YAML::NodeType::Sequence: {
            json out = json::array();
            std::size_t i = 0;
            for (const auto& item : node) {
                TRY_ASSIGN(json v,
                           convert(item, origin, scalar, field + "[" + std::to_string(i++) + "]"));
                out.push_back(std::move(v));
            }
            return out;
        }
        case YAML::NodeType::Map: {
            json out = json::object();
            for (const auto& kv : node) {
                if (!kv.first.IsScalar()) {
                    return Status(Code::invalid, yaml_where(origin, kv.first.Mark(), field) +
                                                     ": keys must be strings");
                }
                const std::string key = kv.first.Scalar();
                TRY_ASSIGN(json v, convert(kv.second, origin, scalar,
                                           field.empty() ? key : field + "." + key));
                out[key] = std::move(v);
            }
            return out;
        }
    }
    return json(nullptr);
}

}  // namespace

json yaml_plain_scalar(const std::string& s) {
    static const std::regex k_int("[-+]?(0|[1-9][0-9]*)");
    static const std::regex k_float("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
    static const char* k_true[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                   "True", "TRUE", "on",  "On",  "ON"};
    static const char* k_false[] = {"n",     "N",     "no",  "No",  "NO", "false",
                                    "False", "FALSE", "off", "Off", "OFF"};
    if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") {
        return nullptr;
    }
    for (const char* t : k_true) {
        if (s == t) {
            return true;
        }
    }
    for (const char* f : k_false) {
        if (s == f) {
            return false;
        }
    }
    if (std::regex_match(s, k_int)) {
        try {
            return std::stoll(s);
        } catch (const std::out_of_range&) {
            return s;
        }
    }
    if (std::regex_match(s, k_float)) {
        return std::stod(s);
    }
    return s;
}

json yaml_scalar_value(const YAML::Node& node, const std::string& text) {
    if (node.Tag() == "!" || node.Tag() == "tag:yaml.org,2002:str") {
        return json(text);
    }
    return yaml_plain_scalar(text);
}

Result<json> yaml_to_json(const YAML::Node& node, const std::string& origin,
                          const YamlScalarToJson& scalar) {
    return convert(node, origin, scalar, "");
}

std::string yaml_where(const std::string& origin, const YAML::Mark& mark,
                       const std::string& field) {
    std::string out = origin;
    if (!mark.is_null()) {
        out += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
    }
    return field.empty() ? out : out + ": " + field;
}

}  // namespace envgate
