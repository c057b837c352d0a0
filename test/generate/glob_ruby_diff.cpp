// Differential test of envgate's globs against GitLab's: a seeded generator writes
// patterns (literals, `*`, `**`, `**/`, `?`, classes with ranges, negation, escapes
// and odd edges, nested braces, UTF-8, dot names, stray or unclosed brackets and
// braces) each with paths made to match it, near misses and random paths, plus
// hand-picked cases; one `ruby` process answers every pair with File.fnmatch? as
// GitLab calls it (glob_fnmatch.rb), and glob_match, Glob and PathIndex must agree
// on all of them. A missing ruby fails the test.
// Usage: glob_ruby_diff RUBY_SCRIPT [SEED [PATTERNS]]
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "runner/config/glob.h"

namespace {

using envgate::Glob;
using envgate::glob_match;
using envgate::PathIndex;

// Characters a path segment is made of: plain, UTF-8, and the pattern metacharacters
// (which a path holds literally).
const std::vector<std::string> k_path_chars = {"a", "b", "c",  "A",  "1", ".", "-",
                                               "_", "é", "日", "*",  "?", "[", "]",
                                               "{", "}", ",",  "\\", "!", "^", " "};
// Literal characters of patterns, drawn often so that matches are common.
const std::vector<std::string> k_literals = {"a", "b", "c", ".", "-", "é", "A", "1"};

// Patterns from one random stream, the paths made to match them from another: the
// same pattern stream state gives the same pattern again with another sample.
class Generator {
  public:
    explicit Generator(unsigned seed) : m_rng(seed), m_sample_rng(seed ^ 0x5eedU) {}

    int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(m_rng); }
    bool chance(int percent) { return pick(100) < percent; }
    int sample_pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(m_sample_rng); }
    const std::string& sample_any(const std::vector<std::string>& v) {
        return v[static_cast<std::size_t>(sample_pick(static_cast<int>(v.size())))];
    }
    const std::string& any(const std::vector<std::string>& v) {
        return v[static_cast<std::size_t>(pick(static_cast<int>(v.size())))];
    }

    std::string path_char() { return sample_any(k_path_chars); }

    std::string random_segment() {
        std::string out;
        for (int n = sample_pick(5); n > 0; --n) {
            out += sample_pick(100) < 70 ? sample_any(k_literals) : path_char();
        }
        return out;
    }

    std::string random_path() {
        std::string out = sample_pick(10) == 0 ? "/" : "";
        for (int n = 1 + sample_pick(4), i = 0; i < n; ++i) {
            out += (i ? "/" : "") + random_segment();
        }
        return out + (sample_pick(10) == 0 ? "/" : "");
    }

    // `count` paths made to match one new pattern (Ruby decides whether they do).
    std::string pattern(int count, std::vector<std::string>& samples) {
        std::mt19937 start = m_rng;
        std::string pat;
        for (int k = 0; k < count; ++k) {
            m_rng = start;
            pat.clear();
            std::string sample;
            whole(pat, sample);
            samples.push_back(sample);
        }
        return pat;
    }

  private:
    void whole(std::string& pat, std::string& sample) {
        if (chance(5)) {
            pat += chance(50) ? "/" : "./";
            sample += "/";
        }
        for (int n = 1 + pick(4), i = 0; i < n; ++i) {
            if (i) {
                pat += "/";
                sample += "/";
            }
            if (chance(20)) {  // `**` as a whole segment: recursion when a '/' follows
                pat += "**";
                if (i + 1 < n) {
                    pat += "/";
                    for (int d = sample_pick(3); d > 0; --d) {
                        sample += random_segment() + "/";
                    }
                    ++i;
                    segment(pat, sample, 0);
                } else {
                    sample += random_segment();
                }
                continue;
            }
            segment(pat, sample, 0);
        }
        if (chance(5)) {
            pat += "/";
            sample += "/";
        }
    }

    void segment(std::string& pat, std::string& sample, int depth) {
        for (int n = pick(5); n > 0; --n) {
            element(pat, sample, depth);
        }
    }

    void element(std::string& pat, std::string& sample, int depth) {
        switch (pick(depth < 2 ? 10 : 9)) {
            case 0:
            case 1:
            case 2: {
                const std::string& c = any(k_literals);
                pat += c;
                sample += c;
                break;
            }
            case 3:
                pat += chance(70) ? "*" : "**";
                for (int k = sample_pick(3); k > 0; --k) {
                    sample += sample_pick(100) < 80 ? sample_any(k_literals) : path_char();
                }
                break;
            case 4:
                pat += "?";
                sample += path_char();
                break;
            case 5:
            case 6:
                character_class(pat, sample);
                break;
            case 7: {  // an escape: of a metacharacter, a plain one, '/' or nothing
                static const std::vector<std::string> escaped = {"*", "?",  "[", "]", "{", "}",
                                                                 ",", "\\", "a", "/", "é"};
                if (chance(5)) {
                    pat += "\\";
                    break;
                }
                const std::string& c = any(escaped);
                pat += "\\" + c;
                sample += c;
                break;
            }
            case 8: {  // a stray bracket or brace, or a comma
                static const std::vector<std::string> odd = {"[", "]", "{", "}", ",", "!", "^"};
                const std::string& c = any(odd);
                pat += c;
                sample += c;
                break;
            }
            default:
                braces(pat, sample, depth);
        }
    }

    void character_class(std::string& pat, std::string& sample) {
        static const std::vector<std::string> members = {
            "a", "b",   "c", "a-c", "c-a", "-",  "]", "!",   "^",   "\\]", "\\-",
            "é", "a-é", "/", "*",   "[",   "\\", ".", "A-Z", "0-9", "日"};
        std::string cls = "[";
        if (chance(30)) {
            cls += chance(50) ? "!" : "^";
        }
        for (int n = pick(4); n > 0; --n) {
            cls += any(members);
        }
        if (!chance(8)) {
            cls += "]";
        }
        pat += cls;
        sample += sample_pick(100) < 60 ? sample_any(k_literals) : path_char();
    }

    void braces(std::string& pat, std::string& sample, int depth) {
        std::vector<std::string> samples;
        pat += "{";
        for (int n = pick(4), i = 0; i <= n; ++i) {
            std::string one;
            pat += i ? "," : "";
            if (chance(15)) {
                pat += "/";
                one += "/";
            }
            for (int k = pick(3); k > 0; --k) {
                element(pat, one, depth + 1);
            }
            samples.push_back(one);
        }
        if (!chance(8)) {
            pat += "}";
        }
        sample += sample_any(samples);
    }

    std::mt19937 m_rng;
    std::mt19937 m_sample_rng;
};

