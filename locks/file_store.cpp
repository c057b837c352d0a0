#include "locks/file_store.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string_view>

#include "locks/record_json.h"
#include "runner/base/files.h"
#include "runner/base/utf8.h"

namespace envgate::locks {
namespace {

namespace fs = std::filesystem;

Status io_error(const std::string& what, const std::string& path) {
    return Status(Code::io, what + " " + path + ": " + std::strerror(errno));
}

// Closes a file descriptor (and so drops its flock) on every path out.
class Fd {
  public:
    explicit Fd(int fd) : m_fd(fd) {}
    ~Fd() {
        if (m_fd >= 0) {
            ::close(m_fd);
        }
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return m_fd; }

  private:
    int m_fd;
};

Status lock_exclusive(int fd, const std::string& path) {
    while (::flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            return io_error("cannot flock", path);
        }
    }
    return Status::ok();
}

// The record a file holds and its revision; anything not understood is `invalid`
// (naming the field), so no writer replaces what it could not read.
Result<Versioned> decode_record_file(const std::string& text, const std::string& name) {
    TRY_ASSIGN(nlohmann::json j, parse_record_text(text));
    std::int64_t revision = 0;
    if (j.is_object() && j.contains("revision")) {
        if (!j["revision"].is_number_integer() || j["revision"].get<std::int64_t>() < 0) {
            return Status(Code::invalid, "revision: expected a whole number");
        }
        if (j["revision"].is_number_unsigned() &&
            j["revision"].get<std::uint64_t>() >=
                static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            // The next write would wrap to a negative revision (and its fencing token).
            return Status(Code::invalid,
                          "revision: " + j["revision"].dump() + " is too large to grow");
        }
        revision = j["revision"].get<std::int64_t>();
    }
    TRY_ASSIGN(LockRecord record, record_from_json(j, name));
    return Versioned{std::move(record), std::to_string(revision), {}};
}

// A whole file's text; `not_found` when there is none.
Result<std::string> read_text(const std::string& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) {
        if (errno == ENOENT) {
            return Status(Code::not_found, path + ": no such file");
        }
        return io_error("cannot open", path);
    }
    std::string text;
    char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd.get(), buf, sizeof(buf));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return io_error("cannot read", path);
        }
        if (n == 0) {
            return text;
        }
        text.append(buf, static_cast<std::size_t>(n));
    }
}

// Reads a stored file: the record and its revision ("" when there is no file).
Result<Versioned> read_file(const std::string& path, const std::string& name) {
    Result<std::string> read = read_text(path);
    if (!read.is_ok()) {
        if (read.status().code() != Code::not_found) {
            return read.status();
        }
        LockRecord free_record;
        free_record.name = name;
        return Versioned{free_record, "", {}};
    }
    const std::string& text = read.value();
    auto decoded = decode_record_file(text, name);
    if (!decoded.is_ok()) {
        return decoded.status().with_context(path + ": not a lock record");
    }
    return decoded;
}

// What changes a record file: a rename onto it (every FileStore write), an in-place
// write, a removal; and the directory itself going away.
constexpr std::uint32_t k_record_events =
    IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF;

// Which inotify events wake a wait: in the folder watched as `record_wd`, those that
// name the lock's record file (`record`; empty: none do); in the queue's folder, those
// that name a waiter file other than `self` (or only `predecessor`'s, when set), and
// the removal of `self`. The watch itself going away always wakes it.
struct WakeFilter {
    int record_wd = -1;
    std::string record;
    std::string self;
    std::string predecessor;

    bool wakes(const inotify_event& e) const {
        if ((e.mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_Q_OVERFLOW)) != 0) {
            return true;
        }
        if (e.len == 0) {
            return false;
        }
        std::string_view file(e.name);
        if (e.wd == record_wd) {
            return !record.empty() && file == record;
        }
        if (file.front() == '.') {
            return false;  // a temp file on its way in
        }
        if (!self.empty() && file == self) {
            return (e.mask & (IN_DELETE | IN_MOVED_FROM)) != 0;
        }
        return predecessor.empty() || file == predecessor;
    }
};

// Reads the pending inotify events; true when one of them wakes the wait.
Result<bool> drain_events(int fd, const WakeFilter& filter, const std::string& dir) {
    bool ours = false;
    alignas(inotify_event) char buf[4096];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof(buf));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && errno == EAGAIN) {
            return ours;
        }
        if (n <= 0) {
            return io_error("cannot read the inotify events of", dir);
        }
        for (char* p = buf; p < buf + n;) {
            const auto* e = reinterpret_cast<const inotify_event*>(p);
            ours = ours || filter.wakes(*e);
            p += sizeof(inotify_event) + e->len;
        }
    }
}

