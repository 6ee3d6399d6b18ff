#pragma once
// `normdyn reproduce [--quick] [--only GROUP ...] [-o DIR]`: runs the library's reproduction (studies/reproduce.hpp),
// writes DIR/reproduction.md, DIR/reproduction.json, DIR/symmetric_start.json, DIR/random_weights.json,
// DIR/metastability.json and the figures
// (scripts/plot_reproduction.py; skipped with a note when Python or matplotlib is missing).
#include <filesystem>
#include <string>
#include <vector>

namespace normdyn::app {

struct ReproduceRequest {
  bool quick = false;
  std::filesystem::path output_dir = "reproduction";
  bool force = false;
  int threads = 0;
  std::vector<std::string> only;  // --only: the groups to run (studies::reproduction_groups()); empty: all
};

// Exit code 1 if a row fails.
int reproduce_command(const ReproduceRequest& request);

}  // namespace normdyn::app
