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

namespace normdyn {
namespace {

using Clock = std::chrono::steady_clock;

// Keeps a member's figures per frame (and its trajectory when asked), nothing else.
class FigureRecorder final : public Recorder {
 public:
  FigureRecorder(EnsembleRecord& out, const analysis::FigureOptions& figures, bool trajectory)
      : out_(out), figures_(figures), trajectory_(trajectory) {}
  void begin(const RunLayout& layout) override {
    const std::size_t frames = layout.sample_times.size();
    for (auto* v : {&out_.pair_fraction, &out_.cluster_count, &out_.one_minus_mean_cosine, &out_.mean_radius})
      v->reserve(frames);
  }
  void particle_frame(double, std::int64_t, const Tokens& tokens, std::span<const double>, const CheckpointView&,
                      double) override {
    const analysis::FrameFigures f = analysis::frame_figures(tokens.theta, figures_);
    out_.pair_fraction.push_back(f.pair_fraction);
    out_.cluster_count.push_back(static_cast<double>(f.cluster_count));
    out_.one_minus_mean_cosine.push_back(f.one_minus_mean_cosine);
    out_.mean_radius.push_back(tokens.r.mean());
    if (trajectory_) {
      out_.direction.insert(out_.direction.end(), tokens.theta.data(), tokens.theta.data() + tokens.theta.size());
      out_.radius.insert(out_.radius.end(), tokens.r.data(), tokens.r.data() + tokens.r.size());
    }
  }
  void field_frame(double, std::int64_t, const std::vector<std::span<const double>>&,
                   const std::vector<std::span<const double>>&, const CheckpointView&, double) override {}
  void end(const RunSummary& s) override {
    out_.status = s.status;
    out_.t_reached = s.t_reached;
    out_.accepted_steps = s.accepted_steps;
    out_.rhs_evaluations = s.rhs_evaluations;
  }