// A waiter's id as a file name: letters, digits, `-` and `_` as they are, every other
// byte as %XX (so no name starts with a dot, which temp files use); a name too long
// for the file system keeps its start and a hash of the whole.
std::string waiter_file_name(const std::string& id) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : id) {
        if (std::isalnum(c) || c == '-' || c == '_') {
            out += static_cast<char>(c);
        } else {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    if (out.size() > 200) {
        std::uint64_t h = 1469598103934665603ULL;  // FNV-1a
        for (unsigned char c : id) {
            h = (h ^ c) * 1099511628211ULL;
        }
        char tail[24];
        std::snprintf(tail, sizeof(tail), "~%016llx", static_cast<unsigned long long>(h));
        out = out.substr(0, 150) + tail;
    }
    return out + ".json";
}

// A waiter file: its entry (with the file's revision as its version). A file that is
// not one is `invalid`, naming it: no waiter's place is guessed.
Result<Waiter> read_waiter_file(const std::string& path, const std::string& name) {
    TRY_ASSIGN(std::string text, read_text(path));
    auto parsed = parse_record_text(text);
    if (!parsed.is_ok()) {
        return parsed.status().with_context(path + ": not a queue entry");
    }
    auto w = waiter_from_json(*parsed, name);
    if (!w.is_ok()) {
        return w.status().with_context(path + ": not a queue entry");
    }
    const nlohmann::json& j = *parsed;
    if (!j.contains("revision") || !j["revision"].is_number_integer()) {
        return Status(Code::invalid, path + ": not a queue entry: revision: expected an integer");
    }
    w->version = std::to_string(j["revision"].get<std::int64_t>());
    return w;
}

constexpr std::uint32_t k_queue_events =
    IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF;
}  // namespace

FileStore::FileStore(std::string directory, BeforeRename before_rename)
    : m_directory(std::move(directory)), m_before_rename(std::move(before_rename)) {}

std::string FileStore::record_path(const std::string& name) const {
    return m_directory + "/" + name + ".json";
}

std::string FileStore::describe() const {
    return "file store " + m_directory;
}

FileStore::~FileStore() {
    for (auto& [name, watch] : m_watches) {
        ::close(watch.fd);
    }
}

std::string FileStore::queue_dir(const std::string& name) const {
    return m_directory + "/" + name + ".queue";
}

std::string FileStore::waiter_path(const std::string& name, const std::string& id) const {
    return queue_dir(name) + "/" + waiter_file_name(id);
}

void FileStore::forget_events(const std::string& name) {
    MutexLock lock(m_mutex);
    auto it = m_watches.find(name);
    if (it == m_watches.end()) {
        return;
    }
    alignas(inotify_event) char buf[4096];
    while (::read(it->second.fd, buf, sizeof(buf)) > 0) {
    }
}

Result<Versioned> FileStore::read_record(const std::string& name) {
    TRY(check_lock_name(name));
    return read_file(record_path(name), name);
}

// The lock record, then every waiter file of its queue (sorted by name, so readers
// agree on the order of equal keys). Events the watch holds so far are dropped first:
// what they announce is in this read.
Result<Versioned> FileStore::read(const std::string& name) {
    TRY(check_lock_name(name));
    forget_events(name);
    TRY_ASSIGN(Versioned v, read_file(record_path(name), name));
    const std::string dir = queue_dir(name);
    std::error_code ec;
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        std::string file = entry.path().filename().string();
        if (file.front() != '.' && file.ends_with(".json")) {
            files.push_back(file);
        }
    }
    if (ec && ec != std::errc::no_such_file_or_directory) {
        return Status(Code::io, "cannot list " + dir + ": " + ec.message());
    }
    std::sort(files.begin(), files.end());
    std::map<std::string, ParsedWaiter> parsed;
    for (const auto& file : files) {
        const std::string path = dir + "/" + file;
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) {
            continue;  // it left while we listed
        }
        // Every write renames a new file in: the same inode and change time is the same
        // entry, parsed before (waiting costs a stat per waiter, not a parse).
        MutexLock lock(m_mutex);
        auto& known = m_parsed[name];
        auto it = known.find(file);
        if (it != known.end() && it->second.inode == st.st_ino &&
            it->second.ctime_ns == st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec) {
            v.record.waiters.push_back(it->second.waiter);
            parsed[file] = it->second;
            continue;
        }
        auto w = read_waiter_file(path, name);
        if (!w.is_ok() && w.status().code() == Code::not_found) {
            continue;
        }
        if (!w.is_ok()) {
            return w.status();
        }
        parsed[file] =
            ParsedWaiter{st.st_ino, st.st_ctim.tv_sec * 1'000'000'000LL + st.st_ctim.tv_nsec, *w};
        v.record.waiters.push_back(std::move(w.value()));
    }
    {
        MutexLock lock(m_mutex);
        m_parsed[name] = std::move(parsed);
    }
    sort_queue(v.record.waiters);
    v.token = v.version;
    return v;
}

