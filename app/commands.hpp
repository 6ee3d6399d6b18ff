#pragma once
// The small informational commands.
#include <ostream>
#include <string>
#include <vector>

namespace normdyn::app {

int list_schemes(std::ostream& out);
// Every list of the attention specification with its alternatives.
int list_attention(std::ostream& out);
int print_config_reference(std::ostream& out);
// A complete, commented configuration file of the defaults that `normdyn run` accepts as it is.
int print_config_template(std::ostream& out);
// Checks every frame of each run file against its checksums: a line per file on `out`, an error line
// per damaged or unreadable file on `err`; the exit code of the worst (0 when every file read matched).
int verify_runs(const std::vector<std::string>& files, std::ostream& out, std::ostream& err);

}  // namespace normdyn::app