 private:
  EnsembleRecord& out_;
  analysis::FigureOptions figures_;
  bool trajectory_;
};

// ---- the journal: an append-only file of finished members, each record framed by a marker and
// its length, so that a record torn by a crash is recognized and dropped, and closed by the digest
// of its payload (FNV-1a), so that a record damaged on disk is dropped too (its members are
// integrated again) instead of returning wrong figures. A group's statistics,
// once complete, are journaled as one record too; the journal is then rewritten from time to time
// without its members' records, so that it stays near the size of the statistics and of the
// members still being integrated rather than growing with the whole ensemble.
// Message tags between the processes of an MPI launch.
constexpr int kRequestTag = 41, kAssignTag = 42, kResultTag = 43, kDoneTag = 44, kEndTag = 45;

constexpr char kJournalFormat[] = "normdyn.ensemble.journal/";
constexpr char kJournalMagic[] = "normdyn.ensemble.journal/4\n";
constexpr std::uint64_t kRecordMark = 0x4e44454e53524543ULL;
constexpr std::uint64_t kGroupMark = 0x4e4447524f555053ULL;

std::filesystem::path journal_path_of(const std::filesystem::path& output) {
  std::filesystem::path p = output;
  p += ".journal";
  return p;
}

void put(std::vector<char>& b, const void* p, std::size_t n) {
  const char* c = static_cast<const char*>(p);
  b.insert(b.end(), c, c + n);
}
template <class T>
void put(std::vector<char>& b, T v) { put(b, &v, sizeof v); }
void put(std::vector<char>& b, const std::vector<double>& v) {
  put(b, static_cast<std::uint64_t>(v.size()));
  put(b, v.data(), v.size() * sizeof(double));
}

// A series as runs of equal values (bit for bit): the count, then (value, run length as a LEB128
// varint) per run. The cluster count, the pair fraction and (for normalized schemes) the mean radius
// repeat for long stretches; 1 − mean cosine is stored as it is.
void put_varint(std::vector<char>& b, std::uint64_t v) {
  do {
    const auto byte = static_cast<unsigned char>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    b.push_back(static_cast<char>(byte));
    v >>= 7;
  } while (v != 0);
}
void put_runs(std::vector<char>& b, const std::vector<double>& v) {
  put(b, static_cast<std::uint64_t>(v.size()));
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i + 1;
    while (j < v.size() && std::memcmp(&v[j], &v[i], sizeof(double)) == 0) ++j;
    put(b, v[i]);
    put_varint(b, j - i);
    i = j;
  }
}

std::vector<char> framed(std::uint64_t mark, const std::vector<char>& payload) {
  std::vector<char> out;
  out.reserve(payload.size() + 4 * sizeof mark);
  put(out, mark);
  put(out, static_cast<std::uint64_t>(payload.size()));
  out.insert(out.end(), payload.begin(), payload.end());
  put(out, fnv1a(payload.data(), payload.size()));
  put(out, mark);
  return out;
}

std::vector<char> serialize(std::size_t point, const EnsembleRecord& r) {
  std::vector<char> payload;
  put(payload, static_cast<std::uint64_t>(point));
  put(payload, static_cast<std::int64_t>(r.status));
  put(payload, r.t_reached);
  put(payload, r.accepted_steps);
  put(payload, r.rhs_evaluations);
  for (const auto* v : {&r.pair_fraction, &r.cluster_count, &r.mean_radius}) put_runs(payload, *v);
  for (const auto* v : {&r.one_minus_mean_cosine, &r.direction, &r.radius}) put(payload, *v);
  return framed(kRecordMark, payload);
}

// The slices of group g in the result, in the order its record stores them: the statistics
// ([group, time], [group, quantile, time]), the members ([group, member]) and the trajectories
// kept of its members (`kept`: their indices in EnsembleOptions::trajectories).
template <class F>
void for_each_group_slice(EnsembleResult& r, std::size_t g, const std::vector<std::size_t>& kept, F&& f) {
  const std::size_t T = r.time.size(), Q = r.quantiles.size(), M = r.members_per_group;
  const std::size_t D = T * static_cast<std::size_t>(r.n * r.d), R = T * static_cast<std::size_t>(r.n);
  auto slice = [&](auto& v, std::size_t start, std::size_t count) { f(std::span(v.data() + start, count)); };
  for (auto* v : {&r.pair_fraction, &r.sync_probability, &r.cluster_count, &r.one_minus_mean_cosine, &r.mean_radius})
    slice(*v, g * T, T);
  slice(r.members_at, g * T, T);
  for (auto* v : {&r.one_minus_mean_cosine_quantiles, &r.mean_radius_quantiles}) slice(*v, g * Q * T, Q * T);
  for (auto* v : {&r.status, &r.final_cluster_count, &r.accepted_steps, &r.rhs_evaluations, &r.rate_law, &r.rate_problem})
    slice(*v, g * M, M);
  for (auto* v : {&r.t_sync, &r.t_reached, &r.rate_parameter, &r.rate_stderr}) slice(*v, g * M, M);
  slice(r.member_frames, g * M, M);
  for (auto* v : {&r.member_pair_fraction, &r.member_cluster_count, &r.member_one_minus_mean_cosine, &r.member_mean_radius})
    slice(*v, g * M * T, M * T);
  for (std::size_t k : kept) {
    slice(r.trajectory_direction, k * D, D);
    slice(r.trajectory_radius, k * R, R);
  }
}

std::vector<char> serialize_group(EnsembleResult& r, std::size_t g, const std::vector<std::size_t>& kept) {
  std::vector<char> payload;
  put(payload, static_cast<std::uint64_t>(g));
  for_each_group_slice(r, g, kept, [&](auto s) { put(payload, s.data(), s.size_bytes()); });
  return framed(kGroupMark, payload);
}

// Copies a group record's payload (after its group index) into the result; false, and nothing
// copied, when it does not have this ensemble's layout.
bool restore_group(EnsembleResult& r, std::size_t g, const std::vector<std::size_t>& kept, const std::vector<char>& bytes) {
  std::size_t expected = 0;
  for_each_group_slice(r, g, kept, [&](auto s) { expected += s.size_bytes(); });
  if (bytes.size() != expected) return false;
  std::size_t at = 0;
  for_each_group_slice(r, g, kept, [&](auto s) {
    if (!s.empty()) std::memcpy(s.data(), bytes.data() + at, s.size_bytes());
    at += s.size_bytes();
  });
  return true;
}

class Reader {
 public:
  Reader(const char* p, std::size_t n) : p_(p), n_(n) {}
  template <class T>
  bool get(T& v) {
    if (n_ - at_ < sizeof v) return false;
    std::memcpy(&v, p_ + at_, sizeof v);
    at_ += sizeof v;
    return true;
  }
  bool get(std::vector<double>& v) {
    std::uint64_t size = 0;
    if (!get(size) || size > (n_ - at_) / sizeof(double)) return false;
    v.resize(size);
    if (size) std::memcpy(v.data(), p_ + at_, size * sizeof(double));
    at_ += size * sizeof(double);
    return true;
  }
  bool get_varint(std::uint64_t& v) {
    v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      unsigned char byte = 0;
      if (!get(byte)) return false;
      v |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return true;
    }
    return false;
  }
  // At most `max_size` values (a damaged count allocates nothing absurd).
  bool get_runs(std::vector<double>& v, std::size_t max_size) {
    std::uint64_t size = 0;
    if (!get(size) || size > max_size) return false;
    v.clear();
    v.reserve(size);
    while (v.size() < size) {
      double x = 0.0;
      std::uint64_t run = 0;
      if (!get(x) || !get_varint(run) || run == 0 || run > size - v.size()) return false;
      v.insert(v.end(), run, x);
    }
    return true;
  }
  std::size_t at() const { return at_; }
  bool done() const { return at_ == n_; }

