// migration_sites: the exec line first; only when it shows no migration, the
// ConfigMap scripts it runs (so one migration is reported once).
#include "runner/lint/sites.h"

#include <set>

#include "runner/lint/migration_command.h"

namespace envgate::lint {
namespace {

// Images whose entrypoint is the migration tool itself (Docker Hub official names).
std::string entrypoint_of(const std::string& image) {
    static const std::set<std::string, std::less<>> k_tools = {
        "flyway", "liquibase", "migrate", "dbmate", "goose", "atlas", "sqitch", "tern"};
    std::string repo = image.substr(0, image.find_first_of("@"));
    std::size_t slash = repo.rfind('/');
    std::size_t colon = repo.find(':', slash == std::string::npos ? 0 : slash);
    repo = repo.substr(0, colon);
    std::string base = slash == std::string::npos ? repo : repo.substr(slash + 1);
    return k_tools.contains(base) ? base : "";
}

struct ExecLine {
    std::vector<Arg> argv;
    std::vector<const Text*> texts;  // texts[i] is argv[i]'s manifest string, or nullptr
};

ExecLine exec_line(const Container& c) {
    ExecLine line;
    if (c.command.empty()) {
        if (std::string tool = entrypoint_of(c.image); !tool.empty()) {
            line.argv.push_back({tool, 0});
            line.texts.push_back(nullptr);
        }
    }
    for (const auto* list : {&c.command, &c.args}) {
        for (const Text& t : *list) {
            line.argv.push_back({t.value, line.argv.size()});
            line.texts.push_back(&t);
        }
    }
    return line;
}

// The ConfigMap `name` in `ns`; one from the workload's own file first, as when two
// charts in one run define the same name.
const ConfigMapObject* find_config_map(const Objects& all, const std::string& name,
                                       const std::string& ns, const std::string& file) {
    const ConfigMapObject* found = nullptr;
    for (const ConfigMapObject& cm : all.config_maps) {
        if (cm.name == name && cm.namespace_ == ns && (found == nullptr || cm.file == file)) {
            found = &cm;
        }
    }
    return found;
}

// The ConfigMap entry a path in container `c` reads, when it is mounted from one.
const Text* script_at(const std::string& path, const Container& c, const Workload& w,
                      const Objects& all, std::string& via) {
    for (const VolumeMount& m : c.mounts) {
        std::string rel;
        if (!m.sub_path.empty() && path == m.mount_path) {
            rel = m.sub_path;
        } else if (m.sub_path.empty() && path.starts_with(m.mount_path + "/")) {
            rel = path.substr(m.mount_path.size() + 1);
        } else {
            continue;
        }
        for (const ConfigMapVolume& v : w.config_map_volumes) {
            const ConfigMapObject* cm =
                v.volume == m.volume ? find_config_map(all, v.config_map, w.namespace_, w.loc.file)
                                     : nullptr;
            if (cm == nullptr) {
                continue;
            }
            std::string key =
                v.items.empty() ? rel : (v.items.contains(rel) ? v.items.at(rel) : "");
            if (auto it = cm->data.find(key); it != cm->data.end()) {
                via = "script " + path + " from ConfigMap/" + cm->name;
                return &it->second;
            }
        }
    }
    return nullptr;
}

}  // namespace

std::vector<MigrationSite> migration_sites(const Container& c, const Workload& w,
                                           const Objects& all) {
    ExecLine line = exec_line(c);
    std::vector<MigrationSite> out;
    for (const MigrationMatch& m : find_migrations(line.argv)) {
        const Text* t = m.arg < line.texts.size() ? line.texts[m.arg] : nullptr;
        out.push_back({t != nullptr ? t->at(m.offset) : c.loc, m.what, ""});
    }
    if (!out.empty()) {
        return out;
    }
    for (const Arg& a : line.argv) {
        std::string via;
        const Text* script = a.text.starts_with("/") ? script_at(a.text, c, w, all, via) : nullptr;
        if (script == nullptr) {
            continue;
        }
        for (const MigrationMatch& m : find_migrations_in_script(script->value)) {
            out.push_back({script->at(m.offset), m.what, via});
        }
    }
    return out;
}

bool is_migration_job(const Workload& w, const Objects& all) {
    if (!w.is_job()) {
        return false;
    }
    if (w.name.find("migrat") != std::string::npos) {
        return true;
    }
    for (const Container& c : w.containers) {
        if (!migration_sites(c, w, all).empty()) {
            return true;
        }
    }
    return false;
}

}  // namespace envgate::lint
