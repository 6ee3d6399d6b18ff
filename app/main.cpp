// normdyn: the command line. A thin layer over typed configuration: CLI11 parses the flags, the
// commands do the work, and every error becomes one line on stderr and an exit code (errors.hpp).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <new>
#include <stdexcept>
#include <iostream>
#include <optional>
#include <string>
#include <utility>

#include "analysis_cli.hpp"
#include "commands.hpp"
#include "mpi.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/version.hpp"
#include "run.hpp"
#include "signals.hpp"
#include "sweep_cli.hpp"

namespace {

std::string join_argv(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    if (i) out += ' ';
    out += argv[i];
  }
  return out;
}

int fail(normdyn::ExitCode code, const std::string& message) {
  std::fprintf(stderr, "normdyn: error: %s\n", message.c_str());
  return static_cast<int>(code);
}

// After a failed write HDF5 may still hold objects of the file it could not write, and its exit
// handler then flushes them again (and crashed doing so after a full disk): a process that failed on
// I/O ends without the library's exit handlers, once its own output is out.
[[noreturn]] void end_after_io_failure(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code);
}

// What is wrong with the subcommand named on the command line, if it is not one of ours.
std::optional<std::string> unknown_subcommand(const CLI::App& cli, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::string name = argv[1];
  std::string names;
  for (const CLI::App* sub : cli.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->check_name(name)) return std::nullopt;
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  return "unknown command \"" + name + "\"; the commands are " + names;
}

// An error under an MPI launch with several processes. Before the processes engage in
// collectives, this one joins the set-up agreement with its exit code, so that nobody waits for it;
// bad input is found alike by every process, so only rank 0 reports it. Once engaged, an error ends
// every process (MPI_Abort).
int fail_in_team(normdyn::app::Team& team, normdyn::ExitCode code, const std::string& message, bool bad_input) {
  if (team.size() <= 1) return fail(code, message);
  if (team.engaged()) {
    std::fprintf(stderr, "normdyn: error (rank %d): %s\n", team.rank(), message.c_str());
    std::fflush(stderr);
    team.abort(static_cast<int>(code));
  }
  if (!team.agreed()) team.agree(static_cast<int>(code));
  if (bad_input && !team.is_root()) return static_cast<int>(code);
  std::fprintf(stderr, "normdyn: error%s: %s\n",
               team.is_root() ? "" : (" (rank " + std::to_string(team.rank()) + ")").c_str(), message.c_str());
  return static_cast<int>(code);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace normdyn;
  // MPI starts only under an MPI launcher (mpi.hpp).
  std::optional<app::Team> team_storage;
  try {
    team_storage.emplace(argc, argv);
  } catch (const InputError& e) {
    return fail(ExitCode::bad_input, e.what());
  }
  app::Team& team = *team_storage;
  CLI::App cli{"normdyn: dynamics of tokens in deep transformers as interacting particles on the sphere"};
  cli.set_version_flag("--version", std::string(version()) + " (" + std::string(revision()) + ")");
  cli.require_subcommand(1);

  app::RunRequest run;
  std::string output;
  int threads = -1;
  std::string resume;
  CLI::App* run_cmd = cli.add_subcommand("run", "Simulate one configuration and write its HDF5 run file");
  auto* config_opt = run_cmd->add_option("config", run.config, "TOML configuration file (- for standard input)");
  auto* resume_opt = run_cmd->add_option("--resume", resume,
                                         "continue an interrupted or killed run file with its stored configuration");
  auto* output_opt = run_cmd->add_option("-o,--output", output, "output file (overrides output.path)");
  auto* set_opt = run_cmd->add_option("--set", run.sets, "override a key: --set section.key=value (repeatable)")
                      ->allow_extra_args(false);
  resume_opt->excludes(config_opt)->excludes(output_opt)->excludes(set_opt);
  run_cmd->add_option("--threads", threads, "threads of the attention kernel (overrides solver.threads)")
      ->check(CLI::Range(0, 4096));
  auto* force_opt = run_cmd->add_flag("--force", run.options.force, "overwrite an existing output file");
  resume_opt->excludes(force_opt);
  run_cmd->add_flag("-q,--quiet", run.options.quiet, "no progress line and no summary line on success");
  bool no_size_check = false;
  run_cmd->add_flag("--no-size-check", no_size_check,
                    "run even if the estimated memory or run-file size exceeds what the machine has");

  cli.add_subcommand("list-schemes", "List the normalization schemes with their speed factor and radial rate");
  cli.add_subcommand("config-reference", "Print every configuration key with its type, default and meaning");
  app::AnalysisCli analysis_cli(cli);
  app::SweepCli sweep_cli(cli);

  app::install_interrupt_handlers();
  if (const auto unknown = unknown_subcommand(std::as_const(cli), argc, argv))
    return fail_in_team(team, ExitCode::bad_input, *unknown, true);
  try {
    cli.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return cli.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return cli.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail_in_team(team, ExitCode::bad_input, e.what(), true);
  }

  try {
    // Only `run` and `sweep` share their work among the processes of an MPI launch.
    if (team.size() > 1 && !run_cmd->parsed() && !sweep_cli.parsed())
      throw InputError("mpirun", "only `normdyn run` and `normdyn sweep` run on several MPI processes");
    run.options.team = &team;
    if (run_cmd->parsed()) {
      if (resume.empty() && run.config.empty()) throw InputError("run", "give a configuration file or --resume FILE");
      if (!resume.empty()) run.resume = resume;
      if (!output.empty()) run.output = output;
      if (threads >= 0) run.threads = threads;
      run.options.command_line = join_argv(argc, argv);
      run.options.size_check = !no_size_check;
      return app::run_command(run);
    }
    if (cli.got_subcommand("list-schemes")) return app::list_schemes(std::cout);
    if (cli.got_subcommand("config-reference")) return app::print_config_reference(std::cout);
    if (analysis_cli.parsed()) return analysis_cli.run();
    if (sweep_cli.parsed()) return sweep_cli.run(team, join_argv(argc, argv));
  } catch (const app::PeerFailure& e) {  // another process failed and reported it
    return e.exit_code;
  } catch (const InputError& e) {
    return fail_in_team(team, ExitCode::bad_input, e.what(), true);
  } catch (const IoError& e) {
    const int code = fail_in_team(team, ExitCode::io_failure, e.what(), false);
    if (team.size() <= 1) end_after_io_failure(code);
    return code;
  } catch (const std::bad_alloc&) {
    // Sizes are checked before allocation (estimate_resources); this is what got past the check.
    return fail_in_team(team, ExitCode::bad_input,
                        "not enough memory for this configuration (model.n, model.d, output.samples); "
                        "reduce them or raise the memory limit",
                        true);
  } catch (const std::length_error&) {
    return fail_in_team(team, ExitCode::bad_input,
                        "this configuration is too large to represent (model.n x model.d, output.samples)", true);
  } catch (const std::exception& e) {
    const int code = fail_in_team(team, ExitCode::io_failure, std::string("unexpected failure: ") + e.what(), false);
    if (team.size() <= 1) end_after_io_failure(code);
    return code;
  }
  return 0;
}
