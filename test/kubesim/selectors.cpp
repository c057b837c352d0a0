// Label and field selectors: see selectors.h.
#include "test/kubesim/selectors.h"

#include <algorithm>

namespace kubesim {

namespace {

using envgate::Code;
using envgate::Result;
using envgate::Status;
using nlohmann::json;

std::string trim(const std::string& s) {
    size_t b = s.find_first_not_of(' ');
    size_t e = s.find_last_not_of(' ');
    return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// Splits on commas that are not inside parentheses.
std::vector<std::string> split_terms(const std::string& text) {
    std::vector<std::string> out;
    int depth = 0;
    std::string cur;
    for (char c : text) {
        if (c == '(') {
            ++depth;
        } else if (c == ')') {
            --depth;
        }
        if (c == ',' && depth == 0) {
            out.push_back(trim(cur));
            cur.clear();
        } else {
            cur += c;
        }
    }
    if (!trim(cur).empty()) {
        out.push_back(trim(cur));
    }
    return out;
}

Result<Requirement> parse_set_term(const std::string& term, size_t pos, const std::string& op) {
    Requirement req{trim(term.substr(0, pos)), op, {}};
    size_t open = term.find('(', pos);
    size_t close = term.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) {
        return Status(Code::failed, "unable to parse requirement: " + term);
    }
    for (auto& v : split_terms(term.substr(open + 1, close - open - 1))) {
        req.values.push_back(v);
    }
    return req;
}

Result<Requirement> parse_term(const std::string& term, bool labels) {
    if (labels) {
        if (term.rfind('!', 0) == 0) {
            return Requirement{trim(term.substr(1)), "!exists", {}};
        }
        for (const std::string op : {" notin ", " in "}) {
            size_t pos = term.find(op);
            if (pos != std::string::npos) {
                return parse_set_term(term, pos, trim(op));
            }
        }
    }
    for (const std::string op : {"!=", "==", "="}) {
        size_t pos = term.find(op);
        if (pos != std::string::npos) {
            std::string norm = op == "!=" ? "!=" : "=";
            return Requirement{
                trim(term.substr(0, pos)), norm, {trim(term.substr(pos + op.size()))}};
        }
    }
    if (labels) {
        return Requirement{trim(term), "exists", {}};
    }
    return Status(Code::failed,
                  "invalid selector: '" + term + "'; can't understand '" + term + "'");
}

Result<std::vector<Requirement>> parse_list(const std::string& text, bool labels) {
    std::vector<Requirement> out;
    for (auto& term : split_terms(text)) {
        auto req = parse_term(term, labels);
        if (!req) {
            return req.status();
        }
        out.push_back(*req);
    }
    return out;
}

const json* lookup_path(const json& obj, const std::string& path) {
    const json* cur = &obj;
    size_t start = 0;
    while (start <= path.size()) {
        size_t dot = path.find('.', start);
        std::string part =
            path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        if (!cur->is_object() || !cur->contains(part)) {
            return nullptr;
        }
        cur = &(*cur)[part];
        if (dot == std::string::npos) {
            break;
        }
        start = dot + 1;
    }
    return cur;
}

bool requirement_matches(const Requirement& req, const json* value) {
    std::string text;
    if (value != nullptr) {
        text = value->is_string() ? value->get<std::string>() : value->dump();
    }
    const auto& vals = req.values;
    bool in = std::find(vals.begin(), vals.end(), text) != vals.end();
    if (req.op == "=") {
        return value != nullptr ? text == vals[0] : vals[0].empty();
    }
    if (req.op == "!=") {
        return value == nullptr ? !vals[0].empty() : text != vals[0];
    }
    if (req.op == "in") {
        return value != nullptr && in;
    }
    if (req.op == "notin") {
        return value == nullptr || !in;
    }
    if (req.op == "exists") {
        return value != nullptr;
    }
    return value == nullptr;  // !exists
}

}  // namespace

Result<Selector> parse_selector(const std::string& label_selector,
                                const std::string& field_selector) {
    Selector sel;
    auto labels = parse_list(label_selector, true);
    if (!labels) {
        return labels.status();
    }
    auto fields = parse_list(field_selector, false);
    if (!fields) {
        return fields.status();
    }
    sel.labels = *labels;
    sel.fields = *fields;
    return sel;
}

bool selector_matches(const Selector& selector, const json& obj) {
    static const json k_empty = json::object();
    const json& meta = obj.at("metadata");
    const json& labels = meta.contains("labels") ? meta["labels"] : k_empty;
    for (const auto& req : selector.labels) {
        const json* value = labels.contains(req.key) ? &labels[req.key] : nullptr;
        if (!requirement_matches(req, value)) {
            return false;
        }
    }
    for (const auto& req : selector.fields) {
        if (!requirement_matches(req, lookup_path(obj, req.key))) {
            return false;
        }
    }
    return true;
}

bool label_selector_matches(const json& label_selector, const json& labels) {
    if (label_selector.contains("matchLabels")) {
        for (auto& [k, v] : label_selector["matchLabels"].items()) {
            if (!labels.contains(k) || labels[k] != v) {
                return false;
            }
        }
    }
    if (label_selector.contains("matchExpressions")) {
        for (const auto& expr : label_selector["matchExpressions"]) {
            Requirement req{expr.value("key", ""), expr.value("operator", ""), {}};
            std::transform(req.op.begin(), req.op.end(), req.op.begin(), ::tolower);
            req.op = req.op == "doesnotexist" ? "!exists" : req.op;
            for (const auto& v : expr.value("values", json::array())) {
                req.values.push_back(v.get<std::string>());
            }
            const json* value = labels.contains(req.key) ? &labels[req.key] : nullptr;
            if (!requirement_matches(req, value)) {
                return false;
            }
        }
    }
    return true;
}

}  // namespace kubesim
