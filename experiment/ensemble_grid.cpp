// The ensemble's grid: its dimensions and coordinates, the digests and the members an existing
// output holds, and the grid file of a result.
#include "ensemble_internal.hpp"

namespace normdyn::ensemble_internal {

// ---- layout of the grid

std::vector<std::string> dimension_names(const std::vector<SweepAxis>& axes) {
  std::vector<std::string> last;
  for (const auto& a : axes) last.push_back(a.key.substr(a.key.rfind('.') + 1));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < axes.size(); ++i)
    out.push_back(std::count(last.begin(), last.end(), last[i]) > 1 ? axes[i].key : last[i]);
  return out;
}

GridValues coordinate_values(const std::vector<ConfigScalar>& values) {
  auto all = [&](auto pred) { return std::all_of(values.begin(), values.end(), pred); };
  if (all([](const ConfigScalar& v) { return std::holds_alternative<double>(v); })) {
    std::vector<double> out;
    for (const auto& v : values) out.push_back(std::get<double>(v));
    return out;
  }
  if (all([](const ConfigScalar& v) {
        return std::holds_alternative<std::int64_t>(v) || std::holds_alternative<bool>(v);
      })) {
    std::vector<std::int64_t> out;
    for (const auto& v : values)
      out.push_back(std::holds_alternative<bool>(v) ? std::int64_t{std::get<bool>(v)} : std::get<std::int64_t>(v));
    return out;
  }
  std::vector<std::string> out;
  for (const auto& v : values) out.push_back(value_label(v));
  return out;
}

// Linear interpolation between order statistics (numpy's default), of values sorted in place.
double quantile(std::vector<double>& sorted, double q) {
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// 0 for a citable fit, else 1 + the index of its problem token.
std::int64_t problem_flag(const std::string& problem) {
  if (problem.empty()) return 0;
  for (std::size_t k = 0; k < std::size(analysis::kProblemTokens); ++k)
    if (analysis::kProblemTokens[k] == problem) return static_cast<std::int64_t>(k + 1);
  throw std::logic_error("unknown rate-fit problem " + problem);
}

std::string number_text(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// The output may be created, or replaced: never an entry that is not a regular file (a FIFO, a
// device, a directory or a symbolic link, which the rename would replace or the checks follow), and
// never a run file, which is not an ensemble's to replace. Returns whether there is an output whose
// members may be reused (it exists, and force does not start over).
bool require_replaceable_output(const EnsembleOptions& options) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(options.output, ec))) return false;  // nothing there
  if (is_special_entry(options.output))
    throw InputError(options.output_name, options.output.string() +
                                              " exists and is not a regular file (a FIFO, device, directory or "
                                              "symbolic link); an ensemble replaces only regular files");
  if (is_run_file(options.output))
    throw InputError(
        options.output_name,
        options.output.string() + " is a normdyn run file, which an ensemble never replaces: choose another output");
  return !options.force;
}

// The digest by which an ensemble recognizes a member of another: its resolved configuration as
// the member runs it (single-threaded, no file), with the figure options. Distinct configurations
// share a digest with probability about 2^-64 per pair.
std::uint64_t member_digest(RunConfig config, const EnsembleSpec& e) {
  config.solver.threads = 1;
  config.output.path.clear();
  config.output.observables = false;
  config.output.flush_frames = OutputConfig{}.flush_frames;
  config.output.flush_seconds = OutputConfig{}.flush_seconds;
  config.output.compression = 0;
  // The user's terms given from Python are not in the text: their record is.
  std::string terms;
  for (const UserTermSpec& t : config.terms)
    if (t.kind != "library")
      terms += '\0' + t.name + ' ' + t.kind + ' ' + t.digest + ' ' + t.params + (t.rows ? " rows" : "");
  return text_hash(to_toml(config) + '\0' + number_text(e.pair_cosine) + ' ' + number_text(e.cluster_epsilon) + terms);
}

