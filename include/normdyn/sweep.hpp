#pragma once
// A sweep: a base configuration and axes over configuration keys, whose points are the product of
// the axes (`normdyn sweep`, `normdyn ensemble`). Strings end here: sweep.cpp reads the sweep file
// (TOML) and turns a point into a validated RunConfig through the configuration parser, so that a
// bad value is reported, naming its axis and point, before anything runs.
//
//   base = "base.toml"                  # optional; relative to the sweep file; else every default
//   [set]                               # optional; fixed overrides of the base, any key
//   "solver.t_end" = 50.0
//   [replace]                           # optional; as [set], and drops the keys of the base that
//   "output.times" = [0.0, 1.0, 10.0]   #   conflict with them (here the base's output.samples)
//   [axes]                              # any configuration key, each an array of values
//   "model.scheme" = ["post", "pre", { value = "ngpt", set = { "model.alpha" = 0.5 } }]
//   "model.beta" = [1.0, 4.0, 9.0]
//   "init.seed" = [1, 2, 3, 4]
//   [[zip]]                             # keys varying together: one axis (one dimension)
//   name = "size"                       #   its dimension (default: the last key parts joined by "+")
//   "model.n" = [32, 64, 128]
//   "solver.t_end" = [10.0, 20.0, 40.0]
//   [[point]]                           # explicit points: together one axis, dimension "point"
//   "model.scheme" = "pre"
//   "model.beta" = 4.0
//   [ensemble]                          # optional: how `normdyn sweep` aggregates the runs
//   over = "init.seed"                  # the axis of repetitions (default: init.seed if an axis)
//   phase_axis = "model.beta"           # y axis of the phase diagram (default: model.beta if an axis)
//   cluster_epsilon = 1e-3              # clusters: cosine > 1 - epsilon (as `normdyn analyze`)
//   pair_cosine = 0.999                 # synchronized pairs: cosine > pair_cosine
//
// Values. An axis value is a TOML value, or an inline table { value = V, set = {...}, replace =
// {...} } whose overrides apply at that value only (e.g. model.alpha for the nGPT points). A
// [[point]] may hold `set`/`replace` tables the same way. Overrides are the strings of `--set`
// (parse_config): "key=value", and "key:=value" for a replacing one.
//
// Order. Axes are the [axes] keys, the [[zip]] tables and the [[point]] list (one axis, at its first
// table), in the order of the file. Points are numbered in the order of nested loops over the axes:
// the first axis varies slowest, the last fastest (row-major, a mixed-radix number whose digits are
// the coordinates). With the [axes] above alone, point 0 is (post, 1, 1), point 1 (post, 1, 2),
// ..., point 4 (post, 4, 1), ..., point 12 (pre, 1, 1).
//
// Laziness. Nothing here holds the resolved configurations: SweepPoints computes point i on demand
// (point_count, coordinates, point_name, point); expand_sweep is the eager form for small sweeps.
//
// Names. Each point's name is built from its values alone (not from its index), so that it stays
// the same when values are added to an axis: "<axis>=<value>" joined by "_", where <axis> is the
// last component of the key (the whole key if two axes share it; a zipped axis gives one part per
// key, a point list "point=<i>"), numbers in their shortest exact form (4.0 → "4", 0.001 →
// "0.001"), strings with characters other than [A-Za-z0-9._+-] replaced by "-", arrays by a hash
// of their text; e.g. "scheme=pre_beta=4_seed=3".
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "normdyn/config.hpp"

