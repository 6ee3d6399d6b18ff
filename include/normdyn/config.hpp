#pragma once
// The typed, validated configuration of a run. Strings end at the edge: config.cpp turns TOML and
// `--set` flags into these structs and reports every problem with the key's name; nothing
// downstream reads a string key.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "normdyn/schemes.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn {

enum class QkvKind { identity, gaussian, gaussian_per_layer, file };
enum class InitKind { uniform, gaussian, orthonormal, cap, file };
enum class Method { dopri5, cash_karp54, fehlberg78, bulirsch_stoer, rk4, euler, discrete };

std::string_view to_string(QkvKind k);
std::string_view to_string(InitKind k);
std::string_view to_string(Method m);
bool is_adaptive(Method m);

struct ModelConfig {
  Scheme scheme = PostLN{};
  Index n = 32;
  Index d = 3;
  double beta = 1.0;
  QkvKind qkv = QkvKind::identity;
  std::uint64_t qkv_seed = 1;  // defaults to init.seed
  std::filesystem::path qkv_file;  // datasets Q, K, V: [d, d] or [layers, d, d]
};

struct InitConfig {
  InitKind kind = InitKind::uniform;
  std::uint64_t seed = 1;
  double r0 = 1.0;
  double delta = 0.01;  // cap
  std::filesystem::path file;                                 // file
  std::string dataset = "/particles/tokens/direction/value";  // file: [n, d] or [frames, n, d]
  std::int64_t frame = -1;                                    // file, 3-D dataset: −1 = last
  std::string radius_dataset;  // file: [n] or [frames, n]; empty: the run file's radius if any, else r0
};

struct SolverConfig {
  Method method = Method::dopri5;
  double rtol = 1e-8;
  double atol = 1e-10;
  double dt = 0.01;       // fixed-step methods: the step; discrete: the layer step h; adaptive: first trial step
  double t_end = 20.0;
  double dt_min = 1e-12;  // adaptive: a step below this ends the run with status step_underflow
  std::int64_t max_steps = 0;  // 0: unlimited
  bool project = true;         // renormalize directions after every step (retraction)
  double sync_epsilon = 0.0;   // > 0: stop once every pairwise cosine exceeds 1 − sync_epsilon
  int threads = 0;             // 0: OMP_NUM_THREADS, else all cores
};

struct OutputConfig {
  std::filesystem::path path = "run.h5";
  std::optional<std::int64_t> samples = 201;  // equally spaced on [0, t_end], or
  std::vector<double> times;                  // explicit sample times (then samples is empty)
  std::int64_t flush_frames = 1000;  // flush the file after this many frames ...
  double flush_seconds = 2.0;        // ... or this many seconds of wall time, whichever comes first
  bool observables = true;           // write /observables (energy, variance, minimum cosine) per frame
  int compression = 1;               // deflate level 0-9 (with shuffle) of the frame datasets

  // The resolved sample times.
  std::vector<double> sample_times(double t_end) const;
};

struct RunConfig {
  ModelConfig model;
  InitConfig init;
  SolverConfig solver;
  OutputConfig output;
};

// Parses and validates. `overrides` are "section.key=value" strings (the --set flag); values are
// TOML values, and a bare word is taken as a string. Throws InputError naming the key.
RunConfig parse_config(std::string_view toml_text, std::string_view source_name,
                       const std::vector<std::string>& overrides = {});
RunConfig load_config(const std::filesystem::path& file, const std::vector<std::string>& overrides = {});

// The fully resolved configuration as TOML; parse_config(to_toml(c)) reproduces c exactly.
std::string to_toml(const RunConfig& c);

// The resolved configuration as typed (key, value) pairs, e.g. ("model.beta", 4.0), for writers
// that store every key as an attribute (the /parameters group of the run file).
using ConfigScalar = std::variant<double, std::int64_t, bool, std::string, std::vector<double>>;
std::vector<std::pair<std::string, ConfigScalar>> config_values(const RunConfig& c);

// One row per configuration key, for `normdyn config-reference` and the README.
struct ConfigKeyDoc {
  std::string key;
  std::string type;
  std::string default_value;
  std::string doc;
};
std::vector<ConfigKeyDoc> config_reference();

// The closest name to `word` among `candidates` (edit distance), if any is reasonably close.
std::optional<std::string> did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace normdyn
