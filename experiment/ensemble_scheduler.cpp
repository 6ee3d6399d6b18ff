// The ensemble's scheduler: workers taking members in order, the journal written as they finish, the
// stops watched, and under MPI the exchange of points and records with the other processes.
#include "ensemble_internal.hpp"

namespace normdyn::ensemble_internal {

// Writes a member's figures per frame (and its trajectory when asked) and its summary straight into
// its place in the result's arrays ([group, member] index `at`, trajectory index `trajectory`): a
// record of its own was a second copy of the figures of every member of the groups in progress.
class FigureRecorder final : public Recorder {
 public:
  FigureRecorder(EnsembleResult& out, std::size_t at, std::optional<std::size_t> trajectory,
                 const analysis::FigureOptions& figures)
      : out_(out), at_(at), trajectory_(trajectory), figures_(figures) {}
  void begin(const RunLayout& layout) override {
    // Every member samples the ensemble's times (checked when the ensemble is set up).
    if (layout.sample_times.size() != out_.time.size())
      throw std::logic_error("an ensemble member samples " + std::to_string(layout.sample_times.size()) +
                             " times, the ensemble " + std::to_string(out_.time.size()));
  }
  void particle_frame(double, std::int64_t, const Tokens& tokens, std::span<const double>, const CheckpointView&,
                      double) override {
    const std::size_t T = out_.time.size();
    if (frames_ >= T) throw std::logic_error("an ensemble member recorded more frames than its sample times");
    const analysis::FrameFigures f = analysis::frame_figures(tokens.theta, figures_);
    const std::size_t at = at_ * T + frames_;
    out_.member_pair_fraction[at] = f.pair_fraction;
    out_.member_cluster_count[at] = static_cast<double>(f.cluster_count);
    out_.member_one_minus_mean_cosine[at] = f.one_minus_mean_cosine;
    out_.member_mean_radius[at] = tokens.r.mean();
    if (trajectory_) {
      const auto nd = static_cast<std::size_t>(tokens.theta.size()), n = static_cast<std::size_t>(tokens.r.size());
      std::copy_n(tokens.theta.data(), nd,
                  out_.trajectory_direction.begin() + static_cast<std::ptrdiff_t>((*trajectory_ * T + frames_) * nd));
      std::copy_n(tokens.r.data(), n,
                  out_.trajectory_radius.begin() + static_cast<std::ptrdiff_t>((*trajectory_ * T + frames_) * n));
    }
    ++frames_;
  }
  void field_frame(double, std::int64_t, const std::vector<std::span<const double>>&,
                   const std::vector<std::span<const double>>&, const CheckpointView&, double) override {}
  void end(const RunSummary& s) override {
    out_.member_frames[at_] = static_cast<std::int64_t>(frames_);
    out_.status[at_] = static_cast<std::int64_t>(s.status);
    out_.t_reached[at_] = s.t_reached;
    out_.accepted_steps[at_] = s.accepted_steps;
    out_.rhs_evaluations[at_] = s.rhs_evaluations;
    status_ = s.status;
  }
  RunStatus status() const { return status_; }

