#include "reproduce.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "child_process.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/studies/output.hpp"
#include "normdyn/studies/reproduce.hpp"

#ifndef NORMDYN_REPRODUCTION_PLOT_SCRIPT
#error "NORMDYN_REPRODUCTION_PLOT_SCRIPT must name scripts/plot_reproduction.py (set by app/CMakeLists.txt)"
#endif

namespace normdyn::app {

int reproduce_command(const ReproduceRequest& request) {
  namespace fs = std::filesystem;
  studies::require_groups(request.only, "--only");  // before anything is written
  const fs::path& dir = request.output_dir;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw InputError("-o", dir.string() + " is not a folder");
  for (const char* name : {"reproduction.md", "reproduction.json"})
    if (!request.force && fs::exists(dir / name, ec))
      throw IoError((dir / name).string() + ": exists; remove it, choose another folder or give --force");
  fs::create_directories(dir, ec);
  if (ec) throw IoError(dir.string() + ": cannot create the folder (" + ec.message() + ")");

  studies::ReproduceOptions options;
  options.quick = request.quick;
  options.threads = request.threads;
  options.only = request.only;
  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  if (terminal)
    options.progress = [](const std::string& name) { std::fprintf(stderr, "reproduce: %s ...\n", name.c_str()); };
  const studies::Reproduction r = studies::reproduce(options);

  if (!r.symmetric.is_null()) studies::write_new_file(dir / "symmetric_start.json", r.symmetric.dump(1) + "\n", true);
  if (!r.random_weights.is_null())
    studies::write_new_file(dir / "random_weights.json", r.random_weights.dump(1) + "\n", true);
  if (!r.metastability.is_null())
    studies::write_new_file(dir / "metastability.json", r.metastability.dump(1) + "\n", true);
  studies::write_new_file(dir / "reproduction.json", studies::to_json(r).dump(2) + "\n", true);

  std::vector<std::string> figures;
  std::string note;
  const char* env = std::getenv("NORMDYN_PYTHON");
  const std::string python = env && *env ? env : "/usr/bin/python3";
  const std::string script = NORMDYN_REPRODUCTION_PLOT_SCRIPT;
  if (!fs::exists(python, ec) || !fs::exists(script, ec)) {
    note = "Figures skipped: " + (fs::exists(python, ec) ? script : python) + " not found.";
  } else {
    ChildOptions child;
    child.stderr_file = dir / "figures.log";
    child.discard_stdio = true;
    const ChildOutcome out = run_child_process({python, script, dir.string()}, child);
    if (out.exit_code == 4)
      note = "Figures skipped: matplotlib is missing (" + python + "); see figures.log.";
    else if (out.exit_code != 0)
      note = "Figures skipped: the plot script failed; see figures.log.";
    for (const char* f : {"symmetric_start.png", "theorem_4_2.png", "random_weights.png", "metastability.png"})
      if (fs::exists(dir / f, ec)) figures.emplace_back(f);
    if (note.empty()) fs::remove(dir / "figures.log", ec);
  }
  studies::write_new_file(dir / "reproduction.md", studies::to_markdown(r, figures, note), true);

  int failed = 0;
  std::printf("%-28s %-13s %s\n", "id", "verdict", "measured");
  for (const auto& row : r.rows) {
    std::printf("%-28s %-13s %s\n", row.id.c_str(), row.verdict.c_str(), row.measured.c_str());
    failed += row.verdict == "fails";
  }
  std::printf("%zu rows, %d failing; report in %s\n", r.rows.size(), failed, (dir / "reproduction.md").c_str());
  if (!note.empty()) std::printf("%s\n", note.c_str());
  return studies::any_failed(r) ? static_cast<int>(ExitCode::numerical_failure) : 0;
}

}  // namespace normdyn::app
