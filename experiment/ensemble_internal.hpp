// The ensemble's pieces shared by experiment/ensemble_*.cpp (not installed): the journal, the
// grid's helpers and the run of one ensemble (EnsembleRun), whose set-up and conclusion live in
// ensemble_run.cpp and whose workers, journal writes and MPI exchange live in ensemble_scheduler.cpp.
#pragma once

#include "normdyn/experiment/ensemble.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include <fcntl.h>
#include <unistd.h>

#include "normdyn/analysis/ensemble.hpp"
#include "normdyn/analysis/rates.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/experiment/experiment.hpp"
#include "normdyn/experiment/recorder.hpp"
#include "normdyn/experiment/team.hpp"
#include "normdyn/given.hpp"
#include "normdyn/io/atomic_file.hpp"
#include "normdyn/io/file_lock.hpp"
#include "normdyn/io/run_file.hpp"
#include "normdyn/io/text_file.hpp"
#include "normdyn/resources.hpp"
#include "normdyn/text_hash.hpp"
#include "normdyn/version.hpp"
#include "session.hpp"

namespace normdyn::ensemble_internal {

using Clock = std::chrono::steady_clock;

// ---- the journal: an append-only file of finished members, each record framed by a marker and
// its length, so that a record torn by a crash is recognized and dropped, and closed by the digest
// of its payload (FNV-1a), so that a record damaged on disk is dropped too (its members are
// integrated again) instead of returning wrong figures. A group's statistics,
// once complete, are journaled as one record too (but the last group's, whose members' records
// stay: the file is written next); the journal is then rewritten from time to time
// without its members' records, so that it stays near the size of the statistics and of the
// members still being integrated rather than growing with the whole ensemble.
// Message tags between the processes of an MPI launch.
constexpr int kRequestTag = 41, kAssignTag = 42, kResultTag = 43, kDoneTag = 44, kEndTag = 45;

constexpr char kJournalFormat[] = "normdyn.ensemble.journal/";
constexpr char kJournalMagic[] = "normdyn.ensemble.journal/4\n";
constexpr std::uint64_t kRecordMark = 0x4e44454e53524543ULL;
constexpr std::uint64_t kGroupMark = 0x4e4447524f555053ULL;

// One member's record as the journal stores it, borrowed from where it is kept (the result's
// arrays, where a member's figures are written as it runs).
struct MemberView {
  RunStatus status = RunStatus::ok;
  double t_reached = 0.0;
  std::int64_t accepted_steps = 0, rhs_evaluations = 0;
  // Per recorded frame; the trajectory only for a member whose trajectory is kept.
  std::span<const double> pair_fraction, cluster_count, one_minus_mean_cosine, mean_radius, direction, radius;
};

// The journal's records (ensemble_journal.cpp).
std::filesystem::path journal_path_of(const std::filesystem::path& output);
std::vector<char> serialize(std::size_t point, const MemberView& r);
// The payload of group g's record as pieces of the result (`index`, the group's index, first), for
// the journal to frame as it writes them (Journal::write_framed): never a copy of the group's figures.
using RecordPieces = std::vector<std::span<const char>>;
RecordPieces group_record(const EnsembleResult& r, std::size_t g, const std::vector<std::size_t>& kept,
                          const std::uint64_t& index);
// Copies a group record's payload (after its group index) into the result; false, and nothing
// copied, when it does not have this ensemble's layout.
bool restore_group(EnsembleResult& r, std::size_t g, const std::vector<std::size_t>& kept,
                   const std::vector<char>& bytes);

using GroupRecords = std::vector<std::pair<std::size_t, std::vector<char>>>;  // group, payload after its index

// The complete records at the start of `bytes` (members appended to `out`, groups to `groups`;
// without `groups` a group record is damaged); returns the bytes they take. A torn record, or one
// whose frame is damaged, ends the reading. A record framed whole whose payload does not match its
// digest is skipped and counted in `damaged`; without `damaged` it ends the reading too. Records of
// more than `max_frames` frames are damaged.
std::size_t parse_records(const char* bytes, std::size_t size, std::size_t max_frames,
                          std::vector<std::pair<std::size_t, EnsembleRecord>>& out, GroupRecords* groups = nullptr,
                          std::size_t* damaged = nullptr);

// The most the records of a journal of this ensemble can take: every member's record (a series
// stored as runs takes at most 18 bytes a value) and every group's, twice over (a member may be
// appended again by a session that was stopped before its append was synced), and a mebibyte.
std::uint64_t journal_bound(const EnsembleResult& r, std::size_t points, std::size_t kept);

class Journal {
 public:
  Journal(std::filesystem::path path, const std::string& identity) : path_(std::move(path)), identity_(identity) {}
  ~Journal() {
    if (fd_ >= 0) ::close(fd_);
  }
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  const std::filesystem::path& path() const { return path_; }

