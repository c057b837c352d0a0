// Watch streams: chunked JSON events from the store's history, with bookmarks,
// timeoutSeconds, ERROR 410 Expired for compacted resourceVersions, and selector
// transitions (an object that stops matching is DELETED for that watch).
#include <Poco/Net/HTTPServerResponse.h>

#include <chrono>
#include <ostream>

#include "test/kubesim/api.h"
#include "test/kubesim/store.h"
#include "test/kubesim/table.h"

namespace kubesim {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

struct WatchState {
    Context& ctx;
    const ApiRequest& req;
    const Selector& selector;
    std::ostream& out;
    uint64_t last_rv = 0;
};

bool write_event(WatchState& w, const std::string& type, const json& object) {
    if (w.req.table && type != "BOOKMARK" && type != "ERROR") {
        w.out << json{{"type", type},
                      {"object", to_table(*w.req.info, {object},
                                          object["metadata"].value("resourceVersion", ""))}}
                     .dump()
              << "\n";
        return w.out.good();
    }
    w.out << json{{"type", type}, {"object", object}}.dump() << "\n";
    return w.out.good();
}

bool matches(const WatchState& w, const json* obj) {
    return obj != nullptr && selector_matches(w.selector, *obj) &&
           (w.req.name.empty() || (*obj)["metadata"].value("name", "") == w.req.name);
}

// Sends `change` as this watch sees it; false when the client went away.
bool send_change(WatchState& w, const Change& c) {
    if (c.resource != w.req.info->storage || (!w.req.ns.empty() && c.ns != w.req.ns)) {
        return true;
    }
    bool now_matches = matches(w, c.object.get());
    bool was_matching = matches(w, c.previous.get());
    std::string type = c.type;
    if (type == "MODIFIED" && now_matches && !was_matching) {
        type = "ADDED";
    } else if (type == "MODIFIED" && !now_matches && was_matching) {
        type = "DELETED";
    } else if (type == "DELETED" && !(now_matches || was_matching)) {
        return true;
    } else if (type != "DELETED" && !now_matches) {
        return true;
    }
    return write_event(w, type, to_api(*w.req.info, *c.object));
}

bool send_bookmark(WatchState& w, bool initial_end) {
    json meta = {{"resourceVersion", std::to_string(w.last_rv)}};
    if (initial_end) {
        meta["annotations"] = {{"k8s.io/initial-events-end", "true"}};
    }
    return write_event(w, "BOOKMARK",
                       {{"kind", w.req.info->kind},
                        {"apiVersion", w.req.info->api_version()},
                        {"metadata", meta}});
}

void send_expired(WatchState& w, uint64_t requested, uint64_t oldest) {
    json st = {{"kind", "Status"},
               {"apiVersion", "v1"},
               {"metadata", json::object()},
               {"status", "Failure"},
               {"message", "too old resource version: " + std::to_string(requested) + " (" +
                               std::to_string(oldest) + ")"},
               {"reason", "Expired"},
               {"code", 410}};
    write_event(w, "ERROR", st);
}

bool send_initial(WatchState& w) {
    auto items = w.ctx.store.list(
        w.req.info->storage, w.req.ns, [&](const json& o) { return matches(w, &o); }, &w.last_rv);
    for (const auto& item : items) {
        if (!write_event(w, "ADDED", to_api(*w.req.info, item))) {
            return false;
        }
    }
    return true;
}

}  // namespace

void serve_watch(Context& ctx, const ApiRequest& req, const Selector& selector,
                 Poco::Net::HTTPServerResponse& response) {
    auto q = [&](const char* k) {
        auto it = req.query.find(k);
        return it == req.query.end() ? std::string() : it->second;
    };
    int timeout = q("timeoutSeconds").empty() ? 1800 : std::stoi(q("timeoutSeconds"));
    bool bookmarks = query_true(req.query, "allowWatchBookmarks");
    bool send_initial_events = query_true(req.query, "sendInitialEvents");
    std::string rv = q("resourceVersion");
    uint64_t generation = ctx.watch_generation.load();

    response.setStatus(Poco::Net::HTTPResponse::HTTP_OK);
    response.setContentType("application/json");
    response.setChunkedTransferEncoding(true);
    response.set("Cache-Control", "no-cache, private");
    std::ostream& out = response.send();
    WatchState w{ctx, req, selector, out};
    if (rv.empty() || rv == "0" || send_initial_events) {
        if (!send_initial(w) || (send_initial_events && bookmarks && !send_bookmark(w, true))) {
            return;
        }
    } else {
        w.last_rv = std::stoull(rv);
        if (w.last_rv < ctx.store.oldest_rv()) {
            send_expired(w, w.last_rv, ctx.store.oldest_rv());
            return;
        }
    }
    out.flush();
    auto end = Clock::now() + std::chrono::seconds(timeout);
    auto bookmark_every = std::chrono::milliseconds(ctx.options.bookmark_ms);
    auto next_bookmark = Clock::now() + bookmark_every;
    auto stop = [&] { return ctx.watch_generation.load() != generation || ctx.stopping.load(); };
    while (!stop() && Clock::now() < end) {
        std::vector<Change> changes;
        if (!ctx.store.wait_changes(w.last_rv, std::min(end, next_bookmark), stop, changes)) {
            send_expired(w, w.last_rv, ctx.store.oldest_rv());
            break;
        }
        for (const auto& c : changes) {
            if (!send_change(w, c)) {
                return;
            }
            w.last_rv = c.rv;
        }
        if (bookmarks && Clock::now() >= next_bookmark) {
            if (!send_bookmark(w, false)) {
                return;
            }
            next_bookmark = Clock::now() + bookmark_every;
        } else if (!bookmarks && Clock::now() >= next_bookmark) {
            next_bookmark = Clock::now() + bookmark_every;
        }
        out.flush();
        if (!out.good() || client_gone(req)) {
            return;
        }
    }
    out.flush();
}

}  // namespace kubesim
