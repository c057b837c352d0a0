// The event handler behind read_documents: builds each document's tree while
// enforcing the limits, so a hostile input fails at the first event past a limit.
#include "runner/lint/yaml_tree.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <map>
#include <sstream>

namespace envgate::lint {
namespace {

// Thrown by the handler to stop the parser; carries the message.
struct LimitExceeded {
    YAML::Mark mark;
    std::string message;
};

Position position(const YAML::Mark& m) {
    if (m.is_null()) {
        return {};
    }
    return {m.line + 1, m.column + 1};
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

class TreeBuilder : public YAML::EventHandler {
  public:
    TreeBuilder(std::string_view text, const ReadLimits& limits) : m_text(text), m_limits(limits) {}

    Document take() { return std::move(m_doc); }

    void OnDocumentStart(const YAML::Mark& mark) override {
        m_doc = Document{};
        m_doc.start = position(mark);
        m_doc_pos = mark.pos;
        m_anchors.clear();
    }
    void OnDocumentEnd() override {}

    void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
        add(new_node(Node::Kind::null, mark), anchor);
    }

    void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
        guard(mark);
        auto it = m_anchors.find(anchor);
        if (it == m_anchors.end()) {
            throw LimitExceeded{mark, "alias to an unknown anchor"};
        }
        attach(it->second, mark);
    }

    void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  const std::string& value) override {
        Node& n = new_node(Node::Kind::scalar, mark);
        n.value = value;
        n.quoted = tag == "!";
        n.literal_block = mark.pos >= 0 && static_cast<std::size_t>(mark.pos) < m_text.size() &&
                          m_text[mark.pos] == '|';
        if (n.literal_block) {
            n.block_column = block_column(static_cast<std::size_t>(mark.pos));
        }
        add(n, anchor);
    }

    void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                         YAML::EmitterStyle::value) override {
        open(Node::Kind::sequence, mark, anchor);
    }
    void OnSequenceEnd() override { close(); }

    void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                    YAML::EmitterStyle::value) override {
        open(Node::Kind::map, mark, anchor);
    }
    void OnMapEnd() override { close(); }

  private:
    // The indentation of the first non-blank line after the block indicator at `pos`.
    int block_column(std::size_t pos) const {
        std::size_t line = m_text.find('\n', pos);
        while (line != std::string_view::npos) {
            std::size_t first = m_text.find_first_not_of(' ', line + 1);
            if (first == std::string_view::npos || m_text[first] != '\n') {
                return first == std::string_view::npos ? 1 : static_cast<int>(first - line);
            }
            line = first;
        }
        return 1;
    }

    void guard(const YAML::Mark& mark) {
        if (mark.pos >= 0 &&
            static_cast<std::size_t>(mark.pos - m_doc_pos) > m_limits.max_document_bytes) {
            throw LimitExceeded{mark, fmt::format("document larger than {} MiB; a Kubernetes "
                                                  "object is at most a few MiB",
                                                  m_limits.max_document_bytes >> 20)};
        }
    }

    Node& new_node(Node::Kind kind, const YAML::Mark& mark) {
        guard(mark);
        Node& n = m_doc.nodes.emplace_back();
        n.kind = kind;
        n.pos = position(mark);
        return n;
    }

    void add(Node& n, YAML::anchor_t anchor) {
        if (anchor != YAML::NullAnchor) {
            m_anchors[anchor] = &n;
        }
        attach(&n, YAML::Mark::null_mark());
    }

    void attach(const Node* n, const YAML::Mark& mark) {
        if (m_open.empty()) {
            m_doc.root = n;
            return;
        }
        Node* parent = m_open.back();
        parent->items.push_back(n);
        parent->weight = saturating_add(parent->weight, n->weight);
        if (parent->weight > m_limits.max_expanded_nodes) {
            throw LimitExceeded{mark.is_null() ? m_last_open : mark,
                                fmt::format("more than {} nodes once aliases are expanded (a "
                                            "YAML bomb?)",
                                            m_limits.max_expanded_nodes)};
        }
    }

    void open(Node::Kind kind, const YAML::Mark& mark, YAML::anchor_t anchor) {
        if (static_cast<int>(m_open.size()) >= m_limits.max_depth) {
            throw LimitExceeded{mark,
                                fmt::format("nested deeper than {} levels", m_limits.max_depth)};
        }
        Node& n = new_node(kind, mark);
        if (anchor != YAML::NullAnchor) {
            m_anchors[anchor] = &n;
        }
        m_open.push_back(&n);
        m_last_open = mark;
    }

    // A container's weight is final once it closes; only then may it join its parent.
    void close() {
        Node* n = m_open.back();
        m_open.pop_back();
        attach(n, YAML::Mark::null_mark());
    }

    std::string_view m_text;
    const ReadLimits& m_limits;
    Document m_doc;
    int m_doc_pos = 0;
    YAML::Mark m_last_open;
    std::vector<Node*> m_open;
    std::map<YAML::anchor_t, const Node*> m_anchors;
};

