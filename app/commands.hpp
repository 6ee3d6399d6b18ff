#pragma once
// The small informational commands.
#include <ostream>

namespace normdyn::app {

int list_schemes(std::ostream& out);
int print_config_reference(std::ostream& out);

}  // namespace normdyn::app
