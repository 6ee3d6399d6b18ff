#pragma once
// `normdyn reproduce`: the statements of the paper measured against theory, one row per measured
// claim. Each row names the command that reproduces its number, the theory's value and the
// criterion that decides the verdict:
//   holds         the measurement meets the criterion
//   fails         it does not
//   inconclusive  an asymptotic statement the horizon is too short to decide (the diagnostic says
//                 why: the measured exponent still drifts toward the theory between two windows)
//   differs       a secondary source's claim that the model does not reproduce
// Statements that no row measures are listed as such in the report, never given a verdict.
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "normdyn/studies/engine.hpp"

namespace normdyn::studies {

struct ReproductionRow {
  std::string id;
  std::string statement;
  std::string command;
  std::string measured;
  std::string theory;
  std::string criterion;
  std::string verdict;  // holds | fails | inconclusive | differs
};

struct StudyTiming {
  std::string name;
  double seconds = 0.0;
};

struct ReproduceOptions {
  bool quick = false;
  int threads = 0;  // attention kernel (0: all)
  // Called before each study with its name (progress on a terminal; empty: quiet).
  std::function<void(const std::string&)> progress;
  // The particle dynamics the theorem rows integrate (engine.hpp).
  Engine engine = library_engine();
  // The groups to run, by key (reproduction_groups()); empty: all.
  std::vector<std::string> only;
};

// A group of rows: its key (for ReproduceOptions::only) and whether its rows integrate the engine.
struct ReproductionGroup {
  std::string key;
  bool uses_engine = false;
};
std::vector<ReproductionGroup> reproduction_groups();
// Throws InputError naming `key` (the option that gave them), with every group listed, unless each
// of `names` is a group's key.
void require_groups(const std::vector<std::string>& names, const std::string& key);

struct Reproduction {
  bool quick = false;
  std::vector<std::string> only;  // ReproduceOptions::only: the groups run (empty: all)
  std::string engine;             // Engine::name
  std::vector<ReproductionRow> rows;
  std::vector<StudyTiming> timings;
  std::vector<std::string> not_measured;  // statements without a row, and why
  nlohmann::json symmetric;               // the symmetric study's trajectories (for the figures)
  nlohmann::json attention;               // the Theorem 4.2 grid
  nlohmann::json random_weights;          // the random-weight curves against depth (for the figures)
  nlohmann::json metastability;           // staircases, phase diagram, Peri-LN against Post-LN (for the figures)
};

Reproduction reproduce(const ReproduceOptions& options);
bool any_failed(const Reproduction& r);
// The command that regenerates the report: `normdyn reproduce [--quick] [--only G ...]`.
std::string command_line(const Reproduction& r);

nlohmann::json to_json(const Reproduction& r);
std::string to_markdown(const Reproduction& r, const std::vector<std::string>& figures, const std::string& figure_note);

}  // namespace normdyn::studies