// Near misses of a matching path: one character dropped, added or changed.
std::string mutate(Generator& g, std::string s) {
    if (s.empty()) {
        return g.path_char();
    }
    auto at = static_cast<std::size_t>(g.sample_pick(static_cast<int>(s.size())));
    while (at > 0 && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) {
        --at;  // a whole UTF-8 character
    }
    std::size_t len = 1;
    while (at + len < s.size() && (static_cast<unsigned char>(s[at + len]) & 0xC0) == 0x80) {
        ++len;
    }
    switch (g.sample_pick(3)) {
        case 0:
            return s.erase(at, len);
        case 1:
            return s.insert(at, g.sample_pick(10) < 3 ? "/" : g.path_char());
        default:
            return s.replace(at, len, g.path_char());
    }
}

struct Pair {
    std::string pattern;
    std::string path;
};

// Edge cases chosen by hand, each against several paths.
std::vector<Pair> hand_picked() {
    const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
        {"k8s/{staging,common}/**/*.yaml",
         {"k8s/staging/a.yaml", "k8s/common/x/y/b.yaml", "k8s/prod/a.yaml", "k8s/staging/a.yml",
          "k8s/staging/.hidden.yaml", "k8s/staging", "k8s/{staging,common}/a.yaml"}},
        {"dir/**", {"dir/a", "dir/a/b", "dir", "dir/", "dir/.env"}},
        {"dir/**/*", {"dir/a", "dir/a/b", "dir", "dir/", "dir/.a/.b"}},
        {"**", {"a", "a/b", "", ".git"}},
        {"**/", {"", "a/", "a/b/", "a"}},
        {"**/*", {"a", "a/b", ".a/.b", ""}},
        {"**/**/x", {"x", "a/x", "a/b/x", "a/b/y"}},
        {"a/**/b/**/c", {"a/b/c", "a/x/b/y/c", "a/b/b/c/c", "a/c"}},
        {"*", {"", ".", "..", "a/b", "a"}},
        {"a\\", {"a", "a\\", "a/"}},
        {"a\\/b", {"a/b", "a\\/b"}},
        {"[]a]", {"]", "a", "[]a]", "]a]"}},
        {"[!]", {"x", "/", "!", ""}},
        {"[^a-c]x", {"dx", "ax", "/x", "éx"}},
        {"[a-]", {"a", "-", "b"}},
        {"[\\]]", {"]", "\\"}},
        {"[a\\-c]", {"a", "b", "-", "c"}},
        {"[c-a]", {"a", "b", "c"}},
        {"a[/]b", {"a/b", "a[/]b"}},
        {"app/[abc", {"app/[abc", "app/a"}},
        {"{a,b", {"a", "{a,b", "b"}},
        {"a}", {"a}", "a"}},
        {"}{a,b}", {"}a", "}b", "a"}},
        {"[{]", {"{", "[{]"}},
        {"{a,{b,c}d}e", {"ae", "bde", "cde", "be"}},
        {"{,a}b", {"b", "ab"}},
        {"{}", {"", "{}"}},
        {"\\{a,b}", {"{a,b}", "a"}},
        {"{a\\,b}", {"a,b", "{a,b}", "a"}},
        {"{a/b,c}/d", {"a/b/d", "c/d"}},
        {"é?", {"éa", "é日", "éé", "é"}},
        {"[é-日]", {"ë", "日", "a"}},
        {"/k8s/a.yaml", {"k8s/a.yaml", "/k8s/a.yaml"}},
        {"./k8s/*", {"k8s/a", "./k8s/a"}},
        {"a//b", {"a//b", "a/b"}},
        {"a/*/b", {"a//b", "a/x/b"}},
        {"", {"", "a"}},
    };
    std::vector<Pair> out;
    for (const auto& [pattern, paths] : cases) {
        for (const std::string& path : paths) {
            out.push_back({pattern, path});
        }
    }
    return out;
}

