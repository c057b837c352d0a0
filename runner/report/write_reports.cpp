#include <filesystem>

#include "runner/files.h"
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
    for (const File& f : k_files) {
        std::string path = (std::filesystem::path(dir) / f.name).string();
        TRY(write_file_atomic(path, f.render(report)));
    }
    return Status::ok();
}

}  // namespace envgate
