#pragma once
// The typed, validated configuration of a run. Strings end at the edge: src/config/ turns TOML and
// `--set` flags into these structs and reports every problem with the key's name; nothing
// downstream reads a string key.
#ifdef NORMDYN_BELOW_CONFIGURATION
// The solvers take their settings as arguments, so that they can be driven without a RunConfig.
#error "normdyn/config.hpp included by a library that stands below the configuration (solvers/)"
#endif
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "normdyn/attention_matrices.hpp"
#include "normdyn/attention_spec.hpp"
#include "normdyn/noise.hpp"
#include "normdyn/terms.hpp"
#include "normdyn/schemes.hpp"
#include "normdyn/solvers/limiter.hpp"
#include "normdyn/solvers/meanfield_method.hpp"
#include "normdyn/steppers.hpp"
#include "normdyn/tokens.hpp"
#include "normdyn/user_terms.hpp"

namespace normdyn {

enum class QkvKind { identity, gaussian, gaussian_per_layer, gaussian_unit_norm, file, given, gaussian_per_map_layer };
enum class InitKind { uniform, gaussian, orthonormal, cap, file, perturbed_uniform, von_mises, given, equiangular };
// What is simulated: n tokens (weighted or not), or the mean-field density on the circle.
enum class ModelKind { particles, meanfield };
// How particles discretize an initial density (init.sampling).
enum class Sampling { sampled, weighted, grid };

std::string_view to_string(QkvKind k);
std::string_view to_string(InitKind k);
std::string_view to_string(ModelKind k);
std::string_view to_string(Sampling s);
std::string_view to_string(Limiter l);
std::string_view to_string(MeanFieldMethod m);
// Whether the initial-condition kind is a density (perturbed_uniform, von_mises; uniform counts).
bool is_density_kind(InitKind k);

struct ModelConfig {
  ModelKind kind = ModelKind::particles;
  Scheme scheme = PostLN{};
  Index n = 32;
  Index d = 3;
  double beta = 1.0;
  QkvKind qkv = QkvKind::identity;
  std::uint64_t qkv_seed = 1;      // defaults to init.seed
  std::filesystem::path qkv_file;  // datasets Q, K, V: [d, d] or [layers, d, d]; [heads, d, d] or [layers, heads, d, d]
  Index heads = 1;                 // attention heads; A_i is the sum of theirs
  double qkv_sigma = 0.0;          // gaussian_per_map_layer: V = I + (sigma/sqrt(h)) G_k per layer
  // model.qkv = "given": the matrices of each layer, given with the run (Python's qkv=) and stored in
  // its run file (/parameters/qkv), not in the TOML text, which holds their digest.
  std::shared_ptr<const std::vector<AttentionMatrices>> given_qkv;
  std::string qkv_digest;
};

struct InitConfig {
  InitKind kind = InitKind::uniform;
  std::uint64_t seed = 1;
  double r0 = 1.0;
  double delta = 0.01;                                        // cap
  double rho = 0.0;                                           // equiangular: every pairwise cosine
  std::filesystem::path file;                                 // file
  std::string dataset = "/particles/tokens/direction/value";  // file: [n, d] or [frames, n, d]
  std::int64_t frame = -1;                                    // file, 3-D dataset: −1 = last
  std::string radius_dataset;  // file: [n] or [frames, n]; empty: the run file's radius if any, else r0

