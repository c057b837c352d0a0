#include "runner/base/vocab/time.h"

#include <array>
#include <charconv>
#include <cstdio>

namespace envgate {
namespace {

bool read_int(std::string_view& s, size_t digits, int& out) {
    if (s.size() < digits) {
        return false;
    }
    out = 0;
    for (size_t i = 0; i < digits; ++i) {
        if (s[i] < '0' || s[i] > '9') {
            return false;
        }
        out = out * 10 + (s[i] - '0');
    }
    s.remove_prefix(digits);
    return true;
}

bool expect(std::string_view& s, char c) {
    if (s.empty() || s.front() != c) {
        return false;
    }
    s.remove_prefix(1);
    return true;
}

bool expect_either(std::string_view& s, char a, char b) {
    if (s.empty() || (s.front() != a && s.front() != b)) {
        return false;
    }
    s.remove_prefix(1);
    return true;
}

std::optional<std::chrono::minutes> read_offset(std::string_view& s) {
    if (s == "Z" || s == "z") {
        s.remove_prefix(1);
        return std::chrono::minutes(0);
    }
    if (s.empty() || (s.front() != '+' && s.front() != '-')) {
        return std::nullopt;
    }
    int sign = s.front() == '-' ? -1 : 1;
    s.remove_prefix(1);
    int hh = 0;
    int mm = 0;
    if (!read_int(s, 2, hh) || !expect(s, ':') || !read_int(s, 2, mm) || hh > 23 || mm > 59) {
        return std::nullopt;
    }
    return std::chrono::minutes(sign * (hh * 60 + mm));
}

}  // namespace

std::optional<TimePoint> parse_rfc3339(std::string_view s) {
    int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
    if (!read_int(s, 4, year) || !expect(s, '-') || !read_int(s, 2, month) || !expect(s, '-') ||
        !read_int(s, 2, day) || !expect_either(s, 'T', 't') || !read_int(s, 2, hour) ||
        !expect(s, ':') || !read_int(s, 2, minute) || !expect(s, ':') || !read_int(s, 2, second)) {
        return std::nullopt;
    }
    long micros = 0;
    if (!s.empty() && s.front() == '.') {
        s.remove_prefix(1);
        int digits = 0;
        while (!s.empty() && s.front() >= '0' && s.front() <= '9') {
            if (digits < 6) {
                micros = micros * 10 + (s.front() - '0');
            }
            ++digits;
            s.remove_prefix(1);
        }
        if (digits == 0) {
            return std::nullopt;
        }
        for (int i = digits; i < 6; ++i) {
            micros *= 10;
        }
    }
    auto offset = read_offset(s);
    if (!offset || !s.empty()) {
        return std::nullopt;
    }
    using namespace std::chrono;
    year_month_day ymd{std::chrono::year(year), std::chrono::month(static_cast<unsigned>(month)),
                       std::chrono::day(static_cast<unsigned>(day))};
    if (!ymd.ok() || hour > 23 || minute > 59 || second > 60) {
        return std::nullopt;
    }
    auto t = sys_days(ymd) + hours(hour) + minutes(minute) + seconds(second) + microseconds(micros);
    return time_point_cast<microseconds>(t - *offset);
}

namespace {

std::string format_with(TimePoint t, bool micro) {
    using namespace std::chrono;
    auto day = floor<days>(t);
    year_month_day ymd{day};
    hh_mm_ss<microseconds> tod{t - day};
    char buf[40];
    int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02ld:%02ld:%02ld", int(ymd.year()),
                          unsigned(ymd.month()), unsigned(ymd.day()), long(tod.hours().count()),
                          long(tod.minutes().count()), long(tod.seconds().count()));
    std::string out(buf, static_cast<size_t>(n));
    if (micro) {
        std::snprintf(buf, sizeof buf, ".%06ld", long(tod.subseconds().count()));
        out += buf;
    }
    return out + "Z";
}

struct DurationUnit {
    std::string_view suffix;
    double microseconds;
};

// The units parse_duration reads, in microseconds; "ms" comes before "m" so that the
// longer suffix wins.
constexpr std::array<DurationUnit, 5> k_duration_units = {
    {{"ms", 1e3}, {"s", 1e6}, {"m", 60e6}, {"h", 3600e6}, {"d", 86400e6}}};

// The unit `s` starts with, or null.
const DurationUnit* unit_at(std::string_view s) {
    for (const DurationUnit& unit : k_duration_units) {
        if (s.starts_with(unit.suffix)) {
            return &unit;
        }
    }
    return nullptr;
}

}  // namespace

std::string format_rfc3339(TimePoint t) {
    return format_with(t, false);
}

std::string format_rfc3339_micro(TimePoint t) {
    return format_with(t, true);
}

std::optional<Duration> parse_duration(std::string_view s) {
    if (s.empty()) {
        return std::nullopt;
    }
    bool bare = s.find_first_not_of("0123456789") == std::string_view::npos;
    if (bare) {
        long v = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        constexpr long k_max_seconds = Duration::max().count() / 1000000;
        if (ec == std::errc::result_out_of_range || v > k_max_seconds) {
            return Duration::max();  // saturated: callers say "too long"
        }
        if (ec != std::errc{}) {
            return std::nullopt;
        }
        return std::chrono::seconds(v);
    }
    Duration total{0};
    while (!s.empty()) {
        double v = 0;
        auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec != std::errc{} || v < 0) {
            return std::nullopt;
        }
        s.remove_prefix(static_cast<size_t>(p - s.data()));
        const DurationUnit* unit = unit_at(s);
        if (unit == nullptr) {
            return std::nullopt;
        }
        s.remove_prefix(unit->suffix.size());
        double us = v * unit->microseconds;
        if (us >= static_cast<double>(Duration::max().count() - total.count())) {
            return Duration::max();  // saturated, never wrapped
        }
        total += Duration(static_cast<long>(us));
    }
    return total;
}

std::string format_duration(Duration d) {
    using namespace std::chrono;
    if (d < seconds(1)) {
        return std::to_string(duration_cast<milliseconds>(d).count()) + "ms";
    }
    long s = static_cast<long>(duration_cast<seconds>(d).count());
    long h = s / 3600;
    long m = (s % 3600) / 60;
    long sec = s % 60;
    std::string out;
    if (h > 0) {
        out += std::to_string(h) + "h";
    }
    if (h > 0 || m > 0) {
        out += std::to_string(m) + "m";
    }
    return out + std::to_string(sec) + "s";
}

}  // namespace envgate