// Ruby's answers ('1', '0' or 'E') to every pair, from one `ruby` process.
std::string ask_ruby(const std::string& script, const std::vector<Pair>& pairs) {
    char name[] = "/tmp/envgate-glob-pairs-XXXXXX";
    int fd = mkstemp(name);
    if (fd < 0) {
        std::cerr << "glob_ruby_diff: cannot create a temporary file\n";
        return "";
    }
    close(fd);
    {
        std::ofstream f(name, std::ios::binary);
        for (const Pair& p : pairs) {
            f << p.pattern << '\0' << p.path << '\0';
        }
    }
    std::string command = "ruby '" + script + "' '" + name + "'";
    std::string answers;
    if (FILE* pipe = popen(command.c_str(), "r")) {
        char buf[4096];
        for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) {
            answers.append(buf, n);
        }
        int status = pclose(pipe);
        if (status != 0) {
            std::cerr << "glob_ruby_diff: `" << command << "` failed (exit "
                      << (WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status))
                      << "); the referee is Ruby: install the Debian package ruby\n";
            answers.clear();
        }
    }
    std::remove(name);
    return answers;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: glob_ruby_diff RUBY_SCRIPT [SEED [PATTERNS]]\n";
        return 2;
    }
    unsigned seed = argc > 2 ? static_cast<unsigned>(std::stoul(argv[2])) : 24;
    int patterns = argc > 3 ? std::stoi(argv[3]) : 1500;
    Generator g(seed);
    std::vector<Pair> pairs = hand_picked();
    std::size_t generated_from = pairs.size();
    for (int i = 0; i < patterns; ++i) {
        std::vector<std::string> paths;
        std::string pat = g.pattern(3, paths);
        for (int k = 0; k < 3; ++k) {
            paths.push_back(mutate(g, paths[static_cast<std::size_t>(g.sample_pick(3))]));
        }
        paths.push_back(g.random_path());
        paths.push_back(g.random_path());
        for (const std::string& p : paths) {
            pairs.push_back({pat, p});
        }
    }
    std::string ruby = ask_ruby(argv[1], pairs);
    if (ruby.size() != pairs.size()) {
        std::cerr << "glob_ruby_diff: Ruby answered " << ruby.size() << " of " << pairs.size()
                  << " pairs\n";
        return 1;
    }
    std::size_t disagreements = 0;
    std::size_t matches = 0;
    auto report = [&](const Pair& p, const char* who, bool ours, char theirs) {
        if (++disagreements <= 30) {
            std::cout << "DISAGREE " << who << ": pattern \"" << p.pattern << "\" path \"" << p.path
                      << "\": envgate " << ours << ", Ruby " << theirs << "\n";
        }
    };
    // Pairs come in runs of one pattern: glob_match and Glob on each pair, PathIndex
    // on the run's paths at once.
    for (std::size_t begin = 0; begin < pairs.size();) {
        std::size_t end = begin;
        std::vector<std::string> paths;
        while (end < pairs.size() && pairs[end].pattern == pairs[begin].pattern) {
            paths.push_back(pairs[end++].path);
        }
        Glob glob(pairs[begin].pattern);
        PathIndex index(paths);
        std::vector<std::size_t> found = index.matching(glob);
        for (std::size_t i = begin; i < end; ++i) {
            const Pair& p = pairs[i];
            char want = ruby[i];
            matches += want == '1';
            bool in_index = std::find(found.begin(), found.end(), i - begin) != found.end();
            if (want == 'E' || glob_match(p.pattern, p.path) != (want == '1')) {
                report(p, "glob_match", glob_match(p.pattern, p.path), want);
            } else if (glob.matches(p.path) != (want == '1')) {
                report(p, "Glob", glob.matches(p.path), want);
            } else if (in_index != (want == '1')) {
                report(p, "PathIndex", in_index, want);
            }
        }
        begin = end;
    }
    std::cout << "glob_ruby_diff: seed " << seed << ", " << pairs.size() << " pairs ("
              << generated_from << " hand-picked, " << pairs.size() - generated_from
              << " generated from " << patterns << " patterns), " << matches
              << " matching in Ruby, " << disagreements << " disagreements\n";
    return disagreements == 0 ? 0 : 1;
}