  // Densities (mean field; particles sample them). Relative to the uniform measure on S^{d-1}.
  std::int64_t mode = 1;                  // perturbed_uniform: 1 + amplitude cos(mode φ)
  double amplitude = 0.1;                 // perturbed_uniform, |amplitude| <= 1
  std::vector<double> centers{0.0};       // von_mises: angles of the centres (plane of the first two axes)
  std::vector<double> kappa{4.0};         // von_mises: concentrations, one per centre (or one for all)
  std::vector<double> weights;            // von_mises: mixture weights (resolved: one per centre)
  Sampling sampling = Sampling::sampled;  // particles: how n tokens discretize the density
  double radius_width = 0.0;              // radii uniform on [r0 − w/2, r0 + w/2] (0: all r0)
  // init.kind = "given": the initial tokens, given with the run (Python's tokens=) as rows x_j, and as
  // directions x_j/|x_j| with radii |x_j|; stored in its run file (/parameters/initial_tokens), not in
  // the TOML text, which holds their digest.
  struct GivenTokens {
    RowMatrix rows;
    Tokens tokens;
  };
  std::shared_ptr<const GivenTokens> given_tokens;
  std::string tokens_digest;
};

// Where the feed-forward term's weights come from (feedforward.weights): none (no term), the
// configuration itself (feedforward.a, feedforward.omega), or an HDF5 file (feedforward.file).
enum class FeedForwardWeights { none, inline_values, file };
std::string_view to_string(FeedForwardWeights w);

// [feedforward]: the term F(x) = Σ_m ω_m σ(<a_m, x>) a_m of the block output (terms/feedforward.hpp).
struct FeedForwardConfig {
  FeedForwardWeights weights = FeedForwardWeights::none;
  std::vector<double> a;       // inline: [M, d] row-major
  std::vector<double> omega;   // inline: [M]
  std::filesystem::path file;  // file: datasets a [M, d] and omega [M]
  Activation activation = Relu{};
  TermsBlock block = TermsBlock::parallel;
  bool active() const { return weights != FeedForwardWeights::none; }
};

// The mean-field solvers on the circle and on the sphere S^2 (model.kind = "meanfield").
struct MeanFieldConfig {
  std::int64_t grid = 512;        // cells M in φ
  std::int64_t radial_grid = 32;  // cells in r (schemes with a radius)
  std::int64_t degree = 32;       // model.d = 3: the largest degree L of the spherical harmonics
  Limiter limiter = Limiter::van_leer;
  MeanFieldMethod method = MeanFieldMethod::finite_volume;  // the transport of solver.method = "split"
  std::int64_t cursor_grid = 32;  // cells M_σ in the cursor σ (causal masks: solvers/meanfield_causal)
};

struct SolverConfig {
  Method method = Method::dopri5;  // a row of steppers.hpp: the method used
  bool method_auto = true;         // solver.method = "auto": `method` was chosen by auto_method (steppers.hpp)
  double rtol = 1e-8;
  double atol = 1e-10;
  double dt = 0.01;  // fixed-step methods: the step; discrete: the layer step h; adaptive: first trial step
  double t_end = 20.0;
  double t_start = 0.0;        // where integration starts: 0, or where the run this one continues ended
  double dt_min = 1e-12;       // adaptive: a step below this ends the run with status step_underflow
  std::int64_t max_steps = 0;  // 0: unlimited
  bool project = true;         // renormalize directions after every step (retraction)
  double sync_epsilon = 0.0;   // > 0: stop once every pairwise cosine exceeds 1 − sync_epsilon
  int threads = 0;             // 0: OMP_NUM_THREADS, else all cores
};

struct OutputConfig {
  std::filesystem::path path = "run.h5";
  std::optional<std::int64_t> samples = 201;  // equally spaced on [0, t_end], or
  std::vector<double> times;                  // explicit sample times (then samples is empty)
  std::int64_t flush_frames = 1000;           // flush the file after this many frames ...
  double flush_seconds = 2.0;                 // ... or this many seconds of wall time, whichever comes first
  bool observables = true;                    // write /observables (energy, variance, minimum cosine) per frame
  int compression = 0;                        // deflate level 0-9 (with shuffle) of the frame datasets (0: none)

  // The resolved sample times.
  // The resolved sample times on [t_start, t_end].
  std::vector<double> sample_times(double t_end, double t_start = 0.0) const;
};

struct RunConfig {
  ModelConfig model;
  AttentionSpec attention;        // [attention]: mask, score bias, normalizer
  NoiseSpec noise;                // [noise]: none, or the noise of a stochastic run
  FeedForwardConfig feedforward;  // [feedforward]: the feed-forward term, if any
  // The user's terms (user_terms.hpp): [[terms]] libraries first, then those given with the run
  // (Python's terms=), which the TOML text does not hold (the run file records them).
  std::vector<UserTermSpec> terms;
  MeanFieldConfig meanfield;
  InitConfig init;
  SolverConfig solver;
  OutputConfig output;
};

// Parses and validates. `overrides` are "section.key=value" strings (the --set flag); values are
// TOML values, and a bare word is taken as a string. Throws InputError naming the key.
RunConfig parse_config(std::string_view toml_text, std::string_view source_name,
                       const std::vector<std::string>& overrides = {});
// Reads a regular file (never a FIFO, device or directory) or, for "-", standard input; at most
// 4 MiB either way.
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
