// normdyn: the command line. A thin layer over typed configuration: CLI11 parses the flags, the
// commands do the work, and every error becomes one line on stderr and an exit code (errors.hpp).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <new>
#include <stdexcept>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analysis_cli.hpp"
#include "commands.hpp"
#include "normdyn/config.hpp"
#include "normdyn/experiment/team.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/version.hpp"
#include "run.hpp"
#include "signals.hpp"
#include "sweep_cli.hpp"
#include "ensemble_cli.hpp"
#include "help.hpp"

namespace {

std::string join_argv(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    if (i) out += ' ';
    out += argv[i];
  }
  return out;
}

// The word in the place of the subcommand, when it is not one: git-style tools name it and
// suggest the closest command instead of asking for "a subcommand".
std::optional<std::string> unknown_command(int argc, char** argv, const CLI::App& cli) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  const std::string word = argv[1];
  std::vector<std::string> names;
  for (const CLI::App* sub : cli.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == word) return std::nullopt;
    names.push_back(sub->get_name());
  }
  std::string message = "unknown command '" + word + "'";
  if (const auto close = normdyn::did_you_mean(word, names)) message += "; did you mean '" + *close + "'?";
  return message + " (normdyn help lists the commands)";
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
int fail_in_team(normdyn::Team& team, normdyn::ExitCode code, const std::string& message, bool bad_input) {
  if (team.size() <= 1) return fail(code, message);
  team.fail_collective(static_cast<int>(code), message);
  if (bad_input && !team.is_root()) return static_cast<int>(code);
  std::fprintf(stderr, "normdyn: error%s: %s\n",
               team.is_root() ? "" : (" (rank " + std::to_string(team.rank()) + ")").c_str(), message.c_str());
  return static_cast<int>(code);
}

