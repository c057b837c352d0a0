// An enum's words as one table read both ways: the word a value is written as, and
// the value a word stands for. Each mapping from an enum to its text (states, results,
// policies, event types) is such a table beside its enum's functions, instead of a
// switch per direction.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace envgate {

template <typename E>
struct EnumName {
    E value;
    const char* name;
};

// The word of `value` in `table`; `otherwise` for a value the table does not list.
template <typename E, std::size_t N>
constexpr const char* name_of(const EnumName<E> (&table)[N], E value, const char* otherwise) {
    for (const EnumName<E>& entry : table) {
        if (entry.value == value) {
            return entry.name;
        }
    }
    return otherwise;
}

// The value `name` stands for in `table`, or nullopt when it is none of its words.
template <typename E, std::size_t N>
constexpr std::optional<E> value_of(const EnumName<E> (&table)[N], std::string_view name) {
    for (const EnumName<E>& entry : table) {
        if (name == entry.name) {
            return entry.value;
        }
    }
    return std::nullopt;
}

}  // namespace envgate
