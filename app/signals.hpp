#pragma once
// SIGINT and SIGTERM. Once a loop polls for them (interrupt_requested()), the first one only raises
// a flag, which the step loop reads after every step; the run then ends with status `interrupted`
// and a complete file. Before any loop polls (set-up: reading inputs, allocating, sampling the
// initial state, opening files) nothing would read the flag, so a signal ends the process at once
// with exit code 130, as does a second signal at any time. Files being built are left as a killed
// writer leaves them (a run file stays resumable); a path registered with remove_on_interrupt() is
// removed first.
#include <filesystem>

namespace normdyn::app {

// Also ignores SIGXFSZ, so that a file-size limit makes writes fail with EFBIG (an I/O error that
// names its cause) instead of killing the process.
void install_interrupt_handlers();
bool interrupt_requested();
// The signal that asked for the interrupt (0 if none).
int interrupt_signal();
// A temporary file to remove if a signal ends the process at once (empty path: none).
void remove_on_interrupt(const std::filesystem::path& path);

}  // namespace normdyn::app