// Reads the members of the existing output, refusing it (InputError naming the output) unless
// every one of them is a member of this ensemble (`digests`), with its trajectory kept here if the
// file keeps it (`kept`): what it holds is then all in the file that replaces it.
PriorMembers read_prior(const EnsembleOptions& options, const std::vector<std::uint64_t>& digests,
                        const std::vector<std::uint64_t>& kept) {
  const std::string refused = options.output.string() + " exists";
  const std::string replace = "; " + options.force_name + " replaces it, or choose another output";
  GridFile file;
  try {
    file = read_grid_file(options.output);
  } catch (const IoError&) {
    throw InputError(options.output_name, refused + " and is not an ensemble's file" + replace);
  }
  auto attribute = [&](const std::string& name) -> std::string {
    for (const auto& [key, value] : file.attributes)
      if (key == name && std::holds_alternative<std::string>(value)) return std::get<std::string>(value);
    return {};
  };
  auto variable = [&]<class T>(const std::string& name, T*) -> const std::vector<T>* {
    for (const auto& v : file.variables)
      if (v.name == name) return std::get_if<std::vector<T>>(&v.values);
    return nullptr;
  };
  constexpr double* f64 = nullptr;
  constexpr std::int64_t* i64 = nullptr;
  if (attribute("schema") != "normdyn.ensemble/1")
    throw InputError(options.output_name, refused + " and is not an ensemble's file" + replace);
  const auto* config = variable("member_config", i64);
  const auto* frames = variable("member_frames", i64);
  const auto* status = variable("status", i64);
  const auto* steps = variable("accepted_steps", i64);
  const auto* rhs = variable("rhs_evaluations", i64);
  const auto* reached = variable("t_reached", f64);
  const std::array series{variable("member_pair_fraction", f64), variable("member_cluster_count", f64),
                          variable("member_one_minus_mean_cosine", f64), variable("member_mean_radius", f64)};
  const auto* time = [&]() -> const std::vector<double>* {
    for (const auto& d : file.dimensions)
      if (d.name == "time") return std::get_if<std::vector<double>>(&d.coordinate);
    return nullptr;
  }();
  if (!config || !frames || !status || !steps || !rhs || !reached || !time ||
      std::any_of(series.begin(), series.end(), [](auto* v) { return v == nullptr; }))
    throw InputError(options.output_name, refused +
                                              " and holds an ensemble written without its members' figures (by "
                                              "an earlier normdyn or without member figures), which cannot be "
                                              "reused" +
                                              replace);
  const std::size_t members = config->size(), T = time->size();
  if (frames->size() != members || status->size() != members || steps->size() != members || rhs->size() != members ||
      reached->size() != members ||
      std::any_of(series.begin(), series.end(), [&](auto* v) { return v->size() != members * T; }))
    throw InputError(options.output_name, refused + " and is damaged (its members' arrays disagree)" + replace);

  const std::unordered_set<std::uint64_t> here(digests.begin(), digests.end());
  std::size_t missing = 0;
  for (const std::int64_t c : *config) missing += here.count(std::bit_cast<std::uint64_t>(c)) == 0;
  const auto* trajectory_config = variable("trajectory_config", i64);
  const std::unordered_set<std::uint64_t> kept_here(kept.begin(), kept.end());
  std::size_t missing_trajectories = 0;
  if (trajectory_config)
    for (const std::int64_t c : *trajectory_config)
      missing_trajectories += kept_here.count(std::bit_cast<std::uint64_t>(c)) == 0;
  if (missing > 0 || missing_trajectories > 0) {
    std::string what = std::to_string(missing) + " of its " + std::to_string(members) + " members are not members here";
    if (missing_trajectories > 0)
      what += (missing > 0 ? ", and " : "; ") + std::to_string(missing_trajectories) +
              " of its kept trajectories are not kept here";
    throw InputError(options.output_name, refused + " and holds another ensemble (" + what + ")" + replace);
  }

  PriorMembers prior;
  prior.identity = attribute("identity");
  for (std::size_t i = 0; i < members; ++i) {
    const auto f = static_cast<std::size_t>(std::clamp<std::int64_t>((*frames)[i], 0, static_cast<std::int64_t>(T)));
    EnsembleRecord r;
    r.status = static_cast<RunStatus>((*status)[i]);
    r.t_reached = (*reached)[i];
    r.accepted_steps = (*steps)[i];
    r.rhs_evaluations = (*rhs)[i];
    std::vector<double>* out[] = {&r.pair_fraction, &r.cluster_count, &r.one_minus_mean_cosine, &r.mean_radius};
    for (std::size_t k = 0; k < series.size(); ++k)
      out[k]->assign(series[k]->begin() + static_cast<std::ptrdiff_t>(i * T),
                     series[k]->begin() + static_cast<std::ptrdiff_t>(i * T + f));
    prior.members.emplace(std::bit_cast<std::uint64_t>((*config)[i]), std::move(r));
  }
  const auto* direction = variable("direction", f64);
  const auto* radius = variable("radius", f64);
  if (trajectory_config && direction && radius && !trajectory_config->empty()) {
    const std::size_t K = trajectory_config->size(), D = direction->size() / K, R = radius->size() / K;
    for (std::size_t k = 0; k < K; ++k) {
      const std::uint64_t c = std::bit_cast<std::uint64_t>((*trajectory_config)[k]);
      const auto member = prior.members.find(c);
      if (member == prior.members.end()) continue;
      // Only the frames the member reached (NaN after its end in the file).
      const std::size_t f = member->second.frames();
      const std::size_t per_d = T ? D / T : 0, per_r = T ? R / T : 0;
      prior.trajectories.emplace(
          c, std::pair{std::vector<double>(direction->begin() + static_cast<std::ptrdiff_t>(k * D),
                                           direction->begin() + static_cast<std::ptrdiff_t>(k * D + f * per_d)),
                       std::vector<double>(radius->begin() + static_cast<std::ptrdiff_t>(k * R),
                                           radius->begin() + static_cast<std::ptrdiff_t>(k * R + f * per_r))});
    }
  }
  return prior;
}

