#include <filesystem>

#include "runner/base/files.h"
#include "runner/report/render.h"

namespace envgate {

Status write_reports(const std::string& dir, const RunReport& report) {
    struct File {
        const char* name;
        std::string (*render)(const RunReport&);
    };
    static const File k_files[] = {
        {"junit.xml", render_junit},
        {"summary.md", render_markdown},
        {"summary.html", render_html},
        {"envgate.env", render_dotenv},
        {"annotations.json", render_annotations},
        {"run.json", render_run_json},
    };
    // Every file is attempted; one that cannot be rendered or written is removed, so an
    // earlier run's file (a run.json the dashboard reads) never stands in for this run's.
    Status first = Status::ok();
    for (const File& f : k_files) {
        std::string path = (std::filesystem::path(dir) / f.name).string();
        Status written = Status::ok();
        try {
            written = write_file_atomic(path, f.render(report));
        } catch (const std::exception& e) {
            written = Status(Code::io, std::string("cannot render ") + path + ": " + e.what());
        }
        if (!written.is_ok()) {
            std::error_code ec;
            std::filesystem::remove(path, ec);
            if (first.is_ok()) {
                first = written;
            }
        }
    }
    return first;
}

}  // namespace envgate
