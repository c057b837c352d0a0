#include "runner/base/signals.h"

#include <atomic>
#include <csignal>

namespace envgate {
namespace {

std::atomic<int> g_signal{0};

extern "C" void on_signal(int signal_number) {
    int expected = 0;
    g_signal.compare_exchange_strong(expected, signal_number);
}

}  // namespace

void install_signal_handlers() {
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: blocking reads return EINTR and loops look again
    sigaction(SIGTERM, &action, nullptr);
    sigaction(SIGINT, &action, nullptr);
}

int pending_signal() {
    return g_signal.load();
}

void set_pending_signal(int signal_number) {
    g_signal.store(signal_number);
}

}  // namespace envgate