// `normdyn help [COMMAND [SUBCOMMAND]]`: the commands, or the options of one command.
int print_help(const CLI::App& cli, const std::vector<std::string>& help_words) {
  if (help_words.empty()) {
    std::cout << cli.get_formatter()->make_help(&cli, cli.get_name(), CLI::AppFormatMode::Normal);
    return 0;
  }
  const CLI::App* command = normdyn::app::find_command(cli, help_words);
  std::string parents = cli.get_name();
  for (std::size_t i = 0; i + 1 < help_words.size(); ++i) parents += " " + help_words[i];
  std::cout << command->help(parents);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace normdyn;
  // MPI starts only under an MPI launcher (mpi.hpp).
  std::optional<Team> team_storage;
  try {
    team_storage.emplace(argc, argv);
  } catch (const InputError& e) {
    return fail(ExitCode::bad_input, e.what());
  }
  Team& team = *team_storage;
  CLI::App cli{"normdyn: dynamics of tokens in deep transformers as interacting particles on the sphere"};
  // Before the subcommands are added: they inherit the formatter.
  cli.formatter(std::make_shared<app::WrappingFormatter>(app::help_width()));
  cli.set_version_flag("-V,--version", "normdyn " + std::string(version()) + " (" + std::string(revision()) + ")");
  cli.require_subcommand(1);
  cli.footer("normdyn help COMMAND shows the options of a command.");

  app::RunRequest run;
  std::string output;
  int threads = -1;
  std::string resume;
  CLI::App* run_cmd = cli.add_subcommand("run", "Simulate one configuration and write its HDF5 run file");
  auto* config_opt = run_cmd->add_option(
      "config", run.config,
      "TOML configuration file (- for standard input; default: the built-in defaults, see config-reference)");
  std::string from;
  auto* from_opt = run_cmd->add_option(
      "--from", from, "repeat a run from the configuration stored in its run file (with --set on top; needs -o)");
  auto* resume_opt = run_cmd->add_option("--resume", resume,
                                         "continue an interrupted or killed run file with its stored configuration");
  auto* output_opt = run_cmd->add_option("-o,--output", output, "output file (overrides output.path)");
  auto* set_opt = run_cmd->add_option("--set", run.sets, "override a key: --set section.key=value (repeatable)")
                      ->allow_extra_args(false);
  std::string continue_from;
  double t_end = 0.0;
  auto* continue_opt =
      run_cmd->add_option("--continue", continue_from,
                          "continue a finished run from its last state into a new file (needs --t-end and -o)");
  auto* t_end_opt =
      run_cmd->add_option("--t-end", t_end, "with --continue: the new final time")->check(CLI::PositiveNumber);
  resume_opt->excludes(config_opt)->excludes(output_opt)->excludes(set_opt);
  from_opt->excludes(config_opt)->excludes(resume_opt);
  continue_opt->excludes(config_opt)->excludes(resume_opt)->excludes(from_opt);
  t_end_opt->needs(continue_opt);
  run_cmd->add_option("--threads", threads, "threads of the attention kernel (overrides solver.threads)")
      ->check(CLI::Range(0, 4096));
  auto* force_opt = run_cmd->add_flag("--force", run.options.force, "overwrite an existing output file");
  resume_opt->excludes(force_opt);
  run_cmd->add_flag("-q,--quiet", run.options.quiet, "no progress line and no summary line on success");
  std::string progress_mode = "auto";
  run_cmd
      ->add_option("--progress", progress_mode,
                   "auto: a progress line on a terminal only; plain: a line every few seconds; jsonl: one JSON object "
                   "per line (both on stderr, also when it is not a terminal); none")
      ->check(CLI::IsMember({"auto", "plain", "jsonl", "none"}));
  bool no_size_check = false;
  run_cmd->add_flag("--no-size-check", no_size_check,
                    "run even if the estimated memory or run-file size exceeds what the machine has");

  cli.add_subcommand("list-schemes", "List the normalization schemes with their speed factor and radial rate");
  cli.add_subcommand(
      "list-attention",
      "List the attention masks, score biases, positional encodings and normalizers with their formulas");
  bool reference_toml = false;
  cli.add_subcommand("config-reference", "Print every configuration key with its type, default and meaning")
      ->add_flag("--toml", reference_toml,
                 "a complete, commented configuration file of the defaults instead of the table");
  std::vector<std::string> verify_files;
  CLI::App* verify_cmd = cli.add_subcommand(
      "verify",
      "Check every frame of run files against the checksums written with them (after a copy, from an archive)");
  verify_cmd->add_option("runs", verify_files, "HDF5 run files")->required();
  app::AnalysisCli analysis_cli(cli);
  app::SweepCli sweep_cli(cli);
  app::EnsembleCli ensemble_cli(cli);
  std::vector<std::string> help_words;
  CLI::App* help_cmd = cli.add_subcommand("help", "Show the commands, or the options of one command");
  help_cmd->add_option("command", help_words, "a command, and a subcommand of it (normdyn help study symmetric)");
  app::add_examples(cli);

  if (const auto unknown = unknown_command(argc, argv, cli))
    return fail_in_team(team, ExitCode::bad_input, *unknown, true);

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
    // Only `run`, `sweep` and `ensemble` share their work among the processes of an MPI launch.
    if (team.size() > 1 && !run_cmd->parsed() && !sweep_cli.parsed() && !ensemble_cli.parsed())
      throw InputError("mpirun",
                       "only `normdyn run`, `normdyn sweep` and `normdyn ensemble` run on several MPI processes");
    run.options.team = &team;
    if (help_cmd->parsed()) return print_help(cli, help_words);
    if (run_cmd->parsed()) {
      if (!resume.empty()) run.resume = resume;
      if (!from.empty()) run.from = from;
      if (!continue_from.empty()) run.continue_from = continue_from;
      if (t_end_opt->count() > 0) run.t_end = t_end;
      run.progress = app::progress_mode_from_string(progress_mode);
      if (!output.empty()) run.output = output;
      if (threads >= 0) run.threads = threads;
      run.options.command_line = join_argv(argc, argv);
      run.options.size_check = !no_size_check;
      return app::run_command(run);
    }
    if (cli.got_subcommand("list-schemes")) return app::list_schemes(std::cout);
    if (cli.got_subcommand("list-attention")) return app::list_attention(std::cout);
    if (cli.got_subcommand("config-reference"))
      return reference_toml ? app::print_config_template(std::cout) : app::print_config_reference(std::cout);
    if (verify_cmd->parsed()) return app::verify_runs(verify_files, std::cout, std::cerr);
    if (analysis_cli.parsed()) return analysis_cli.run();
    if (sweep_cli.parsed()) return sweep_cli.run(team, join_argv(argc, argv));
    if (ensemble_cli.parsed()) return ensemble_cli.run(team, join_argv(argc, argv));
  } catch (const PeerFailure& e) {  // another process failed and reported it
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
                        "not enough memory: an allocation failed that the size check did not foresee (it estimates "
                        "model.n, model.d, output.samples, meanfield.grid, the Sinkhorn matrix and input files' "
                        "feed-forward weights); make the run smaller or raise the memory limit",
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
