#pragma once
// A sweep: a base configuration and axes over configuration keys, expanded into the points of
// their product (`normdyn sweep`). Strings end here: sweep.cpp reads the sweep file (TOML) and
// turns every point into a validated RunConfig through the configuration parser, so that a bad
// value is reported, naming its axis and point, before anything runs.
//
//   base = "base.toml"                  # optional; relative to the sweep file; else every default
//   [set]                               # optional; fixed overrides of the base, any key
//   "solver.t_end" = 50.0
//   [axes]                              # any configuration key, each an array of values
//   "model.scheme" = ["post", "pre"]
//   "model.beta" = [1.0, 4.0, 9.0]
//   "init.seed" = [1, 2, 3, 4]
//   [ensemble]                          # optional: how `normdyn sweep` aggregates the runs
//   over = "init.seed"                  # the axis of repetitions (default: init.seed if an axis)
//   phase_axis = "model.beta"           # y axis of the phase diagram (default: model.beta if an axis)
//   cluster_epsilon = 1e-3              # clusters: cosine > 1 - epsilon (as `normdyn analyze`)
//   pair_cosine = 0.999                 # synchronized pairs: cosine > pair_cosine
//
// Order. Points are numbered in the order of nested loops over the axes as they appear in the file:
// the first axis varies slowest, the last fastest (row-major). With the axes above, point 0 is
// (post, 1, 1), point 1 (post, 1, 2), ..., point 4 (post, 4, 1), ..., point 12 (pre, 1, 1).
//
// Names. Each point's name is built from its values alone (not from its index), so that it stays
// the same when values are added to an axis: "<axis>=<value>" joined by "_", where <axis> is the
// last component of the key (the whole key if two axes share it), numbers in their shortest exact
// form (4.0 → "4", 0.001 → "0.001"), strings with characters other than [A-Za-z0-9._+-] replaced
// by "-", arrays by a hash of their text; e.g. "scheme=pre_beta=4_seed=3".
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "normdyn/config.hpp"

namespace normdyn {

struct SweepAxis {
  std::string key;                  // a configuration key, e.g. "model.beta"
  std::vector<std::string> values;  // each value as TOML text (what --set receives), e.g. "4.0", "\"pre\""
};

struct EnsembleSpec {
  std::string over;        // axis of repetitions (empty: none; every point is its own group)
  std::string phase_axis;  // axis of the phase diagram (empty: none)
  double cluster_epsilon = 1e-3;
  double pair_cosine = 0.999;
};

struct SweepSpec {
  std::filesystem::path file;     // the sweep file (for messages)
  std::filesystem::path base;     // the base configuration file; empty: the default of every key
  std::string base_text;          // its TOML text
  std::vector<std::string> set;   // [set] as "key=value" overrides, in file order
  std::vector<SweepAxis> axes;    // in file order
  EnsembleSpec ensemble;
  std::string text;               // the sweep file's own text (stored in the index)
};

struct SweepPoint {
  std::size_t index = 0;
  std::vector<std::size_t> coordinates;  // index of the value on each axis
  std::string name;                      // stable file stem, e.g. "scheme=pre_beta=4_seed=3"
  RunConfig config;                      // validated; output.path is left at its default
};

// Parses a sweep file's text (reads the base file it names, relative to `file`'s directory).
// Throws InputError naming the key at fault.
SweepSpec parse_sweep(std::string_view text, const std::filesystem::path& file);
SweepSpec load_sweep(const std::filesystem::path& file);

// Every point of the product, in the documented order, each validated by parse_config. A bad value
// is an InputError naming the key and the point; two points with the same configuration are an
// error too.
std::vector<SweepPoint> expand_sweep(const SweepSpec& spec);

// The resolved value of configuration key `key` in `config`, as typed for the index. Throws
// std::out_of_range when the key does not apply to the configuration.
ConfigScalar config_value(const RunConfig& config, const std::string& key);
// A value as text for names and tables: numbers in their shortest exact form.
std::string value_label(const ConfigScalar& value);

}  // namespace normdyn