 private:
  const char* p_;
  std::size_t n_, at_ = 0;
};

using GroupRecords = std::vector<std::pair<std::size_t, std::vector<char>>>;  // group, payload after its index

// The last status (RunStatus lists it last): a record's status ranges over 0 to it, as the status
// flags of the file do.
constexpr RunStatus kLastRunStatusOfRecords = RunStatus::user_term_failed;

// The complete records at the start of `bytes` (members appended to `out`, groups to `groups`;
// without `groups` a group record is damaged); returns the bytes they take. A torn record, or one
// whose frame is damaged, ends the reading. A record framed whole whose payload does not match its
// digest is skipped and counted in `damaged`; without `damaged` it ends the reading too. Records of
// more than `max_frames` frames are damaged.
std::size_t parse_records(const char* bytes, std::size_t size, std::size_t max_frames,
                          std::vector<std::pair<std::size_t, EnsembleRecord>>& out, GroupRecords* groups = nullptr,
                          std::size_t* damaged = nullptr) {
  std::size_t good = 0;
  while (good < size) {
    Reader r(bytes + good, size - good);
    std::uint64_t mark = 0, length = 0, point = 0, digest = 0, end_mark = 0;
    std::int64_t status = 0;
    EnsembleRecord rec;
    if (!r.get(mark) || (mark != kRecordMark && !(mark == kGroupMark && groups)) || !r.get(length) ||
        length > size - good - r.at())
      break;
    Reader tail(bytes + good + r.at() + length, size - good - r.at() - length);
    // The same mark closes the record.
    if (!tail.get(digest) || !tail.get(end_mark) || end_mark != mark) break;
    const char* payload = bytes + good + r.at();
    const std::size_t next = good + r.at() + length + sizeof digest + sizeof end_mark;
    if (digest != fnv1a(payload, length)) {
      if (!damaged) break;
      ++*damaged;
      good = next;
      continue;
    }
    if (mark == kGroupMark) {
      std::uint64_t g = 0;
      if (length < sizeof g) break;
      std::memcpy(&g, payload, sizeof g);
      groups->emplace_back(static_cast<std::size_t>(g), std::vector<char>(payload + sizeof g, payload + length));
    } else {
      Reader p(payload, length);
      bool ok = p.get(point) && p.get(status) && p.get(rec.t_reached) && p.get(rec.accepted_steps) &&
                p.get(rec.rhs_evaluations);
      for (auto* v : {&rec.pair_fraction, &rec.cluster_count, &rec.mean_radius}) ok = ok && p.get_runs(*v, max_frames);
      for (auto* v : {&rec.one_minus_mean_cosine, &rec.direction, &rec.radius}) ok = ok && p.get(*v);
      if (!ok || !p.done() || status < 0 || status > static_cast<std::int64_t>(kLastRunStatusOfRecords)) break;
      rec.status = static_cast<RunStatus>(status);
      out.emplace_back(static_cast<std::size_t>(point), std::move(rec));
    }
    good = next;
  }
  return good;
}