std::string at(const std::string& file, const YAML::Mark& mark) {
    if (mark.is_null()) {
        return file;
    }
    return fmt::format("{}:{}:{}", file, mark.line + 1, mark.column + 1);
}

}  // namespace

const Node* Node::get(std::string_view key) const {
    if (kind != Kind::map) {
        return nullptr;
    }
    const Node* found = nullptr;
    for (std::size_t i = 0; i + 1 < items.size(); i += 2) {
        if (items[i]->kind == Kind::scalar && items[i]->value == key) {
            found = items[i + 1];
        }
    }
    return found;
}

const std::string& Node::text() const {
    static const std::string k_empty;
    return kind == Kind::scalar ? value : k_empty;
}

Status read_documents(std::string_view text, const std::string& file, const ReadLimits& limits,
                      const DocumentSink& sink) {
    if (text.size() > limits.max_source_bytes) {
        return Status(Code::invalid, fmt::format("{}: larger than {} MiB; split the input", file,
                                                 limits.max_source_bytes >> 20));
    }
    // YAML (1.2 section 5.1) and JSON allow no C0 control character but tab, LF, CR.
    auto control = std::find_if(text.begin(), text.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r';
    });
    if (control != text.end()) {
        auto line = 1 + std::count(text.begin(), control, '\n');
        return Status(Code::invalid,
                      fmt::format("{}:{}: binary data (control character 0x{:02X}), not YAML or "
                                  "JSON",
                                  file, line, static_cast<unsigned char>(*control)));
    }
    std::istringstream in{std::string(text)};
    TreeBuilder builder(text, limits);
    try {
        YAML::Parser parser(in);
        // Every document takes at least a `---` line, so more documents than that is
        // yaml-cpp going round in circles (lint_fuzz found inputs where it never ends).
        const std::size_t max_documents = text.size() / 3 + 2;
        for (std::size_t n = 1; parser.HandleNextDocument(builder); ++n) {
            if (n > max_documents) {
                return Status(
                    Code::invalid,
                    file + ": not valid YAML or JSON: the parser stopped making progress");
            }
            Document doc = builder.take();
            if (doc.root != nullptr) {
                TRY(sink(doc));
            }
        }
    } catch (const LimitExceeded& e) {
        return Status(Code::invalid, at(file, e.mark) + ": " + e.message);
    } catch (const YAML::Exception& e) {
        return Status(Code::invalid, at(file, e.mark) + ": not valid YAML or JSON: " + e.msg);
    }
    return Status::ok();
}

Result<std::string> read_source(std::istream& in, const std::string& file,
                                const ReadLimits& limits) {
    std::string out;
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        out.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (out.size() > limits.max_source_bytes) {
            return Status(Code::invalid, fmt::format("{}: larger than {} MiB; split the input",
                                                     file, limits.max_source_bytes >> 20));
        }
    }
    if (in.bad()) {
        return Status(Code::io, file + ": read error");
    }
    return out;
}

}  // namespace envgate::lint