namespace normdyn {

enum class SweepAxisKind { product, zip, points };

struct SweepAxis {
  // product: the configuration key, e.g. "model.beta"; zip: its first key; points: "point".
  std::string key;
  // Each value as TOML text (what --set receives), e.g. "4.0", "\"pre\""; zip: of the first key;
  // points: the point's assignments as text. values.size() is the axis' length.
  std::vector<std::string> values;
  SweepAxisKind kind = SweepAxisKind::product;
  std::string dimension;          // its dimension in the index and load_sweep
  std::vector<std::string> keys;  // every key the axis sets (its columns in the index), in file order
  // Per value: the overrides it applies ("key=value" / "key:=value"), its own set/replace included.
  std::vector<std::vector<std::string>> overrides;
};

struct EnsembleSpec {
  std::string over;        // axis of repetitions (empty: none; every point is its own group)
  std::string phase_axis;  // axis of the phase diagram (empty: none)
  double cluster_epsilon = 1e-3;
  double pair_cosine = 0.999;
};

struct SweepSpec {
  std::filesystem::path file;    // the sweep file (for messages)
  std::filesystem::path base;    // the base configuration file; empty: the default of every key
  std::string base_text;         // its TOML text
  std::vector<std::string> set;  // [set] as "key=value", [replace] as "key:=value", then --set, in order
  std::vector<SweepAxis> axes;   // in file order
  EnsembleSpec ensemble;
  std::string text;  // the sweep file's own text (stored in the index)
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

// Adds overrides given on the command line ("key=value" or "key:=value", as `normdyn run --set`)
// after the file's [set]; the sweep-managed keys are refused. Throws InputError naming the key.
void add_overrides(SweepSpec& spec, const std::vector<std::string>& overrides);

// The points of a sweep, computed on demand: a point count and point(i). Holds the spec by
// reference (it must outlive this) and a few names; nothing per point.
class SweepPoints {
 public:
  // Throws InputError("axes") when the product has more than 2^40 points.
  explicit SweepPoints(const SweepSpec& spec);
  std::size_t size() const { return count_; }
  // The index of the value on each axis (mixed radix, the last axis fastest).
  std::vector<std::size_t> coordinates(std::size_t index) const;
  // The overrides of point `index`: [set], then each axis' value, in axis order.
  std::vector<std::string> overrides(std::size_t index) const;
  // The point's name from the values as written (no resolution): cheap, the same as point(i).name
  // except that two points of one sweep with the same name get "_p<index>" in expand_sweep only.
  std::string name(std::size_t index) const;
  // Resolves and validates point `index`. Throws InputError naming the key and the point (also for
  // mean-field configurations, which sweeps do not run).
  SweepPoint point(std::size_t index) const;
  // "model.beta = 4.0, init.seed = 3": the point's axis values as written, for messages; with
  // `labels`, numbers in their shortest form ("model.beta = 4") and strings unquoted, for lists.
  std::string describe(std::size_t index, bool labels = false) const;

 private:
  const SweepSpec* spec_;
  std::size_t count_ = 1;
  std::vector<std::vector<std::string>> labels_;  // per axis, per value: its part of the name
  std::vector<std::size_t> radix_;                // the length of each axis
  std::string base_name_;
};

// Checks a sweep's points for identical configurations and names as they are resolved one by one:
// two 64-bit hashes per point (a few tens of bytes in the hash tables), not the configurations.
class SweepDuplicates {
 public:
  // Throws InputError("axes") naming both points when `point` repeats an earlier configuration;
  // returns the point's name, with "_p<index>" appended when an earlier point has the same name.
  std::string check(const SweepPoints& points, const SweepPoint& point);

 private:
  std::unordered_map<std::uint64_t, std::size_t> configs_;  // hash of the resolved TOML → point
  std::unordered_set<std::uint64_t> names_;
};

// Every point of the product, in the documented order, each validated by parse_config. A bad value
// is an InputError naming the key and the point; two points with the same configuration are an
// error too. Holds every resolved configuration: for large sweeps use SweepPoints.
std::vector<SweepPoint> expand_sweep(const SweepSpec& spec);

// The index's columns: every key set by an axis, in axis order (a key on two axes once), with the
// axis that sets it.
std::vector<std::pair<std::string, std::size_t>> sweep_columns(const SweepSpec& spec);
// The resolved value of each column at a point (std::monostate-free: a key that does not apply to
// the point's configuration gives the empty string).
std::vector<ConfigScalar> column_values(const SweepSpec& spec, const RunConfig& config);

// The resolved value of configuration key `key` in `config`, as typed for the index. Throws
// std::out_of_range when the key does not apply to the configuration.
ConfigScalar config_value(const RunConfig& config, const std::string& key);
// A value as text for names and tables: numbers in their shortest exact form.
std::string value_label(const ConfigScalar& value);

}  // namespace normdyn