  struct Contents {
    std::vector<std::pair<std::size_t, EnsembleRecord>> members;
    GroupRecords groups;
    std::size_t damaged = 0;  // records dropped because their payload did not match its digest
  };

  // Reads the records of an existing journal of the same ensemble (drops a torn last record), then
  // opens it for appending; creates it if there is none.
  // `max_bytes`: the most its records can take (journal_bound); a larger file is not read.
  Contents open(const std::string& output_name, const std::string& force_name, std::size_t max_frames,
                std::uint64_t max_bytes) {
    Contents out;
    std::error_code ec;
    std::filesystem::remove(rewritten_path(), ec);  // a rewrite cut short
    const std::string header = header_text();
    // Never read or write through a FIFO, a device or a link left where the journal goes.
    if (is_special_entry(path_))
      throw InputError(output_name, path_.string() + " exists and is not a regular file; remove it (or use " +
                                        force_name + " to start over)");
    if (std::filesystem::exists(path_, ec)) {
      const std::string bytes =
          InputFile(path_, output_name, "journal of this ensemble (" + force_name + " starts over)",
                    header.size() + max_bytes)
              .read_all();
      // The first line names the format: another one is another normdyn's, not another ensemble's.
      const std::string_view text(bytes.data(), bytes.size()), magic(kJournalMagic);
      const std::string_view line = text.substr(0, text.find('\n'));
      if (line.starts_with(kJournalFormat) && line != magic.substr(0, magic.size() - 1))
        throw InputError(output_name, path_.string() + " is a journal of another version of normdyn (" +
                                          std::string(line) + ", this one writes " +
                                          std::string(magic.substr(0, magic.size() - 1)) + "); use " + force_name +
                                          " to start over");
      if (bytes.size() < header.size() || std::memcmp(bytes.data(), header.data(), header.size()) != 0)
        throw InputError(output_name, path_.string() + " is the journal of another ensemble (or not a journal); use " +
                                          force_name + " to start over");
      const std::size_t good = header.size() + parse_records(bytes.data() + header.size(), bytes.size() - header.size(),
                                                             max_frames, out.members, &out.groups, &out.damaged);
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
      if (fd_ < 0 || ::ftruncate(fd_, static_cast<off_t>(good)) != 0 || ::lseek(fd_, 0, SEEK_END) < 0)
        throw IoError(path_.string() + ": cannot reopen the journal: " + std::strerror(errno));
      size_ = good;
      return out;
    }
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd_ < 0) throw IoError(path_.string() + ": cannot create the journal: " + std::strerror(errno));
    created_ = true;
    write(std::vector<char>(header.begin(), header.end()));
    return out;
  }

  void write(const std::vector<char>& bytes) {
    write_all(fd_, bytes.data(), bytes.size());
    size_ += bytes.size();
  }
  // A record whose payload is given in pieces, framed as it is written (the frame of a record built
  // whole: mark, length, payload, digest, mark).
  void write_framed(std::uint64_t mark, const RecordPieces& payload) { size_ += write_framed(fd_, mark, payload); }

  // Where a rewrite writes its records, one at a time.
  class Sink {
   public:
    void record(const std::vector<char>& bytes) {
      journal_.write_all(fd_, bytes.data(), bytes.size());
      bytes_ += bytes.size();
    }
    void framed(std::uint64_t mark, const RecordPieces& payload) {
      bytes_ += journal_.write_framed(fd_, mark, payload);
    }