// The most the records of a journal of this ensemble can take: every member's record (a series
// stored as runs takes at most 18 bytes a value) and every group's, twice over (a member may be
// appended again by a session that was stopped before its append was synced), and a mebibyte.
std::uint64_t journal_bound(const EnsembleResult& r, std::size_t points, std::size_t kept) {
  const double T = static_cast<double>(r.time.size()), Q = static_cast<double>(r.quantiles.size());
  const double M = static_cast<double>(r.members_per_group), nd = static_cast<double>(r.n) * static_cast<double>(r.d + 1);
  const double member = 128.0 + 3.0 * (8.0 + 18.0 * T) + 8.0 * T;
  const double group = 128.0 + 8.0 * (6.0 * T + 2.0 * Q * T + 11.0 * M + 4.0 * M * T);
  const double trajectories = static_cast<double>(kept) * 8.0 * T * nd;
  const double bound = 2.0 * (static_cast<double>(points) * member + static_cast<double>(r.groups) * group +
                              2.0 * trajectories) + double(1 << 20);
  return bound >= 0x1p63 ? std::uint64_t{1} << 63 : static_cast<std::uint64_t>(bound);
}

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
      const std::string bytes = InputFile(path_, output_name, "journal of this ensemble (" + force_name + " starts over)",
                                          header.size() + max_bytes).read_all();
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
    write_all(fd_, bytes);
    size_ += bytes.size();
  }
  // Replaces the journal by `records` (after the header) at once: a crash leaves the old journal
  // or the new one, whole.
  void rewrite(const std::vector<char>& records) {
    const std::filesystem::path tmp = rewritten_path();
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw IoError(tmp.string() + ": cannot create the journal: " + std::strerror(errno));
    const std::string header = header_text();
    try {
      write_all(fd, std::vector<char>(header.begin(), header.end()));
      write_all(fd, records);
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
    size_ = header.size() + records.size();
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
  void write_all(int fd, const std::vector<char>& bytes) const {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (w < 0) {
        if (errno == EINTR) continue;
        throw IoError(path_.string() + ": cannot write the journal: " + std::strerror(errno));
      }
      done += static_cast<std::size_t>(w);
    }
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
  if (all([](const ConfigScalar& v) { return std::holds_alternative<std::int64_t>(v) || std::holds_alternative<bool>(v); })) {
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
    throw InputError(options.output_name, options.output.string() +
                                              " is a normdyn run file, which an ensemble never replaces: choose another output");
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
    if (t.kind != "library") terms += '\0' + t.name + ' ' + t.kind + ' ' + t.digest + ' ' + t.params + (t.rows ? " rows" : "");
  return text_hash(to_toml(config) + '\0' + number_text(e.pair_cosine) + ' ' + number_text(e.cluster_epsilon) + terms);
}

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
    throw InputError(options.output_name, refused + " and holds an ensemble written without its members' figures (by "
                                                    "an earlier normdyn or without member figures), which cannot be "
                                                    "reused" + replace);
  const std::size_t members = config->size(), T = time->size();
  if (frames->size() != members || status->size() != members || steps->size() != members || rhs->size() != members ||
      reached->size() != members || std::any_of(series.begin(), series.end(), [&](auto* v) { return v->size() != members * T; }))
    throw InputError(options.output_name, refused + " and is damaged (its members' arrays disagree)" + replace);

  const std::unordered_set<std::uint64_t> here(digests.begin(), digests.end());
  std::size_t missing = 0;
  for (const std::int64_t c : *config) missing += here.count(std::bit_cast<std::uint64_t>(c)) == 0;
  const auto* trajectory_config = variable("trajectory_config", i64);
  const std::unordered_set<std::uint64_t> kept_here(kept.begin(), kept.end());
  std::size_t missing_trajectories = 0;
  if (trajectory_config)
    for (const std::int64_t c : *trajectory_config) missing_trajectories += kept_here.count(std::bit_cast<std::uint64_t>(c)) == 0;
  if (missing > 0 || missing_trajectories > 0) {
    std::string what = std::to_string(missing) + " of its " + std::to_string(members) + " members are not members here";
    if (missing_trajectories > 0)
      what += (missing > 0 ? ", and " : "; ") + std::to_string(missing_trajectories) + " of its kept trajectories are not kept here";
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
      prior.trajectories.emplace(c, std::pair{std::vector<double>(direction->begin() + static_cast<std::ptrdiff_t>(k * D),
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
  id += to_toml(points.front().config) + '\0' + std::to_string(points.size()) + (options.member_figures ? " figures " : " ") +
        number_text(spec.ensemble.pair_cosine) + ' ' + number_text(spec.ensemble.cluster_epsilon) + " trajectories";
  for (auto p : options.trajectories) id += ' ' + std::to_string(p);
  return id;
}

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
  double seconds() const { return std::chrono::duration<double>(Clock::now() - started_).count(); }
  // Output and journal (rank 0's), and the agreement of the processes, before anything runs.
  void open_output();
  void require_output_not_an_input() const;
  // The result's arrays, then what an earlier session kept and what the existing output holds.
  void restore();
  // The statistics of a complete group; its members' series are released afterwards, and the
  // group's record replaces theirs in the journal at its next rewrite.
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
  std::vector<char> keep_;                                // per point: its trajectory is kept
  std::vector<std::uint64_t> digests_, kept_digests_;    // per point, per kept trajectory
  std::string journal_identity_;  // what the journal's records depend on (identity_of)
  Team* team_ = nullptr;
  bool root_ = true;
  std::optional<Journal> journal_;
  Journal::Contents kept_;
  std::optional<WriterLock> output_lock_;
  std::optional<PriorMembers> prior_;

  std::size_t frames_ = 0, nq_ = 0, G_ = 0, M_ = 0, per_frame_ = 0;
  std::vector<EnsembleRecord> records_;
  std::vector<char> done_;
  std::vector<std::size_t> remaining_;
  std::vector<char> group_done_;  // statistics computed (and journaled)
  std::vector<std::vector<std::size_t>> members_of_;
  std::vector<std::vector<std::size_t>> trajectories_of_;  // indices into options.trajectories
  std::vector<std::size_t> todo_;

  std::mutex mutex_;
  std::vector<std::vector<char>> pending_;  // rank 0: records to journal; others: records to send
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
      if (on_axis && values[a].size() == p.coordinates[a]) values[a].push_back(config_value(p.config, spec_.axes[a].key));
    }
  }
  for (std::size_t a = 0; a < spec_.axes.size(); ++a)
    if (a != over_axis_) {
      group_axes_.push_back(a);
      res_.axes.push_back(EnsembleAxis{spec_.axes[a].key, dims[a], coordinate_values(values[a])});
    }
  if (over_axis_) res_.over = EnsembleAxis{spec_.axes[*over_axis_].key, dims[*over_axis_], coordinate_values(values[*over_axis_])};
  else res_.over = EnsembleAxis{"", "member", std::vector<std::int64_t>{0}};
  res_.members_per_group = over_axis_ ? spec_.axes[*over_axis_].values.size() : 1;
  res_.groups = points_.size() / res_.members_per_group;

  keep_.assign(points_.size(), 0);
  for (std::size_t k = 0; k < options_.trajectories.size(); ++k) {
    const std::size_t p = options_.trajectories[k];
    if (p >= points_.size())
      throw InputError("trajectories", "point " + std::to_string(p) + " is not in the ensemble (points 0.." +
                                           std::to_string(points_.size() - 1) + ")");
    if (points_[p].config.model.n != res_.n || points_[p].config.model.d != res_.d)
      throw InputError("trajectories", "the kept trajectories must share model.n and model.d (point " + points_[p].name + ")");
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
  for (const auto& file : options_.inputs) inputs.push_back({file, "an input of this ensemble (its sweep or configuration file)"});
  if (!spec_.base.empty()) inputs.push_back({spec_.base, "this ensemble's base configuration (base)"});
  std::unordered_set<std::string> seen;
  for (const auto& p : points_)
    for (NamedInput& input : inputs_of(p.config, "a member's"))
      if (seen.insert(input.path.string()).second) inputs.push_back(std::move(input));
  require_not_an_input(options_.output, options_.output_name, inputs, "an ensemble", options_.force ? options_.force_name : "");
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
        throw InputError("mpirun", "the processes were given different ensembles: every process needs the same sweep "
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
  records_.resize(points_.size());
  done_.assign(points_.size(), 0);
  remaining_.assign(G_, M_);
  group_done_.assign(G_, 0);
  members_of_.assign(G_, std::vector<std::size_t>(M_));
  for (const auto& p : points_) members_of_[group_of(p)][member_of(p)] = p.index;
  trajectories_of_.assign(G_, {});
  for (std::size_t k = 0; k < options_.trajectories.size(); ++k)
    trajectories_of_[group_of(points_[options_.trajectories[k]])].push_back(k);

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
  for (const auto& p : points_) res_.member_config[group_of(p) * M_ + member_of(p)] = std::bit_cast<std::int64_t>(digests_[p.index]);
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
    records_[p] = std::move(rec);
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
      records_[p] = std::move(rec);
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

void EnsembleRun::finish_group(std::size_t g) {
  std::vector<analysis::RunSeries> series(M_);
  std::vector<analysis::EnsembleMember> members(M_);
  for (std::size_t m = 0; m < M_; ++m) {
    const EnsembleRecord& r = records_[members_of_[g][m]];
    analysis::RunSeries& s = series[m];
    s.t.assign(res_.time.begin(), res_.time.begin() + static_cast<std::ptrdiff_t>(r.frames()));
    s.variance.assign(r.frames(), kNaN);
    s.one_minus_mean_cosine = r.one_minus_mean_cosine;
    s.cluster_count = r.cluster_count;
    s.pair_fraction = r.pair_fraction;
    members[m] = analysis::EnsembleMember{&s, r.status == RunStatus::synchronized};
    const std::size_t at = g * M_ + m;
    res_.member_frames[at] = static_cast<std::int64_t>(r.frames());
    {
      const std::vector<double>* from[] = {&r.pair_fraction, &r.cluster_count, &r.one_minus_mean_cosine, &r.mean_radius};
      std::vector<double>* to[] = {&res_.member_pair_fraction, &res_.member_cluster_count,
                                   &res_.member_one_minus_mean_cosine, &res_.member_mean_radius};
      for (std::size_t k = 0; k < 4; ++k)
        std::copy(from[k]->begin(), from[k]->end(), to[k]->begin() + static_cast<std::ptrdiff_t>(at * frames_));
    }
    res_.status[at] = static_cast<std::int64_t>(r.status);
    res_.accepted_steps[at] = r.accepted_steps;
    res_.rhs_evaluations[at] = r.rhs_evaluations;
    res_.t_reached[at] = r.t_reached;
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
  const analysis::EnsembleSeries e = analysis::ensemble_series(members);
  std::vector<double> omc, rad;
  for (std::size_t f = 0; f < e.t.size(); ++f) {
    const std::size_t at = g * frames_ + f;
    res_.pair_fraction[at] = e.pair_fraction_mean[f];
    res_.sync_probability[at] = e.sync_probability[f];
    res_.cluster_count[at] = e.cluster_mean[f];
    res_.members_at[at] = e.runs[f];
    // The same members as ensemble_series at this time.
    omc.clear();
    rad.clear();
    for (std::size_t m = 0; m < M_; ++m) {
      const EnsembleRecord& r = records_[members_of_[g][m]];
      const std::optional<std::size_t> k = analysis::member_frame(r.frames(), f, members[m].hold_last);
      if (!k) continue;
      omc.push_back(r.one_minus_mean_cosine[*k]);
      rad.push_back(r.mean_radius[*k]);
    }
    if (omc.empty()) continue;
    double so = 0.0, sr = 0.0;
    for (std::size_t i = 0; i < omc.size(); ++i) {
      so += omc[i];
      sr += rad[i];
    }
    res_.one_minus_mean_cosine[at] = so / static_cast<double>(omc.size());
    res_.mean_radius[at] = sr / static_cast<double>(rad.size());
    std::sort(omc.begin(), omc.end());
    std::sort(rad.begin(), rad.end());
    for (std::size_t q = 0; q < nq_; ++q) {
      res_.one_minus_mean_cosine_quantiles[(g * nq_ + q) * frames_ + f] = quantile(omc, res_.quantiles[q]);
      res_.mean_radius_quantiles[(g * nq_ + q) * frames_ + f] = quantile(rad, res_.quantiles[q]);
    }
  }
  for (std::size_t m = 0; m < M_; ++m) {
    EnsembleRecord& r = records_[members_of_[g][m]];
    for (std::size_t k : trajectories_of_[g]) {
      if (options_.trajectories[k] != members_of_[g][m]) continue;
      std::copy(r.direction.begin(), r.direction.end(),
                res_.trajectory_direction.begin() + static_cast<std::ptrdiff_t>(k * frames_ * per_frame_));
      std::copy(r.radius.begin(), r.radius.end(),
                res_.trajectory_radius.begin() + static_cast<std::ptrdiff_t>(k * frames_ * static_cast<std::size_t>(res_.n)));
    }
    r = EnsembleRecord{};  // its figures are in the statistics now
  }
  std::vector<char> bytes;
  if (journal_) bytes = serialize_group(res_, g, trajectories_of_[g]);
  std::lock_guard lock(mutex_);
  if (journal_) pending_.push_back(std::move(bytes));
  group_done_[g] = 1;
  ++groups_done_since_rewrite_;
}

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
      config.solver.threads = 1;           // parallel over members, not within one
      config.output.observables = false;   // not kept: the ensemble's figures replace them
      ExperimentOptions eo;
      eo.write_file = false;
      eo.size_check = false;  // checked once above
      eo.stop_requested = [this] { return stop_.load(std::memory_order_relaxed) ? SIGINT : 0; };
      EnsembleRecord rec;
      FigureRecorder recorder(rec, figures_, keep_[p] != 0);
      run_experiment(config, eo, {&recorder});
      if (rec.status == RunStatus::interrupted && stop_.load()) break;  // integrated again next time
      std::vector<char> bytes;
      if (journal_ || !root_) bytes = serialize(p, rec);
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
        records_[p] = std::move(rec);
        done_[p] = 1;
        if (journal_) pending_.push_back(std::move(bytes));
        complete = --remaining_[g] == 0;
        ++finished_;
      }
      wake_.notify_all();  // the calling thread journals it and sees stops at once
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
  std::vector<char> bytes;
  for (std::size_t g = 0; g < G_; ++g) {
    if (group_done_[g]) {
      const std::vector<char> b = serialize_group(res_, g, trajectories_of_[g]);
      bytes.insert(bytes.end(), b.begin(), b.end());
      continue;
    }
    for (std::size_t p : members_of_[g])
      if (done_[p]) {
        const std::vector<char> b = serialize(p, records_[p]);
        bytes.insert(bytes.end(), b.begin(), b.end());
      }
  }
  pending_.clear();
  groups_done_since_rewrite_ = 0;
  lock.unlock();
  journal_->rewrite(bytes);
  lock.lock();
  rewrite_at_ = std::max<std::size_t>(options_.journal_rewrite_bytes, 2 * journal_->size());
}

void EnsembleRun::flush_journal(std::unique_lock<std::mutex>& lock) {
  if (!journal_ || pending_.empty()) return;
  std::vector<std::vector<char>> batch;
  batch.swap(pending_);
  lock.unlock();
  try {
    for (const auto& b : batch) journal_->write(b);
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
          throw IoError("rank " + std::to_string(m.source) + " sent point " + std::to_string(p) + " twice or out of range");
        done_[p] = 1;
        records_[p] = std::move(rec);
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
    if (options_.progress && Clock::now() - last_progress >= std::chrono::duration<double>(options_.progress_interval)) {
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

void EnsembleRun::conclude() {
  if (finished_ < points_.size() || stop_) {
    outcome_.status = RunStatus::interrupted;
    outcome_.message = "interrupted after " + std::to_string(finished_) + " of " + std::to_string(points_.size()) +
                      " members";
    outcome_.message += journal_ ? "; those done are kept in " + journal_->path().string() +
                                     ": run the same command again to continue"
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
    outcome_.message = options_.output.string() + " already holds this ensemble: its " + std::to_string(points_.size()) +
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
  const std::size_t available = team_ ? static_cast<std::size_t>(team_->cores()) : std::max(1u, std::thread::hardware_concurrency());
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
          outcome_.message += options_.output.empty() ? "; nothing was kept (no output file)"
                                                    : "; those done are kept in " + journal_path_of(options_.output).string() +
                                                          " (rank 0's): run the same command again to continue";
        }
        return std::move(outcome_);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (options_.progress)
    options_.progress(EnsembleProgress{finished_, outcome_.resumed + outcome_.read_back, points_.size(), outcome_.seconds, true});
  // A stop asked for at the very end (or by the last progress event) still publishes nothing: the
  // caller sees an interrupted ensemble, and the next run writes the file from the journal.
  if (!stop_ && options_.stop_requested && options_.stop_requested() != 0) stop_ = true;
  conclude();
  if (team_)
    for (int r = 1; r < team_->size(); ++r) team_->send(r, kEndTag, std::to_string(static_cast<int>(outcome_.status)));
  return std::move(outcome_);
}

}  // namespace

EnsembleOutcome run_ensemble(const SweepSpec& spec, const EnsembleOptions& options) {
  return EnsembleRun(spec, options).run();
}

GridFile ensemble_grid(const EnsembleResult& r) {
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
  f.dimensions.push_back(GridDimension{r.over.dimension, r.over.values,
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
  add("pair_fraction", with({"time"}), r.pair_fraction, "mean fraction of token pairs with cosine > pair_cosine");
  add("sync_probability", with({"time"}), r.sync_probability, "fraction of the members synchronized (every pair) by t");
  add("cluster_count", with({"time"}), r.cluster_count, "mean number of clusters (cosine > 1 - cluster_epsilon)");
  add("one_minus_mean_cosine", with({"time"}), r.one_minus_mean_cosine, "mean of 1 - mean pairwise cosine");
  add("mean_radius", with({"time"}), r.mean_radius, "mean of the mean token radius");
  add("members_at", with({"time"}), r.members_at, "members contributing at t");
  add("one_minus_mean_cosine_quantiles", with({"quantile", "time"}), r.one_minus_mean_cosine_quantiles,
      "quantiles of 1 - mean pairwise cosine over the members");
  add("mean_radius_quantiles", with({"quantile", "time"}), r.mean_radius_quantiles,
      "quantiles of the mean token radius over the members");
  add("status", with({r.over.dimension}), r.status, "how the member ended");
  std::string meanings;
  std::vector<std::int64_t> flags;
  for (int s = 0; s <= static_cast<int>(kLastRunStatusOfRecords); ++s) {
    flags.push_back(s);
    meanings += (s ? " " : "") + std::string(to_string(static_cast<RunStatus>(s)));
  }
  f.variables.back().attributes.emplace_back("flag_meanings", meanings);
  f.variables.back().attributes.emplace_back("flag_values", "0.." + std::to_string(flags.back()));
  add("t_sync", with({r.over.dimension}), r.t_sync, "first sample time with every pair synchronized (NaN: never)");
  add("final_cluster_count", with({r.over.dimension}), r.final_cluster_count, "clusters at the member's last frame");
  {
    std::string laws = "none";
    for (auto law : {analysis::DecayLaw::exponential, analysis::DecayLaw::power, analysis::DecayLaw::stretched_exponential})
      laws += " " + std::string(analysis::to_string(law));
    add("rate_law", with({r.over.dimension}), r.rate_law,
        "law of the late-time fit of 1 - mean cosine (as normdyn analyze)");
    f.variables.back().attributes.emplace_back("flag_meanings", laws);
    f.variables.back().attributes.emplace_back("flag_values", std::string("-1..2"));
    add("rate_parameter", with({r.over.dimension}), r.rate_parameter,
        "rate of the fitted law (lambda, p or kappa; NaN: no fit; cite only where rate_problem is citable)");
    add("rate_stderr", with({r.over.dimension}), r.rate_stderr, "standard error of rate_parameter");
    std::string problems = "citable";
    for (auto token : analysis::kProblemTokens) problems += " " + std::string(token);
    add("rate_problem", with({r.over.dimension}), r.rate_problem,
        "why the fit is not citable as it is (citable: nothing against it)");
    f.variables.back().attributes.emplace_back("flag_meanings", problems);
    f.variables.back().attributes.emplace_back("flag_values", "0.." + std::to_string(std::size(analysis::kProblemTokens)));
  }
  add("t_reached", with({r.over.dimension}), r.t_reached, "time reached");
  // What a later ensemble needs to reuse the members: their figures per frame, compressed (they
  // repeat for long stretches), and the digests of their configurations.
  add("member_frames", with({r.over.dimension}), r.member_frames, "frames the member recorded");
  add("member_config", with({r.over.dimension}), r.member_config,
      "digest (64-bit FNV-1a, as a signed integer) of the member's resolved configuration and the figure options");
  const std::pair<const std::vector<double>*, const char*> member_series[] = {
      {&r.member_pair_fraction, "pair_fraction"}, {&r.member_cluster_count, "cluster_count"},
      {&r.member_one_minus_mean_cosine, "one_minus_mean_cosine"}, {&r.member_mean_radius, "mean_radius"}};
  for (const auto& [values, figure] : member_series) {
    if (!r.member_figures) break;
    add(std::string("member_") + figure, with({r.over.dimension, "time"}), *values,
        std::string("the member's ") + figure + " per sample time (NaN after its last frame)");
    f.variables.back().deflate_level = 4;
  }
  // Arrays given with the ensemble, as the run file stores them (the configuration holds their digests).
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
  add("accepted_steps", with({r.over.dimension}), r.accepted_steps, "accepted steps");
  add("rhs_evaluations", with({r.over.dimension}), r.rhs_evaluations, "right-hand side evaluations");
  if (!r.trajectory_points.empty()) {
    std::vector<std::int64_t> pts(r.trajectory_points.begin(), r.trajectory_points.end());
    std::vector<std::int64_t> tokens(static_cast<std::size_t>(r.n)), components(static_cast<std::size_t>(r.d));
    for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<std::int64_t>(i);
    for (std::size_t i = 0; i < components.size(); ++i) components[i] = static_cast<std::int64_t>(i);
    f.dimensions.push_back(GridDimension{"trajectory", pts, A{{"long_name", std::string("point index (sweep order)")}}});
    f.dimensions.push_back(GridDimension{"token", tokens, A{}});
    f.dimensions.push_back(GridDimension{"component", components, A{}});
    add("direction", {"trajectory", "time", "token", "component"}, r.trajectory_direction,
        "token directions of the kept members (NaN after a member's end)");
    add("radius", {"trajectory", "time", "token"}, r.trajectory_radius, "token radii of the kept members");
    add("trajectory_config", {"trajectory"}, r.trajectory_config, "member_config of the kept member");
  }
  return f;
}

}  // namespace normdyn