Result<std::string> FileStore::write_waiter(const std::string& name, const Waiter& waiter,
                                            const std::string& version) {
    TRY(check_lock_name(name));
    const std::string dir = queue_dir(name);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
        return Status(Code::io, "cannot create " + dir + ": " + ec.message());
    }
    const std::string lock_path = dir + "/.lock";
    Fd lock_fd(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (lock_fd.get() < 0) {
        return io_error("cannot open", lock_path);
    }
    TRY(lock_exclusive(lock_fd.get(), lock_path));
    const std::string path = waiter_path(name, waiter.who.id);
    auto current = read_waiter_file(path, name);
    if (!current.is_ok() && current.status().code() != Code::not_found) {
        return current.status();
    }
    if (version.empty() && current.is_ok()) {
        return Status(Code::conflict,
                      path + ": already queued (revision " + current->version + ")");
    }
    if (!version.empty() && !current.is_ok()) {
        return Status(Code::not_found, path + ": removed from the queue");
    }
    if (!version.empty() && current->version != version) {
        return Status(Code::conflict, path + ": revision " + current->version +
                                          " is stored, the write expected " + version);
    }
    std::int64_t revision = version.empty() ? 1 : std::stoll(version) + 1;
    nlohmann::json j = waiter_to_json(name, waiter);
    j["revision"] = revision;
    TRY(write_file_atomic(path, dump_json(j, 2) + "\n"));
    return std::to_string(revision);
}

Status FileStore::remove_waiter(const std::string& name, const std::string& id,
                                const std::string& version) {
    TRY(check_lock_name(name));
    const std::string dir = queue_dir(name);
    const std::string lock_path = dir + "/.lock";
    Fd lock_fd(::open(lock_path.c_str(), O_RDWR | O_CLOEXEC));
    if (lock_fd.get() < 0) {
        return errno == ENOENT ? Status::ok() : io_error("cannot open", lock_path);
    }
    TRY(lock_exclusive(lock_fd.get(), lock_path));
    const std::string path = waiter_path(name, id);
    if (!version.empty()) {  // its waiter writes it under the same flock: no race here
        auto current = read_waiter_file(path, name);
        if (!current.is_ok()) {
            return current.status().code() == Code::not_found ? Status::ok() : current.status();
        }
        if (current->version != version) {
            return Status(Code::conflict, path + ": revision " + current->version +
                                              " is stored, the removal expected " + version);
        }
    }
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
        return io_error("cannot remove", path);
    }
    return Status::ok();
}

Result<std::string> FileStore::write(const std::string& name, const LockRecord& record,
                                     const std::string& version) {
    TRY(check_lock_name(name));
    std::error_code ec;
    fs::create_directories(m_directory, ec);
    if (ec) {
        return Status(Code::io, "cannot create " + m_directory + ": " + ec.message());
    }
    std::string lock_path = record_path(name) + ".lock";
    Fd lock_fd(::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644));
    if (lock_fd.get() < 0) {
        return io_error("cannot open", lock_path);
    }
    TRY(lock_exclusive(lock_fd.get(), lock_path));
    std::string new_version;
    TRY(write_locked(name, record, version, new_version));
    return new_version;
}

// REQUIRES: the caller holds the exclusive flock of `name`.
Status FileStore::write_locked(const std::string& name, const LockRecord& record,
                               const std::string& version, std::string& new_version) {
    remove_torn_temps(name);
    std::string path = record_path(name);
    TRY_ASSIGN(Versioned current, read_file(path, name));
    if (current.version != version) {
        return Status(Code::conflict, path + ": version " + current.version +
                                          " is stored, the write expected " +
                                          (version.empty() ? "none" : version));
    }
    std::int64_t revision = version.empty() ? 1 : std::stoll(version) + 1;
    nlohmann::json j = to_json(stored_form(record));  // own queue records live apart
    j["name"] = name;
    j["revision"] = revision;
    // Synced file, rename, synced folder: a record survives a power loss. The tests' crash
    // hook stops the write before the rename, leaving the temp file as a crash would.
    TRY(write_file_atomic(path, dump_json(j, 2) + "\n",
                          {.sync_directory = true, .before_rename = m_before_rename}));
    new_version = std::to_string(revision);
    return Status::ok();
}

