#include "runner/base/yaml_bounded.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <sstream>

namespace envgate {
namespace {

std::string at(const std::string& origin, const YAML::Mark& mark) {
    if (mark.is_null()) {
        return origin;
    }
    return fmt::format("{}:{}:{}", origin, mark.line + 1, mark.column + 1);
}

// Counts the parser's events and stops it past a budget. A first pass with it bounds
// what yaml-cpp 0.7 itself may do: on some input (a lone ",") its document loop never
// ends, creating nodes until memory runs out.
class EventBudget : public YAML::EventHandler {
  public:
    struct Spent {
        YAML::Mark mark;
    };
    explicit EventBudget(std::size_t budget) : m_left(budget) {}
    void OnDocumentStart(const YAML::Mark& mark) override { spend(mark); }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { spend(mark); }
    void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { spend(mark); }
    void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  const std::string&) override {
        spend(mark);
    }
    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                         YAML::EmitterStyle::value) override {
        spend(mark);
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                    YAML::EmitterStyle::value) override {
        spend(mark);
    }
    void OnMapEnd() override {}

  private:
    void spend(const YAML::Mark& mark) {
        if (m_left-- == 0) {
            throw Spent{mark};
        }
    }
    std::size_t m_left;
};

Status check_events(const std::string& text, const std::string& origin, const YamlLimits& limits) {
    std::istringstream in(text);
    YAML::Parser parser(in);
    EventBudget budget(limits.max_nodes);
    try {
        while (parser.HandleNextDocument(budget)) {
        }
    } catch (const EventBudget::Spent& spent) {
        return Status(Code::invalid, fmt::format("{}: more than {} YAML nodes (or documents)",
                                                 at(origin, spent.mark), limits.max_nodes));
    }
    return Status::ok();
}

class Walk {
  public:
    Walk(const std::string& origin, const YamlLimits& limits)
        : m_origin(origin), m_limits(limits) {}

    Status visit(const YAML::Node& node, int depth) {
        if (++m_nodes > m_limits.max_nodes) {
            return Status(Code::invalid,
                          fmt::format("{}: more than {} YAML nodes once aliases are expanded "
                                      "(nested aliases, a \"billion laughs\" document?)",
                                      at(m_origin, node.Mark()), m_limits.max_nodes));
        }
        if (depth > m_limits.max_depth) {
            return Status(Code::invalid,
                          fmt::format("{}: nested more than {} levels deep",
                                      at(m_origin, node.Mark()), m_limits.max_depth));
        }
        if (node.IsScalar()) {
            m_bytes += node.Scalar().size();
            if (m_bytes > m_limits.max_expanded_bytes) {
                return Status(Code::invalid,
                              fmt::format("{}: more than {} bytes of text once aliases are "
                                          "expanded (a long text aliased many times?)",
                                          at(m_origin, node.Mark()), m_limits.max_expanded_bytes));
            }
        } else if (node.IsSequence()) {
            for (const auto& item : node) {
                TRY(visit(item, depth + 1));
            }
        } else if (node.IsMap()) {
            for (const auto& kv : node) {
                TRY(visit(kv.first, depth + 1));
                TRY(visit(kv.second, depth + 1));
            }
        }
        return Status::ok();
    }

  private:
    const std::string& m_origin;
    const YamlLimits& m_limits;
    std::size_t m_nodes = 0;
    std::size_t m_bytes = 0;  // scalar text visited
};

}  // namespace

Result<std::vector<YAML::Node>> load_yaml_bounded(const std::string& text,
                                                  const std::string& origin,
                                                  const YamlLimits& limits) {
    if (text.size() > limits.max_bytes) {
        return Status(Code::invalid, fmt::format("{}: {} bytes is too large (at most {})", origin,
                                                 text.size(), limits.max_bytes));
    }
    std::vector<YAML::Node> docs;
    try {
        TRY(check_events(text, origin, limits));
        docs = YAML::LoadAll(text);
        Walk walk(origin, limits);
        for (const auto& d : docs) {
            TRY(walk.visit(d, 0));
        }
    } catch (const YAML::Exception& e) {
        return Status(Code::invalid,
                      fmt::format("{}: YAML syntax error: {}", at(origin, e.mark), e.msg));
    }
    return docs;
}

}  // namespace envgate
