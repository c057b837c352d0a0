// The heartbeat of a long gate (spec/reports.md "The job log"): when the gate printed
// nothing for `every` (30 s by default), one line with the time waited, the Job's pods
// with their phases, waiting reasons and restarts, and the time left before the Job's
// activeDeadlineSeconds and the gate's own timeout.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gates/snapshot.h"
#include "runner/base/vocab/time.h"
#include "runner/report/job_log.h"

namespace envgate {

// "pre-migrations: still running after 1m30s: pod migrate-x-abc Running, 2 restarts;
// 8m30s left before activeDeadlineSeconds; 58m30s left before the gate's timeout".
std::string progress_line(const std::string& gate, const std::optional<gates::Job>& job,
                          const std::vector<gates::Pod>& pods, TimePoint started, TimePoint now,
                          TimePoint gate_deadline);

class ProgressReporter {
  public:
    // `every` > 0; the gate started at `started` and times out at `gate_deadline`.
    ProgressReporter(JobLog& log, Duration every, TimePoint started, TimePoint gate_deadline);

    // After each evaluated pass that did not end the gate: prints the progress line when
    // nothing was printed for `every` (`spoke`: this pass printed a verdict line).
    void after_pass(TimePoint now, bool spoke, const std::string& gate,
                    const std::optional<gates::Job>& job, const std::vector<gates::Pod>& pods);

    // When the next line is due: the gate's wait ends then at the latest.
    TimePoint next() const { return m_last + m_every; }

  private:
    JobLog& m_log;
    Duration m_every;
    TimePoint m_started;
    TimePoint m_deadline;
    TimePoint m_last;
};

}  // namespace envgate
