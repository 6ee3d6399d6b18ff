#pragma once
// The small informational commands.
#include <ostream>

namespace normdyn::app {

int list_schemes(std::ostream& out);
// Every list of the attention specification with its alternatives.
int list_attention(std::ostream& out);
int print_config_reference(std::ostream& out);
// A complete, commented configuration file of the defaults that `normdyn run` accepts as it is.
int print_config_template(std::ostream& out);

}  // namespace normdyn::app