void FileStore::remove_torn_temps(const std::string& name) const {
    std::string prefix = "." + name + ".json.tmp.";
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(m_directory, ec)) {
        if (entry.path().filename().string().rfind(prefix, 0) == 0) {
            fs::remove(entry.path(), ec);
        }
    }
}

// Arms the lock's inotify watch (once: the record's folder and the queue's, kept for
// the next waits; queue changes since the last read are in it), compares the stored
// version (so a write of the record before the wait is not missed); then sleeps in
// poll(2) until an event that concerns the waiter (WakeFilter: with a narrow scope, its
// predecessor's file, or the record once it is first) arrives (the caller re-reads),
// `max_wait` passes or a signal arrives (EINTR, or `interrupted` looked at every 200 ms).
Result<WaitEnd> FileStore::wait_for_change(const std::string& name, const std::string& version,
                                           Duration max_wait,
                                           const std::function<bool()>& interrupted,
                                           const WaitScope& scope) {
    TRY(check_lock_name(name));
    WakeFilter filter;
    filter.record = name + ".json";
    if (scope.narrow) {
        filter.self = waiter_file_name(scope.self);
        if (!scope.predecessor.empty()) {
            filter.record.clear();
            filter.predecessor = waiter_file_name(scope.predecessor);
        }
    }
    const auto end = std::chrono::steady_clock::now() + max_wait;
    int fd = -1;
    bool armed_now = false;
    {
        MutexLock lock(m_mutex);
        auto it = m_watches.find(name);
        if (it == m_watches.end()) {
            std::error_code ec;
            fs::create_directory(queue_dir(name), ec);  // not the store's folder: none, unwatched
            Watch w;
            w.fd = ::inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
            if (w.fd < 0) {
                return WaitEnd::unwatched;  // out of inotify instances: poll
            }
            w.record_wd = ::inotify_add_watch(w.fd, m_directory.c_str(), k_record_events);
            w.queue_wd = ::inotify_add_watch(w.fd, queue_dir(name).c_str(), k_queue_events);
            if (w.record_wd < 0 || w.queue_wd < 0) {
                ::close(w.fd);
                return WaitEnd::unwatched;  // no directory yet, or out of watches: poll
            }
            it = m_watches.emplace(name, w).first;
            armed_now = true;
        }
        fd = it->second.fd;
        filter.record_wd = it->second.record_wd;
    }
    (void)armed_now;
    auto current = read_record(name);  // a write that landed before this wait
    if (!current.is_ok() || current->version != version) {
        return WaitEnd::changed;  // the caller re-reads (and reports a read error)
    }
    for (;;) {
        pollfd p{fd, POLLIN, 0};
        auto left =
            std::chrono::ceil<std::chrono::milliseconds>(end - std::chrono::steady_clock::now());
        if (interrupted && interrupted()) {
            return WaitEnd::timed_out;  // a signal that came before poll(2) could see it
        }
        int n = ::poll(&p, 1, static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 200)));
        if (n < 0 && errno == EINTR) {
            return WaitEnd::timed_out;  // a signal: the caller looks at it
        }
        if (n < 0) {
            return io_error("cannot poll the inotify watch of", m_directory);
        }
        if (n > 0) {
            MutexLock lock(m_mutex);
            TRY_ASSIGN(bool ours, drain_events(fd, filter, m_directory));
            if (ours) {
                return WaitEnd::changed;  // every write renames a new revision in
            }
        }
        if (left.count() <= 0) {
            return WaitEnd::timed_out;
        }
    }
}

Result<std::vector<std::string>> FileStore::list() {
    std::vector<std::string> names;
    std::error_code ec;
    if (!fs::exists(m_directory, ec)) {
        return names;
    }
    for (const auto& entry : fs::directory_iterator(m_directory, ec)) {
        std::string file = entry.path().filename().string();
        if (file.size() > 5 && file.front() != '.' && file.ends_with(".json")) {
            names.push_back(file.substr(0, file.size() - 5));
        }
    }
    if (ec) {
        return Status(Code::io, "cannot list " + m_directory + ": " + ec.message());
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace envgate::locks
