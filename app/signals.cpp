#include "signals.hpp"

#include <unistd.h>

#include <csignal>
#include <cstring>

namespace normdyn::app {
namespace {
volatile std::sig_atomic_t g_signal = 0;
volatile std::sig_atomic_t g_polled = 0;
// Written outside the handler only while g_remove_set is 0.
char g_remove[4096] = {};
volatile std::sig_atomic_t g_remove_set = 0;

extern "C" void on_signal(int sig) {
  if (g_polled == 0 || g_signal != 0) {
    if (g_remove_set) ::unlink(g_remove);  // async-signal-safe, as is _exit
    ::_exit(130);
  }
  g_signal = sig;
}
}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  std::signal(SIGXFSZ, SIG_IGN);
}

bool interrupt_requested() {
  g_polled = 1;
  return g_signal != 0;
}
int interrupt_signal() { return static_cast<int>(g_signal); }

void remove_on_interrupt(const std::filesystem::path& path) {
  g_remove_set = 0;
  const std::string text = path.string();
  if (text.empty() || text.size() >= sizeof g_remove) return;
  std::memcpy(g_remove, text.c_str(), text.size() + 1);
  g_remove_set = 1;
}

}  // namespace normdyn::app