   private:
    friend class Journal;
    Sink(const Journal& journal, int fd) : journal_(journal), fd_(fd) {}
    const Journal& journal_;
    int fd_;
    std::size_t bytes_ = 0;
  };
  // Replaces the journal by the records `fill` writes (after the header) at once: a crash leaves
  // the old journal or the new one, whole.
  template <class Fill>
  void rewrite(Fill&& fill) {
    const std::filesystem::path tmp = rewritten_path();
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw IoError(tmp.string() + ": cannot create the journal: " + std::strerror(errno));
    const std::string header = header_text();
    Sink sink(*this, fd);
    try {
      write_all(fd, header.data(), header.size());
      fill(sink);
      if (::fsync(fd) != 0 || ::rename(tmp.c_str(), path_.c_str()) != 0)
        throw IoError(path_.string() + ": cannot rewrite the journal: " + std::strerror(errno));
    } catch (...) {
      ::close(fd);
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw;
    }
    ::close(fd_);
    fd_ = fd;  // the new journal, at its end
    size_ = header.size() + sink.bytes_;
  }
  std::size_t size() const { return size_; }
  void sync() {
    if (fd_ >= 0) ::fsync(fd_);
  }
  bool created() const { return created_; }  // by this session
  void remove() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    std::error_code ec;
    std::filesystem::remove(path_, ec);
    std::filesystem::remove(rewritten_path(), ec);
  }

 private:
  std::filesystem::path rewritten_path() const {
    std::filesystem::path p = path_;
    p += ".tmp";
    return p;
  }
  void write_all(int fd, const void* data, std::size_t size) const {
    const char* bytes = static_cast<const char*>(data);
    std::size_t done = 0;
    while (done < size) {
      const ssize_t w = ::write(fd, bytes + done, size - done);
      if (w < 0) {
        if (errno == EINTR) continue;
        throw IoError(path_.string() + ": cannot write the journal: " + std::strerror(errno));
      }
      done += static_cast<std::size_t>(w);
    }
  }
  std::size_t write_framed(int fd, std::uint64_t mark, const RecordPieces& payload) const {
    std::uint64_t length = 0, digest = kFnvOffset;
    for (const auto piece : payload) {
      length += piece.size();
      digest = fnv1a(piece.data(), piece.size(), digest);
    }
    const std::uint64_t head[2] = {mark, length}, tail[2] = {digest, mark};
    write_all(fd, head, sizeof head);
    for (const auto piece : payload) write_all(fd, piece.data(), piece.size());
    write_all(fd, tail, sizeof tail);
    return sizeof head + length + sizeof tail;
  }
  std::string header_text() const {
    std::string h = kJournalMagic;
    const std::uint64_t n = identity_.size();
    h.append(reinterpret_cast<const char*>(&n), sizeof n);
    h += identity_;
    return h;
  }
  std::filesystem::path path_;
  std::string identity_;
  int fd_ = -1;
  std::size_t size_ = 0;
  bool created_ = false;
};

// The grid's layout, the members of an existing output (ensemble_grid.cpp).
std::vector<std::string> dimension_names(const std::vector<SweepAxis>& axes);
GridValues coordinate_values(const std::vector<ConfigScalar>& values);
// Linear interpolation between order statistics (numpy's default), of values sorted in place.
double quantile(std::vector<double>& sorted, double q);
// 0 for a citable fit, else 1 + the index of its problem token.
std::int64_t problem_flag(const std::string& problem);
std::string number_text(double x);
// The output may be created, or replaced: never an entry that is not a regular file (a FIFO, a
// device, a directory or a symbolic link, which the rename would replace or the checks follow), and
// never a run file, which is not an ensemble's to replace. Returns whether there is an output whose
// members may be reused (it exists, and force does not start over).
bool require_replaceable_output(const EnsembleOptions& options);
// The digest by which an ensemble recognizes a member of another: its resolved configuration as
// the member runs it (single-threaded, no file), with the figure options. Distinct configurations
// share a digest with probability about 2^-64 per pair.
std::uint64_t member_digest(RunConfig config, const EnsembleSpec& e);

// The members an existing output holds, by digest, with the kept trajectories.
struct PriorMembers {
  std::unordered_map<std::uint64_t, EnsembleRecord> members;  // without trajectories
  std::unordered_map<std::uint64_t, std::pair<std::vector<double>, std::vector<double>>> trajectories;
  std::string identity;
};

// Reads the members of the existing output, refusing it (InputError naming the output) unless
// every one of them is a member of this ensemble (`digests`), with its trajectory kept here if the
// file keeps it (`kept`): what it holds is then all in the file that replaces it.
PriorMembers read_prior(const EnsembleOptions& options, const std::vector<std::uint64_t>& digests,
                        const std::vector<std::uint64_t>& kept);
// Everything the journal's records depend on: a journal is reused only by the same ensemble.
std::string identity_of(const SweepSpec& spec, const std::vector<SweepPoint>& points, const EnsembleOptions& options);

// One ensemble from its set-up to its file: the members' records, the groups' statistics, the
// journal, the worker threads and, under MPI, the exchange with the other processes. Built once per
// call of run_ensemble; run() is called once.
class EnsembleRun {
 public:
  EnsembleRun(const SweepSpec& spec, const EnsembleOptions& options);
  EnsembleRun(const EnsembleRun&) = delete;
  EnsembleRun& operator=(const EnsembleRun&) = delete;
  EnsembleOutcome run();

