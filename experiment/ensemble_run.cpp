// One ensemble from its set-up to its file: the result's arrays, what an earlier session and an
// existing output hold, the statistics of complete groups, the conclusion.
#include "ensemble_internal.hpp"

namespace normdyn::ensemble_internal {

EnsembleRun::EnsembleRun(const SweepSpec& spec, const EnsembleOptions& options)
    : spec_(spec),
      options_(options),
      figures_{spec.ensemble.cluster_epsilon, spec.ensemble.pair_cosine},
      rewrite_at_(options.journal_rewrite_bytes) {
  for (double q : options_.quantiles)
    if (!(q >= 0.0 && q <= 1.0)) throw InputError("quantiles", "must lie in [0, 1], got " + number_text(q));
  points_ = expand_sweep(spec_);
  if (points_.empty()) throw InputError("axes", "the ensemble has no point");
  if (options_.give)
    for (auto& p : points_) options_.give(p.config);
  for (const auto& p : points_)
    if (p.config.model.kind != ModelKind::particles)
      throw InputError("model.kind", "ensembles are of particle systems (point " + p.name + " is a mean-field run)");

  res_.pair_cosine = spec_.ensemble.pair_cosine;
  res_.cluster_epsilon = spec_.ensemble.cluster_epsilon;
  res_.quantiles = options_.quantiles;
  res_.member_figures = options_.member_figures;
  res_.sweep_text = spec_.text;
  res_.command_line = options_.command_line;
  res_.set = options_.set;
  res_.config_toml = to_toml(points_.front().config);
  res_.first_config = points_.front().config;
  const RunConfig& first = points_.front().config;
  res_.time = first.output.sample_times(first.solver.t_end, first.solver.t_start);
  res_.n = first.model.n;
  res_.d = first.model.d;
  for (const auto& p : points_)
    if (p.config.output.sample_times(p.config.solver.t_end, p.config.solver.t_start) != res_.time)
      throw InputError("output.samples", "every member of an ensemble samples the same times (point " + p.name +
                                             " samples others; sweep the times with `normdyn sweep`)");

  // Axes: the group axes and the repetitions.
  const std::vector<std::string> dims = dimension_names(spec_.axes);
  for (std::size_t a = 0; a < spec_.axes.size(); ++a)
    if (!spec_.ensemble.over.empty() && spec_.axes[a].key == spec_.ensemble.over) over_axis_ = a;
  std::vector<std::vector<ConfigScalar>> values(spec_.axes.size());
  for (const auto& p : points_) {
    for (std::size_t a = 0; a < spec_.axes.size(); ++a) {
      bool on_axis = true;  // every other coordinate 0: the point names this axis' value
      for (std::size_t b = 0; b < spec_.axes.size(); ++b)
        if (b != a && p.coordinates[b] != 0) on_axis = false;
      if (on_axis && values[a].size() == p.coordinates[a])
        values[a].push_back(config_value(p.config, spec_.axes[a].key));
    }
  }
  for (std::size_t a = 0; a < spec_.axes.size(); ++a)
    if (a != over_axis_) {
      group_axes_.push_back(a);
      res_.axes.push_back(EnsembleAxis{spec_.axes[a].key, dims[a], coordinate_values(values[a])});
    }
  if (over_axis_)
    res_.over = EnsembleAxis{spec_.axes[*over_axis_].key, dims[*over_axis_], coordinate_values(values[*over_axis_])};
  else
    res_.over = EnsembleAxis{"", "member", std::vector<std::int64_t>{0}};
  res_.members_per_group = over_axis_ ? spec_.axes[*over_axis_].values.size() : 1;
  res_.groups = points_.size() / res_.members_per_group;

  keep_.assign(points_.size(), 0);
  for (std::size_t k = 0; k < options_.trajectories.size(); ++k) {
    const std::size_t p = options_.trajectories[k];
    if (p >= points_.size())
      throw InputError("trajectories", "point " + std::to_string(p) + " is not in the ensemble (points 0.." +
                                           std::to_string(points_.size() - 1) + ")");
    if (points_[p].config.model.n != res_.n || points_[p].config.model.d != res_.d)
      throw InputError("trajectories",
                       "the kept trajectories must share model.n and model.d (point " + points_[p].name + ")");
    keep_[p] = 1;
  }
  res_.trajectory_points = options_.trajectories;
  digests_.assign(points_.size(), 0);
  for (const auto& p : points_) digests_[p.index] = member_digest(p.config, spec_.ensemble);
  for (std::size_t p : options_.trajectories) kept_digests_.push_back(digests_[p]);
  journal_identity_ = identity_of(spec_, points_, options_);
  std::string id = journal_identity_ + " quantiles";
  for (double q : options_.quantiles) id += ' ' + number_text(q);
  res_.identity = text_hash_hex(id);
}

// The check of run files (session.hpp), over the ensemble's inputs: the files it was read from,
// its base configuration and every member's input files.
void EnsembleRun::require_output_not_an_input() const {
  std::vector<NamedInput> inputs;
  for (const auto& file : options_.inputs)
    inputs.push_back({file, "an input of this ensemble (its sweep or configuration file)"});
  if (!spec_.base.empty()) inputs.push_back({spec_.base, "this ensemble's base configuration (base)"});
  std::unordered_set<std::string> seen;
  for (const auto& p : points_)
    for (NamedInput& input : inputs_of(p.config, "a member's"))
      if (seen.insert(input.path.string()).second) inputs.push_back(std::move(input));
  require_not_an_input(options_.output, options_.output_name, inputs, "an ensemble",
                       options_.force ? options_.force_name : "");
}

void EnsembleRun::open_output() {
  check_resources(points_.front().config, options_.output, false);
  team_ = options_.team && options_.team->size() > 1 ? options_.team : nullptr;
  root_ = !team_ || team_->is_root();
  // Output and journal (rank 0's), before anything runs.
  if (root_ && !options_.output.empty()) {
    require_output_not_an_input();
    // The output's writer lock first, held until the file is published: another ensemble or a live
    // run on the same path is refused, and the checks below stay true until the rename.
    output_lock_.emplace(WriterLock::acquire(options_.output));
    if (require_replaceable_output(options_)) prior_ = read_prior(options_, digests_, kept_digests_);
    std::error_code ec;
    const std::filesystem::path journal_path = journal_path_of(options_.output);
    if (options_.force) std::filesystem::remove(journal_path, ec);
    journal_.emplace(journal_path, journal_identity_);
    kept_ = journal_->open(options_.output_name, options_.force_name, res_.time.size(),
                           journal_bound(res_, points_.size(), options_.trajectories.size()));
  }
  if (team_) {
    // Every process runs the same ensemble into the same file (all read the sweep file; rank 0
    // alone writes). One collective agrees on that and on the set-up of every process.
    std::string id = res_.identity + '\0';
    if (!options_.output.empty()) id += std::filesystem::absolute(options_.output).lexically_normal().string();
    if (const int code = team_->agree(0, std::hash<std::string>{}(id)); code != 0) {
      if (journal_ && journal_->created()) journal_->remove();
      if (team_->mismatched() && root_)
        throw InputError("mpirun",
                         "the processes were given different ensembles: every process needs the same sweep "
                         "file (and base), --set, -o, --quantiles and --trajectories");
      throw PeerFailure{code};
    }
  }
}

void EnsembleRun::restore() {
  // Members and groups.
  frames_ = res_.time.size();
  nq_ = res_.quantiles.size();
  G_ = res_.groups;
  M_ = res_.members_per_group;
  done_.assign(points_.size(), 0);
  remaining_.assign(G_, M_);
  group_done_.assign(G_, 0);
  members_of_.assign(G_, std::vector<std::size_t>(M_));
  for (const auto& p : points_) members_of_[group_of(p)][member_of(p)] = p.index;
  trajectories_of_.assign(G_, {});
  for (std::size_t k = 0; k < options_.trajectories.size(); ++k) {
    trajectories_of_[group_of(points_[options_.trajectories[k]])].push_back(k);
    trajectory_slot_.emplace(options_.trajectories[k], k);  // the first, when a point is listed twice
  }

  for (auto* v : {&res_.pair_fraction, &res_.sync_probability, &res_.cluster_count, &res_.one_minus_mean_cosine,
                  &res_.mean_radius})
    v->assign(G_ * frames_, kNaN);
  res_.members_at.assign(G_ * frames_, 0);
  res_.one_minus_mean_cosine_quantiles.assign(G_ * nq_ * frames_, kNaN);
  res_.mean_radius_quantiles.assign(G_ * nq_ * frames_, kNaN);
  res_.status.assign(G_ * M_, 0);
  res_.final_cluster_count.assign(G_ * M_, -1);
  res_.accepted_steps.assign(G_ * M_, 0);
  res_.rhs_evaluations.assign(G_ * M_, 0);
  res_.t_sync.assign(G_ * M_, kNaN);
  res_.t_reached.assign(G_ * M_, kNaN);
  res_.rate_law.assign(G_ * M_, -1);
  res_.rate_problem.assign(G_ * M_, 0);
  res_.rate_parameter.assign(G_ * M_, kNaN);
  res_.rate_stderr.assign(G_ * M_, kNaN);
  for (auto* v : {&res_.member_pair_fraction, &res_.member_cluster_count, &res_.member_one_minus_mean_cosine,
                  &res_.member_mean_radius})
    v->assign(G_ * M_ * frames_, kNaN);
  res_.member_frames.assign(G_ * M_, 0);
  res_.member_config.assign(G_ * M_, 0);
  for (const auto& p : points_)
    res_.member_config[group_of(p) * M_ + member_of(p)] = std::bit_cast<std::int64_t>(digests_[p.index]);
  for (std::uint64_t c : kept_digests_) res_.trajectory_config.push_back(std::bit_cast<std::int64_t>(c));
  per_frame_ = static_cast<std::size_t>(res_.n * res_.d);
  res_.trajectory_direction.assign(options_.trajectories.size() * frames_ * per_frame_, kNaN);
  res_.trajectory_radius.assign(options_.trajectories.size() * frames_ * static_cast<std::size_t>(res_.n), kNaN);

  // What an earlier session kept: complete groups, then members of the others.
  for (auto& [g, bytes] : kept_.groups) {
    if (g >= G_ || group_done_[g] || !restore_group(res_, g, trajectories_of_[g], bytes)) continue;
    group_done_[g] = 1;
    for (std::size_t p : members_of_[g]) done_[p] = 1;
    outcome_.resumed += M_;
    remaining_[g] = 0;
  }
  outcome_.journal_damaged = kept_.damaged;
  for (auto& [p, rec] : kept_.members) {
    // A record that does not fit this ensemble is integrated again (the identity makes it rare).
    const std::size_t f = rec.frames();
    const bool fits = p < points_.size() && !done_[p] && f <= res_.time.size() && rec.cluster_count.size() == f &&
                      rec.one_minus_mean_cosine.size() == f && rec.mean_radius.size() == f &&
                      rec.status != RunStatus::interrupted &&
                      rec.direction.size() == (keep_[p] ? f * static_cast<std::size_t>(res_.n * res_.d) : 0) &&
                      rec.radius.size() == (keep_[p] ? f * static_cast<std::size_t>(res_.n) : 0);
    if (!fits) continue;
    store_member(p, rec);
    rec = EnsembleRecord{};
    done_[p] = 1;
    --remaining_[group_of(points_[p])];
    ++outcome_.resumed;
  }
  kept_ = {};
  // What the existing output holds: read back, not integrated again.
  if (prior_) {
    for (std::size_t p = 0; p < points_.size(); ++p) {
      if (done_[p]) continue;
      const auto member = prior_->members.find(digests_[p]);
      if (member == prior_->members.end()) continue;
      EnsembleRecord rec = std::move(member->second);
      if (keep_[p]) {
        const auto t = prior_->trajectories.find(digests_[p]);
        if (t == prior_->trajectories.end()) continue;
        rec.direction = std::move(t->second.first);
        rec.radius = std::move(t->second.second);
      }
      store_member(p, rec);
      done_[p] = 1;
      --remaining_[group_of(points_[p])];
      ++outcome_.read_back;
    }
    prior_->members.clear();
    prior_->trajectories.clear();
  }
  for (std::size_t g = 0; g < G_; ++g)
    if (remaining_[g] == 0 && !group_done_[g]) finish_group(g);

  for (std::size_t p = 0; p < points_.size(); ++p)
    if (!done_[p]) todo_.push_back(p);
  finished_ = outcome_.resumed + outcome_.read_back;
  no_more_ = root_;
}

void EnsembleRun::store_member(std::size_t p, const EnsembleRecord& r) {
  const std::size_t at = slot_of(p);
  res_.member_frames[at] = static_cast<std::int64_t>(r.frames());
  res_.status[at] = static_cast<std::int64_t>(r.status);
  res_.t_reached[at] = r.t_reached;
  res_.accepted_steps[at] = r.accepted_steps;
  res_.rhs_evaluations[at] = r.rhs_evaluations;
  const std::vector<double>* from[] = {&r.pair_fraction, &r.cluster_count, &r.one_minus_mean_cosine, &r.mean_radius};
  std::vector<double>* to[] = {&res_.member_pair_fraction, &res_.member_cluster_count,
                               &res_.member_one_minus_mean_cosine, &res_.member_mean_radius};
  for (std::size_t k = 0; k < 4; ++k)
    std::copy(from[k]->begin(), from[k]->end(), to[k]->begin() + static_cast<std::ptrdiff_t>(at * frames_));
  if (const auto k = trajectory_slot_.find(p); k != trajectory_slot_.end()) {
    std::copy(r.direction.begin(), r.direction.end(),
              res_.trajectory_direction.begin() + static_cast<std::ptrdiff_t>(k->second * frames_ * per_frame_));
    std::copy(r.radius.begin(), r.radius.end(),
              res_.trajectory_radius.begin() +
                  static_cast<std::ptrdiff_t>(k->second * frames_ * static_cast<std::size_t>(res_.n)));
  }
}

MemberView EnsembleRun::member_view(std::size_t p) const {
  const std::size_t at = slot_of(p), f = static_cast<std::size_t>(res_.member_frames[at]);
  MemberView v;
  v.status = static_cast<RunStatus>(res_.status[at]);
  v.t_reached = res_.t_reached[at];
  v.accepted_steps = res_.accepted_steps[at];
  v.rhs_evaluations = res_.rhs_evaluations[at];
  const auto series = [&](const std::vector<double>& a) { return std::span(a.data() + at * frames_, f); };
  v.pair_fraction = series(res_.member_pair_fraction);
  v.cluster_count = series(res_.member_cluster_count);
  v.one_minus_mean_cosine = series(res_.member_one_minus_mean_cosine);
  v.mean_radius = series(res_.member_mean_radius);
  if (const auto k = trajectory_slot_.find(p); k != trajectory_slot_.end()) {
    const std::size_t n = static_cast<std::size_t>(res_.n);
    v.direction = std::span(res_.trajectory_direction.data() + k->second * frames_ * per_frame_, f * per_frame_);
    v.radius = std::span(res_.trajectory_radius.data() + k->second * frames_ * n, f * n);
  }
  return v;
}

void EnsembleRun::clear_member(std::size_t p) {
  const std::size_t at = slot_of(p);
  res_.member_frames[at] = 0;
  res_.status[at] = 0;
  res_.t_reached[at] = kNaN;
  res_.accepted_steps[at] = res_.rhs_evaluations[at] = 0;
  for (auto* v : {&res_.member_pair_fraction, &res_.member_cluster_count, &res_.member_one_minus_mean_cosine,
                  &res_.member_mean_radius})
    std::fill_n(v->begin() + static_cast<std::ptrdiff_t>(at * frames_), frames_, kNaN);
  if (const auto k = trajectory_slot_.find(p); k != trajectory_slot_.end()) {
    const std::size_t n = static_cast<std::size_t>(res_.n);
    std::fill_n(res_.trajectory_direction.begin() + static_cast<std::ptrdiff_t>(k->second * frames_ * per_frame_),
                frames_ * per_frame_, kNaN);
    std::fill_n(res_.trajectory_radius.begin() + static_cast<std::ptrdiff_t>(k->second * frames_ * n), frames_ * n,
                kNaN);
  }
}

// Computed from the members' figures where they are, in the result's arrays: a copy of every
// member's series for analysis::ensemble_series took 8 kB a member of the group at the ensemble's
// largest moment. The statistics follow its rule and its arithmetic (sums in member order), bit
// for bit; one member's series at a time is copied for its run figures.
void EnsembleRun::finish_group(std::size_t g) {
  std::vector<char> hold_last(M_);
  std::vector<std::size_t> frames(M_);
  analysis::RunSeries s;
  for (std::size_t m = 0; m < M_; ++m) {
    const std::size_t at = g * M_ + m;
    const std::size_t f = frames[m] = static_cast<std::size_t>(res_.member_frames[at]);
    const auto first = [&](const std::vector<double>& a) {
      return a.begin() + static_cast<std::ptrdiff_t>(at * frames_);
    };
    s.t.assign(res_.time.begin(), res_.time.begin() + static_cast<std::ptrdiff_t>(f));
    s.variance.assign(f, kNaN);
    s.one_minus_mean_cosine.assign(first(res_.member_one_minus_mean_cosine),
                                   first(res_.member_one_minus_mean_cosine) + static_cast<std::ptrdiff_t>(f));
    s.cluster_count.assign(first(res_.member_cluster_count),
                           first(res_.member_cluster_count) + static_cast<std::ptrdiff_t>(f));
    s.pair_fraction.assign(first(res_.member_pair_fraction),
                           first(res_.member_pair_fraction) + static_cast<std::ptrdiff_t>(f));
    hold_last[m] = static_cast<RunStatus>(res_.status[at]) == RunStatus::synchronized;
    const analysis::RunFigures fig = analysis::run_figures(s);
    res_.t_sync[at] = fig.t_sync;
    res_.final_cluster_count[at] = fig.final_cluster_count;
    res_.rate_problem[at] = problem_flag(fig.rate.problem);
    if (fig.rate.ok) {
      res_.rate_law[at] = static_cast<std::int64_t>(fig.rate.law);
      res_.rate_parameter[at] = fig.rate.parameter;
      res_.rate_stderr[at] = fig.rate.parameter_stderr;
    }
  }
  s = analysis::RunSeries{};
  // Up to the longest member, as ensemble_series (later times stay NaN, no member).
  const std::size_t longest = *std::max_element(frames.begin(), frames.end());
  std::vector<double> omc, rad;
  for (std::size_t f = 0; f < longest; ++f) {
    const std::size_t at = g * frames_ + f;
    omc.clear();
    rad.clear();
    double pairs = 0.0, clusters = 0.0;
    std::size_t synchronized = 0;
    for (std::size_t m = 0; m < M_; ++m) {
      const std::optional<std::size_t> k = analysis::member_frame(frames[m], f, hold_last[m] != 0);
      if (!k) continue;
      const std::size_t from = (g * M_ + m) * frames_ + *k;
      pairs += res_.member_pair_fraction[from];
      clusters += res_.member_cluster_count[from];
      if (res_.t_sync[g * M_ + m] <= res_.time[f]) ++synchronized;
      omc.push_back(res_.member_one_minus_mean_cosine[from]);
      rad.push_back(res_.member_mean_radius[from]);
    }
    res_.members_at[at] = static_cast<std::int64_t>(omc.size());
    if (omc.empty()) continue;
    const auto count = static_cast<double>(omc.size());
    res_.pair_fraction[at] = pairs / count;
    res_.sync_probability[at] = static_cast<double>(synchronized) / count;
    res_.cluster_count[at] = clusters / count;
    double so = 0.0, sr = 0.0;
    for (std::size_t i = 0; i < omc.size(); ++i) {
      so += omc[i];
      sr += rad[i];
    }
    res_.one_minus_mean_cosine[at] = so / count;
    res_.mean_radius[at] = sr / count;
    std::sort(omc.begin(), omc.end());
    std::sort(rad.begin(), rad.end());
    for (std::size_t q = 0; q < nq_; ++q) {
      res_.one_minus_mean_cosine_quantiles[(g * nq_ + q) * frames_ + f] = quantile(omc, res_.quantiles[q]);
      res_.mean_radius_quantiles[(g * nq_ + q) * frames_ + f] = quantile(rad, res_.quantiles[q]);
    }
  }
  // A point listed twice among the trajectories: its recorder wrote the first place.
  for (std::size_t k : trajectories_of_[g]) {
    const std::size_t first = trajectory_slot_.at(options_.trajectories[k]);
    if (first == k) continue;
    const std::size_t D = frames_ * per_frame_, R = frames_ * static_cast<std::size_t>(res_.n);
    std::copy_n(res_.trajectory_direction.begin() + static_cast<std::ptrdiff_t>(first * D), D,
                res_.trajectory_direction.begin() + static_cast<std::ptrdiff_t>(k * D));
    std::copy_n(res_.trajectory_radius.begin() + static_cast<std::ptrdiff_t>(first * R), R,
                res_.trajectory_radius.begin() + static_cast<std::ptrdiff_t>(k * R));
  }
  std::lock_guard lock(mutex_);
  // The record is written from the result's arrays by the journal's writer (flush_journal): the
  // group's slices do not change any more.
  if (journal_ && std::any_of(remaining_.begin(), remaining_.end(), [](std::size_t r) { return r > 0; }))
    pending_groups_.push_back(g);
  group_done_[g] = 1;
  ++groups_done_since_rewrite_;
}

void EnsembleRun::conclude() {
  if (finished_ < points_.size() || stop_) {
    outcome_.status = RunStatus::interrupted;
    outcome_.message =
        "interrupted after " + std::to_string(finished_) + " of " + std::to_string(points_.size()) + " members";
    outcome_.message +=
        journal_ ? "; those done are kept in " + journal_->path().string() + ": run the same command again to continue"
                 : "; nothing was kept (no output file)";
    outcome_.message += damaged_journal_note();
    return;
  }
  for (std::int64_t s : res_.status)
    if (is_numerical_failure(static_cast<RunStatus>(s))) ++res_.failed;
  // An output that is this ensemble already is returned as it is, with its own provenance.
  outcome_.unchanged = prior_ && prior_->identity == res_.identity && outcome_.read_back == points_.size();
  if (outcome_.unchanged) {
    journal_->remove();
    outcome_.message = options_.output.string() + " already holds this ensemble: its " +
                       std::to_string(points_.size()) +
                       " members were read back, none integrated, the file left as it was";
  } else {
    if (!options_.output.empty()) {
      write_grid_file(options_.output, ensemble_grid(res_));
      journal_->remove();
    }
    outcome_.message = std::to_string(points_.size()) + " members (" + std::to_string(outcome_.resumed) +
                       " kept from an earlier session";
    if (outcome_.read_back > 0)
      outcome_.message += ", " + std::to_string(outcome_.read_back) + " read back from the existing output";
    outcome_.message += ')';
  }
  outcome_.message += damaged_journal_note();
  if (team_) {
    outcome_.per_process[0] = outcome_.integrated;
    for (std::size_t r = 1; r < outcome_.per_process.size(); ++r) outcome_.per_process[0] -= outcome_.per_process[r];
    outcome_.message += " on " + std::to_string(team_->size()) + " processes (integrated per process:";
    for (std::size_t k : outcome_.per_process) outcome_.message += ' ' + std::to_string(k);
    outcome_.message += ')';
  }
  if (res_.failed > 0) {
    for (std::int64_t s : res_.status)
      if (is_numerical_failure(static_cast<RunStatus>(s))) {
        outcome_.status = static_cast<RunStatus>(s);
        break;
      }
    outcome_.message += "; " + std::to_string(res_.failed) + " ended with a numerical failure (see status)";
  }
}

EnsembleOutcome EnsembleRun::run() {
  open_output();
  restore();
  remote_active_ = team_ && root_ ? team_->size() - 1 : 0;
  if (team_) outcome_.per_process.assign(static_cast<std::size_t>(team_->size()), 0);
  const std::size_t available =
      team_ ? static_cast<std::size_t>(team_->cores()) : std::max(1u, std::thread::hardware_concurrency());
  threads_ = options_.threads > 0 ? static_cast<std::size_t>(options_.threads) : available;
  threads_ = std::max<std::size_t>(1, std::min(threads_, root_ ? todo_.size() : points_.size()));
  std::vector<std::thread> pool;
  const bool any_work = root_ ? !todo_.empty() : true;
  running_workers_ = any_work ? threads_ : 0;
  if (any_work)
    for (std::size_t t = 0; t < threads_; ++t) pool.emplace_back([this] { work(); });
  watch();
  for (auto& t : pool) t.join();
  if (journal_) journal_->sync();
  if (failure_) std::rethrow_exception(failure_);
  outcome_.integrated = finished_ - outcome_.resumed - outcome_.read_back;
  outcome_.seconds = seconds();
  if (team_ && !root_) {
    // Rank 0's outcome, once it wrote the file (or stopped); assignments still in flight are dropped.
    for (;;) {
      if (auto m = team_->try_receive()) {
        if (m->tag != kEndTag) continue;
        outcome_.status = static_cast<RunStatus>(std::stoi(m->text));
        outcome_.message = "rank " + std::to_string(team_->rank()) + ": " + std::to_string(outcome_.integrated) +
                           " members integrated";
        if (outcome_.status == RunStatus::interrupted) {
          outcome_.message += "; the ensemble was interrupted";
          outcome_.message += options_.output.empty()
                                  ? "; nothing was kept (no output file)"
                                  : "; those done are kept in " + journal_path_of(options_.output).string() +
                                        " (rank 0's): run the same command again to continue";
        }
        return std::move(outcome_);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (options_.progress)
    options_.progress(
        EnsembleProgress{finished_, outcome_.resumed + outcome_.read_back, points_.size(), outcome_.seconds, true});
  // A stop asked for at the very end (or by the last progress event) still publishes nothing: the
  // caller sees an interrupted ensemble, and the next run writes the file from the journal.
  if (!stop_ && options_.stop_requested && options_.stop_requested() != 0) stop_ = true;
  conclude();
  if (team_)
    for (int r = 1; r < team_->size(); ++r) team_->send(r, kEndTag, std::to_string(static_cast<int>(outcome_.status)));
  return std::move(outcome_);
}

}  // namespace normdyn::ensemble_internal

namespace normdyn {

EnsembleOutcome run_ensemble(const SweepSpec& spec, const EnsembleOptions& options) {
  return EnsembleRun(spec, options).run();
}

}  // namespace normdyn