 private:
  EnsembleResult& out_;
  std::size_t at_;
  std::optional<std::size_t> trajectory_;
  analysis::FigureOptions figures_;
  std::size_t frames_ = 0;
  RunStatus status_ = RunStatus::interrupted;  // until the run ends
};

std::optional<std::size_t> EnsembleRun::take() {
  if (root_) {
    const std::size_t i = next_.fetch_add(1);
    if (i >= todo_.size()) return std::nullopt;
    return todo_[i];
  }
  std::unique_lock lock(mutex_);
  while (!stop_ && assigned_.empty() && !no_more_) wake_.wait_for(lock, std::chrono::milliseconds(20));
  if (stop_ || assigned_.empty()) return std::nullopt;
  const std::size_t p = assigned_.front();
  assigned_.pop_front();
  return p;
}

void EnsembleRun::work() {
  try {
    for (;;) {
      if (stop_.load(std::memory_order_relaxed)) break;
      const std::optional<std::size_t> taken = take();
      if (!taken) break;
      const std::size_t p = *taken;
      RunConfig config = points_[p].config;
      config.solver.threads = 1;          // parallel over members, not within one
      config.output.observables = false;  // not kept: the ensemble's figures replace them
      ExperimentOptions eo;
      eo.write_file = false;
      eo.size_check = false;  // checked once above
      eo.stop_requested = [this] { return stop_.load(std::memory_order_relaxed) ? SIGINT : 0; };
      const auto kept = trajectory_slot_.find(p);
      FigureRecorder recorder(res_, slot_of(p),
                              kept == trajectory_slot_.end() ? std::nullopt : std::optional<std::size_t>(kept->second),
                              figures_);
      run_experiment(config, eo, {&recorder});
      if (recorder.status() == RunStatus::interrupted && stop_.load()) {
        clear_member(p);  // integrated again next time
        break;
      }
      std::vector<char> bytes;
      if (journal_ || !root_) bytes = serialize(p, member_view(p));
      if (!root_) {
        {
          std::lock_guard lock(mutex_);
          pending_.push_back(std::move(bytes));
          ++finished_;
        }
        wake_.notify_all();
        continue;
      }
      const std::size_t g = group_of(points_[p]);
      bool complete = false;
      {
        std::lock_guard lock(mutex_);
        done_[p] = 1;
        if (journal_) pending_.push_back(std::move(bytes));
        complete = --remaining_[g] == 0;
        ++finished_;
      }
      wake_.notify_all();             // the calling thread journals it and sees stops at once
      if (complete) finish_group(g);  // only this thread touches the group now
    }
  } catch (...) {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = std::current_exception();
    stop_ = true;
  }
  std::lock_guard lock(mutex_);
  --running_workers_;
  wake_.notify_all();
}

void EnsembleRun::rewrite_journal(std::unique_lock<std::mutex>& lock) {
  if (groups_done_since_rewrite_ == 0 || (options_.journal_rewrite_bytes > 0 && journal_->size() < rewrite_at_)) return;
  for (std::size_t g = 0; g < G_; ++g)
    if (remaining_[g] == 0 && !group_done_[g]) return;
  // Every group complete: the file is written next and the journal removed, so a rewrite would only
  // hold every group's record in memory at once (as much again as the members' figures).
  if (std::find(group_done_.begin(), group_done_.end(), char{0}) == group_done_.end()) return;
  // What the new journal holds, chosen under the lock (every record pending is in it); the records
  // are then written one by one from the result's arrays, never held at once (their buffer was as
  // large as the journal). Their slices do not change any more: the members and groups are done.
  std::vector<std::pair<bool, std::size_t>> records;  // (a group, its index) or (a member, its point)
  for (std::size_t g = 0; g < G_; ++g) {
    if (group_done_[g]) {
      records.emplace_back(true, g);
      continue;
    }
    for (std::size_t p : members_of_[g])
      if (done_[p]) records.emplace_back(false, p);
  }
  pending_.clear();
  pending_groups_.clear();
  groups_done_since_rewrite_ = 0;
  lock.unlock();
  journal_->rewrite([&](Journal::Sink& sink) {
    for (const auto& [group, i] : records) {
      if (!group) {
        sink.record(serialize(i, member_view(i)));
        continue;
      }
      const std::uint64_t index = i;
      sink.framed(kGroupMark, group_record(res_, i, trajectories_of_[i], index));
    }
  });
  lock.lock();
  rewrite_at_ = std::max<std::size_t>(options_.journal_rewrite_bytes, 2 * journal_->size());
}

void EnsembleRun::flush_journal(std::unique_lock<std::mutex>& lock) {
  if (!journal_ || (pending_.empty() && pending_groups_.empty())) return;
  std::vector<std::vector<char>> batch;
  batch.swap(pending_);
  std::vector<std::size_t> groups;
  groups.swap(pending_groups_);
  lock.unlock();
  try {
    for (const auto& b : batch) journal_->write(b);
    for (std::size_t g : groups) {
      const std::uint64_t index = g;
      journal_->write_framed(kGroupMark, group_record(res_, g, trajectories_of_[g], index));
    }
    lock.lock();
    rewrite_journal(lock);
  } catch (...) {
    if (!lock.owns_lock()) lock.lock();
    if (!failure_) failure_ = std::current_exception();
    stop_ = true;
  }
}

void EnsembleRun::exchange(std::unique_lock<std::mutex>& lock) {
  if (!team_) return;
  if (!root_) {
    if (!pending_.empty()) {
      std::string bytes;
      for (const auto& b : pending_) bytes.append(b.data(), b.size());
      pending_.clear();
      lock.unlock();
      team_->send(0, kResultTag, bytes);
      lock.lock();
    }
    if (stop_) no_more_ = true;
    if (!requested_ && !no_more_ && assigned_.size() <= threads_) {
      lock.unlock();
      team_->send(0, kRequestTag, std::to_string(2 * threads_));
      lock.lock();
      requested_ = true;
    }
  }
  lock.unlock();
  std::vector<Team::Message> messages;
  while (auto m = team_->try_receive()) messages.push_back(std::move(*m));
  lock.lock();
  for (auto& m : messages) {
    if (m.tag == kAssignTag) {
      std::vector<std::uint64_t> ps(m.text.size() / sizeof(std::uint64_t));
      if (!ps.empty()) std::memcpy(ps.data(), m.text.data(), ps.size() * sizeof(std::uint64_t));
      for (auto p : ps) {
        if (p >= points_.size()) throw IoError("rank 0 assigned point " + std::to_string(p) + ", not in the ensemble");
        assigned_.push_back(static_cast<std::size_t>(p));
      }
      if (ps.empty()) no_more_ = true;
      requested_ = false;
    } else if (m.tag == kRequestTag) {
      std::string reply;
      if (!stop_) {
        // Guided self-scheduling: a share of what is left, at least what was asked for. A request
        // and its answer cost a few milliseconds of polling on each side, as much as a small member:
        // asking for a couple at a time left the other processes waiting most of the time (rank 0
        // integrated 84 % of the members of 2 processes). The shares shrink toward the end, so the
        // processes finish together.
        const std::size_t asked = std::clamp<std::size_t>(std::stoull(m.text), 1, 4096);
        const std::size_t left = todo_.size() - std::min(next_.load(), todo_.size());
        const std::size_t count = std::max(asked, left / (2 * static_cast<std::size_t>(team_->size())));
        const std::size_t from = next_.fetch_add(count);
        for (std::size_t i = from; i < std::min(from + count, todo_.size()); ++i) {
          const std::uint64_t p = todo_[i];
          reply.append(reinterpret_cast<const char*>(&p), sizeof p);
        }
      }
      lock.unlock();
      team_->send(m.source, kAssignTag, reply);  // empty: nothing more
      lock.lock();
    } else if (m.tag == kResultTag) {
      std::vector<std::pair<std::size_t, EnsembleRecord>> got;
      if (parse_records(m.text.data(), m.text.size(), res_.time.size(), got) != m.text.size())
        throw IoError("a damaged message of records from rank " + std::to_string(m.source));
      std::vector<std::size_t> complete;
      for (auto& [p, rec] : got) {
        if (p >= points_.size() || done_[p])
          throw IoError("rank " + std::to_string(m.source) + " sent point " + std::to_string(p) +
                        " twice or out of range");
        done_[p] = 1;
        store_member(p, rec);
        rec = EnsembleRecord{};
        const std::size_t g = group_of(points_[p]);
        if (--remaining_[g] == 0) complete.push_back(g);
        ++finished_;
        ++outcome_.per_process[static_cast<std::size_t>(m.source)];
      }
      if (journal_) pending_.emplace_back(m.text.begin(), m.text.end());
      lock.unlock();
      for (std::size_t g : complete) finish_group(g);
      lock.lock();
    } else if (m.tag == kDoneTag) {
      --remote_active_;
    }
  }
}

void EnsembleRun::watch() {
  auto last_progress = Clock::now();
  std::unique_lock lock(mutex_);
  while (running_workers_ > 0 || remote_active_ > 0) {
    wake_.wait_for(lock, std::chrono::milliseconds(team_ ? 5 : 20));
    flush_journal(lock);
    if (options_.stop_requested && !stop_) {
      lock.unlock();
      const int code = options_.stop_requested();
      lock.lock();
      if (code != 0) stop_ = true;
    }
    if (team_) {
      try {
        exchange(lock);
      } catch (...) {
        if (!failure_) failure_ = std::current_exception();
        stop_ = true;
        break;
      }
      wake_.notify_all();
    }
    if (options_.progress &&
        Clock::now() - last_progress >= std::chrono::duration<double>(options_.progress_interval)) {
      last_progress = Clock::now();
      const EnsembleProgress e{finished_, outcome_.resumed + outcome_.read_back, points_.size(), seconds(), false};
      lock.unlock();
      options_.progress(e);
      lock.lock();
    }
  }
  flush_journal(lock);
  if (team_ && !root_ && !failure_) {
    exchange(lock);  // the last records
    lock.unlock();
    team_->send(0, kDoneTag, "");
  }
}

}  // namespace normdyn::ensemble_internal