 private:
  std::size_t group_of(const SweepPoint& p) const {
    std::size_t g = 0;
    for (std::size_t a : group_axes_) g = g * spec_.axes[a].values.size() + p.coordinates[a];
    return g;
  }
  std::size_t member_of(const SweepPoint& p) const { return over_axis_ ? p.coordinates[*over_axis_] : std::size_t{0}; }
  // The point's place in the result's [group, member] arrays.
  std::size_t slot_of(std::size_t p) const { return group_of(points_[p]) * M_ + member_of(points_[p]); }
  // A member's figures, summary and trajectory live in the result's arrays from its first frame on
  // (no record of its own): store_member puts a record read back there, member_view borrows them.
  void store_member(std::size_t p, const EnsembleRecord& r);
  MemberView member_view(std::size_t p) const;
  // Empties the member's place again (a member interrupted: integrated again later).
  void clear_member(std::size_t p);
  double seconds() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }
  // Output and journal (rank 0's), and the agreement of the processes, before anything runs.
  void open_output();
  void require_output_not_an_input() const;
  // The result's arrays, then what an earlier session kept and what the existing output holds.
  void restore();
  // The statistics of a complete group; the group's record replaces its members' in the journal at
  // its next rewrite. The group whose completion completes the ensemble journals no record: the
  // journal is not rewritten any more (the file is written next), so its members' records stay.
  void finish_group(std::size_t g);
  // Workers take members in order (on rank 0 from `todo`, on the other processes from what rank 0
  // assigned them); the calling thread watches for stops, writes the journal (rank 0), exchanges
  // the messages of the other processes and reports progress.
  std::optional<std::size_t> take();
  void work();
  void watch();
  // Rewrites the journal from what is in memory (under the lock, so that every record pending is
  // in it): the records of the complete groups, then the members of the others. Not while a group
  // is being completed (its members' records are being released).
  void rewrite_journal(std::unique_lock<std::mutex>& lock);
  void flush_journal(std::unique_lock<std::mutex>& lock);
  // ---- Over MPI (Team's point-to-point messages, polled: nobody spins in a blocking receive).
  // The other processes ask rank 0 for points a few at a time and send each finished member's
  // record (the journal's format) back; rank 0 journals them as its own and computes every
  // statistic, so the file is the one a single process writes.
  void exchange(std::unique_lock<std::mutex>& lock);
  // The status, the message and the file, once every process is done.
  void conclude();
  std::string damaged_journal_note() const {
    if (outcome_.journal_damaged == 0) return {};
    return "; " + std::to_string(outcome_.journal_damaged) +
           " damaged record(s) of the journal (payload not matching its digest) were dropped and their members "
           "integrated again";
  }

  const SweepSpec& spec_;
  const EnsembleOptions& options_;
  const Clock::time_point started_ = Clock::now();
  std::vector<SweepPoint> points_;
  EnsembleOutcome outcome_;
  EnsembleResult& res_ = outcome_.result;
  std::optional<std::size_t> over_axis_;
  std::vector<std::size_t> group_axes_;
  std::vector<char> keep_;                             // per point: its trajectory is kept
  std::vector<std::uint64_t> digests_, kept_digests_;  // per point, per kept trajectory
  std::string journal_identity_;                       // what the journal's records depend on (identity_of)
  Team* team_ = nullptr;
  bool root_ = true;
  std::optional<Journal> journal_;
  Journal::Contents kept_;
  std::optional<WriterLock> output_lock_;
  std::optional<PriorMembers> prior_;

  std::size_t frames_ = 0, nq_ = 0, G_ = 0, M_ = 0, per_frame_ = 0;
  std::vector<char> done_;
  std::vector<std::size_t> remaining_;
  std::vector<char> group_done_;  // statistics computed (and journaled)
  std::vector<std::vector<std::size_t>> members_of_;
  std::vector<std::vector<std::size_t>> trajectories_of_;         // indices into options.trajectories
  std::unordered_map<std::size_t, std::size_t> trajectory_slot_;  // point -> its first index there
  std::vector<std::size_t> todo_;

  std::mutex mutex_;
  std::vector<std::vector<char>> pending_;   // rank 0: records to journal; others: records to send
  std::vector<std::size_t> pending_groups_;  // rank 0: complete groups whose record is to be journaled
  std::size_t groups_done_since_rewrite_ = 0;
  std::condition_variable wake_;
  std::deque<std::size_t> assigned_;  // the other processes: points rank 0 gave them
  bool no_more_ = true;               // the other processes: rank 0 has nothing more to give
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> stop_{false};
  std::exception_ptr failure_;
  std::size_t finished_ = 0, running_workers_ = 0, threads_ = 1;
  const analysis::FigureOptions figures_;
  std::size_t rewrite_at_;
  int remote_active_ = 0;
  bool requested_ = false;
};

}  // namespace normdyn::ensemble_internal

namespace normdyn {
using namespace ensemble_internal;
}  // namespace normdyn
