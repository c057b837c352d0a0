// A bounded YAML/JSON reader for linting: parses a stream with yaml-cpp's event
// parser into one small tree per document, each node keeping its file position.
// Limits on input size, document size, nesting depth and alias expansion turn a
// YAML bomb or a huge document into an error naming file and line, never an OOM.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "runner/base/vocab/status.h"

namespace envgate::lint {

struct ReadLimits {
    std::size_t max_source_bytes = 64u << 20;     // one file or standard input
    std::size_t max_document_bytes = 8u << 20;    // the API server refuses objects of ~3 MiB
    int max_depth = 100;                          // Kubernetes objects nest ~20 deep
    std::uint64_t max_expanded_nodes = 1u << 20;  // per document, aliases counted expanded
};

// A position in an input: 1-based line and column (0 when unknown).
struct Position {
    int line = 0;
    int column = 0;
};

struct Node {
    enum class Kind { null, scalar, sequence, map };
    Kind kind = Kind::null;
    std::string value;           // scalar text
    bool quoted = false;         // a quoted or block scalar: always a string, never a number
    bool literal_block = false;  // written as `|`: its lines follow the indicator line
    int block_column = 0;        // a block's content column (1-based), from its first line
    Position pos;
    std::vector<const Node*> items;  // sequence items; a map's keys and values alternate
    std::uint64_t weight = 1;        // nodes below and including this one, aliases expanded

    bool is_map() const { return kind == Kind::map; }
    bool is_seq() const { return kind == Kind::sequence; }
    bool is_scalar() const { return kind == Kind::scalar; }
    // The value of a map's `key` (the last one when repeated), or nullptr.
    const Node* get(std::string_view key) const;
    // A scalar's text, or "" for any other node (null included).
    const std::string& text() const;
};

// One document of a stream; its nodes live as long as it does.
struct Document {
    std::deque<Node> nodes;
    const Node* root = nullptr;
    Position start;
};

// Called with each document in order (it may move the document away to keep it); a
// non-ok Status stops the reading.
using DocumentSink = std::function<Status(Document&)>;

// Reads every document of `text`, named `file` in messages. Errors are `invalid`:
// "FILE:LINE:COL: not valid YAML: ..." or the limit that was exceeded.
Status read_documents(std::string_view text, const std::string& file, const ReadLimits& limits,
                      const DocumentSink& sink);

// Reads all of `in` (a file or standard input, named `file`) up to
// `limits.max_source_bytes`; more than that is an `invalid` error, read no further.
Result<std::string> read_source(std::istream& in, const std::string& file,
                                const ReadLimits& limits);

}  // namespace envgate::lint
