#pragma once
// SIGINT and SIGTERM end a run cleanly: the handler only raises a flag, which the step loop reads
// after every step; the run then ends with status `interrupted` and a complete file.
namespace normdyn::app {

void install_interrupt_handlers();
bool interrupt_requested();
// The signal that asked for the interrupt (0 if none).
int interrupt_signal();

}  // namespace normdyn::app