// Everything the journal's records depend on: a journal is reused only by the same ensemble.
std::string identity_of(const SweepSpec& spec, const std::vector<SweepPoint>& points, const EnsembleOptions& options) {
  std::string id = spec.text + '\0' + spec.base_text + '\0';
  for (const auto& s : spec.set) id += s + '\0';
  for (const auto& a : spec.axes) {
    id += a.key + '=';
    for (const auto& v : a.values) id += v + ',';
    id += '\0';
  }
  id += to_toml(points.front().config) + '\0' + std::to_string(points.size()) +
        (options.member_figures ? " figures " : " ") + number_text(spec.ensemble.pair_cosine) + ' ' +
        number_text(spec.ensemble.cluster_epsilon) + " trajectories";
  for (auto p : options.trajectories) id += ' ' + std::to_string(p);
  return id;
}

}  // namespace normdyn::ensemble_internal

namespace normdyn {

// Arrays given with the ensemble, as the run file stores them (the configuration holds their digests).
template <class Add>
void add_given_arrays(GridFile& f, const EnsembleResult& r, Add&& add) {
  using A = std::vector<std::pair<std::string, TableAttribute>>;
  const auto indices = [](std::size_t count) {
    std::vector<std::int64_t> out(count);
    for (std::size_t i = 0; i < count; ++i) out[i] = static_cast<std::int64_t>(i);
    return out;
  };
  if (const auto& qkv = r.first_config.model.given_qkv) {
    const auto d = static_cast<std::size_t>(r.first_config.model.d);
    f.dimensions.push_back(GridDimension{"qkv_layer", indices(qkv->size()), A{}});
    f.dimensions.push_back(GridDimension{"head", indices(static_cast<std::size_t>(r.first_config.model.heads)), A{}});
    f.dimensions.push_back(GridDimension{"qkv_row", indices(d), A{}});
    f.dimensions.push_back(GridDimension{"qkv_column", indices(d), A{}});
    const char* names[3] = {"qkv_Q", "qkv_K", "qkv_V"};
    const std::vector<double> values = given_qkv_values(r.first_config.model);
    const std::size_t third = values.size() / 3;
    for (std::size_t m = 0; m < 3; ++m)
      add(names[m], {"qkv_layer", "head", "qkv_row", "qkv_column"},
          std::vector<double>(values.begin() + static_cast<std::ptrdiff_t>(m * third),
                              values.begin() + static_cast<std::ptrdiff_t>((m + 1) * third)),
          std::string("given ") + "QKV"[m] + " of each layer and head (model.qkv = \"given\")");
  }
  if (const auto& given = r.first_config.init.given_tokens) {
    if (r.trajectory_points.empty()) {
      f.dimensions.push_back(GridDimension{"token", indices(static_cast<std::size_t>(r.n)), A{}});
      f.dimensions.push_back(GridDimension{"component", indices(static_cast<std::size_t>(r.d)), A{}});
    }
    add("initial_tokens", {"token", "component"},
        std::vector<double>(given->rows.data(), given->rows.data() + given->rows.size()),
        "given initial tokens x_j = r_j theta_j (init.kind = \"given\")");
  }
  if (const RowMatrix* bias = given_score_bias(r.first_config)) {
    f.dimensions.push_back(GridDimension{"bias_row", indices(static_cast<std::size_t>(bias->rows())), A{}});
    f.dimensions.push_back(GridDimension{"bias_column", indices(static_cast<std::size_t>(bias->cols())), A{}});
    add("score_bias", {"bias_row", "bias_column"}, std::vector<double>(bias->data(), bias->data() + bias->size()),
        "given score bias B_ij added to the scores (attention.bias = \"matrix\"; -inf: key masked)");
  }
}

GridFile ensemble_grid(const EnsembleResult& r) {
  // The grid borrows the result's arrays: a copy would hold the members' figures twice while the file
  // is written.
  const auto view = [](const auto& v) {
    return GridValues(std::span<const typename std::decay_t<decltype(v)>::value_type>(v));
  };
  using A = std::vector<std::pair<std::string, TableAttribute>>;
  std::string set_text, set_flags;
  for (const auto& o : r.set) {
    set_text += o + '\n';
    set_flags += " --set '" + o + "'";
  }
  GridFile f;
  f.attributes = A{{"schema", std::string("normdyn.ensemble/1")},
                   {"normdyn_version", std::string(version())},
                   {"normdyn_revision", std::string(revision())},
                   {"compiler", std::string(compiler())},
                   {"build_type", std::string(build_type())},
                   {"config", r.config_toml},
                   {"sweep", r.sweep_text},
                   {"command_line", r.command_line},
                   {"over", r.over.key},
                   {"pair_cosine", r.pair_cosine},
                   {"cluster_epsilon", r.cluster_epsilon},
                   {"members", static_cast<std::int64_t>(r.members())},
                   {"failed_members", static_cast<std::int64_t>(r.failed)},
                   {"identity", r.identity},
                   {"set", set_text},
                   {"reproduce", "normdyn ensemble SWEEP_FILE" + set_flags +
                                     " (SWEEP_FILE: the `sweep` attribute; `set`: the overrides given besides it, one "
                                     "a line; `config` is point 0 resolved; the seeds are the init.seed coordinate)"}};
  std::vector<std::string> group_dims;
  for (const auto& a : r.axes) {
    f.dimensions.push_back(GridDimension{a.dimension, a.values, A{{"key", a.key}, {"long_name", a.key}}});
    group_dims.push_back(a.dimension);
  }
  f.dimensions.push_back(
      GridDimension{r.over.dimension, r.over.values,
                    A{{"key", r.over.key}, {"long_name", r.over.key.empty() ? "member" : r.over.key}}});
  f.dimensions.push_back(GridDimension{"quantile", r.quantiles, A{{"long_name", std::string("quantile level")}}});
  f.dimensions.push_back(GridDimension{"time", r.time, A{{"long_name", std::string("time (depth)")}}});
  auto with = [&](std::vector<std::string> tail) {
    std::vector<std::string> d = group_dims;
    d.insert(d.end(), tail.begin(), tail.end());
    return d;
  };
  auto add = [&](const std::string& name, std::vector<std::string> d, GridValues v, const std::string& long_name) {
    f.variables.push_back(GridVariable{name, std::move(d), std::move(v), A{{"long_name", long_name}}});
  };
  add("pair_fraction", with({"time"}), view(r.pair_fraction), "mean fraction of token pairs with cosine > pair_cosine");
  add("sync_probability", with({"time"}), view(r.sync_probability),
      "fraction of the members synchronized (every pair) by t");
  add("cluster_count", with({"time"}), view(r.cluster_count), "mean number of clusters (cosine > 1 - cluster_epsilon)");
  add("one_minus_mean_cosine", with({"time"}), view(r.one_minus_mean_cosine), "mean of 1 - mean pairwise cosine");
  add("mean_radius", with({"time"}), view(r.mean_radius), "mean of the mean token radius");
  add("members_at", with({"time"}), view(r.members_at), "members contributing at t");
  add("one_minus_mean_cosine_quantiles", with({"quantile", "time"}), view(r.one_minus_mean_cosine_quantiles),
      "quantiles of 1 - mean pairwise cosine over the members");
  add("mean_radius_quantiles", with({"quantile", "time"}), view(r.mean_radius_quantiles),
      "quantiles of the mean token radius over the members");
  add("status", with({r.over.dimension}), view(r.status), "how the member ended");
  std::string meanings;
  std::vector<std::int64_t> flags;
  for (int s = 0; s <= static_cast<int>(kLastRunStatus); ++s) {
    flags.push_back(s);
    meanings += (s ? " " : "") + std::string(to_string(static_cast<RunStatus>(s)));
  }
  f.variables.back().attributes.emplace_back("flag_meanings", meanings);
  f.variables.back().attributes.emplace_back("flag_values", "0.." + std::to_string(flags.back()));
  add("t_sync", with({r.over.dimension}), view(r.t_sync),
      "first sample time with every pair synchronized (NaN: never)");
  add("final_cluster_count", with({r.over.dimension}), view(r.final_cluster_count),
      "clusters at the member's last frame");
  {
    std::string laws = "none";
    for (auto law :
         {analysis::DecayLaw::exponential, analysis::DecayLaw::power, analysis::DecayLaw::stretched_exponential})
      laws += " " + std::string(analysis::to_string(law));
    add("rate_law", with({r.over.dimension}), view(r.rate_law),
        "law of the late-time fit of 1 - mean cosine (as normdyn analyze)");
    f.variables.back().attributes.emplace_back("flag_meanings", laws);
    f.variables.back().attributes.emplace_back("flag_values", std::string("-1..2"));
    add("rate_parameter", with({r.over.dimension}), view(r.rate_parameter),
        "rate of the fitted law (lambda, p or kappa; NaN: no fit; cite only where rate_problem is citable)");
    add("rate_stderr", with({r.over.dimension}), view(r.rate_stderr), "standard error of rate_parameter");
    std::string problems = "citable";
    for (auto token : analysis::kProblemTokens) problems += " " + std::string(token);
    add("rate_problem", with({r.over.dimension}), view(r.rate_problem),
        "why the fit is not citable as it is (citable: nothing against it)");
    f.variables.back().attributes.emplace_back("flag_meanings", problems);
    f.variables.back().attributes.emplace_back("flag_values",
                                               "0.." + std::to_string(std::size(analysis::kProblemTokens)));
  }
  add("t_reached", with({r.over.dimension}), view(r.t_reached), "time reached");
  // What a later ensemble needs to reuse the members: their figures per frame, compressed (they
  // repeat for long stretches), and the digests of their configurations.
  add("member_frames", with({r.over.dimension}), view(r.member_frames), "frames the member recorded");
  add("member_config", with({r.over.dimension}), view(r.member_config),
      "digest (64-bit FNV-1a, as a signed integer) of the member's resolved configuration and the figure options");
  const std::pair<const std::vector<double>*, const char*> member_series[] = {
      {&r.member_pair_fraction, "pair_fraction"},
      {&r.member_cluster_count, "cluster_count"},
      {&r.member_one_minus_mean_cosine, "one_minus_mean_cosine"},
      {&r.member_mean_radius, "mean_radius"}};
  for (const auto& [values, figure] : member_series) {
    if (!r.member_figures) break;
    add(std::string("member_") + figure, with({r.over.dimension, "time"}), view(*values),
        std::string("the member's ") + figure + " per sample time (NaN after its last frame)");
    f.variables.back().deflate_level = 4;
  }
  add_given_arrays(f, r, add);
  add("accepted_steps", with({r.over.dimension}), view(r.accepted_steps), "accepted steps");
  add("rhs_evaluations", with({r.over.dimension}), view(r.rhs_evaluations), "right-hand side evaluations");
  if (!r.trajectory_points.empty()) {
    std::vector<std::int64_t> pts(r.trajectory_points.begin(), r.trajectory_points.end());
    std::vector<std::int64_t> tokens(static_cast<std::size_t>(r.n)), components(static_cast<std::size_t>(r.d));
    for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::int64_t>(i);
    for (std::size_t i = 0; i < components.size(); ++i) components[i] = static_cast<std::int64_t>(i);
    f.dimensions.push_back(
        GridDimension{"trajectory", pts, A{{"long_name", std::string("point index (sweep order)")}}});
    f.dimensions.push_back(GridDimension{"token", tokens, A{}});
    f.dimensions.push_back(GridDimension{"component", components, A{}});
    add("direction", {"trajectory", "time", "token", "component"}, view(r.trajectory_direction),
        "token directions of the kept members (NaN after a member's end)");
    add("radius", {"trajectory", "time", "token"}, view(r.trajectory_radius), "token radii of the kept members");
    add("trajectory_config", {"trajectory"}, view(r.trajectory_config), "member_config of the kept member");
  }
  return f;
}

}  // namespace normdyn
