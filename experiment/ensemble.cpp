#include "normdyn/experiment/ensemble.hpp"

#include <algorithm>
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

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "normdyn/analysis/ensemble.hpp"
#include "normdyn/analysis/rates.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/experiment/experiment.hpp"
#include "normdyn/experiment/recorder.hpp"
#include "normdyn/experiment/team.hpp"
#include "normdyn/io/file_lock.hpp"
#include "normdyn/io/run_file.hpp"
#include "normdyn/resources.hpp"
#include "normdyn/version.hpp"

namespace normdyn {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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
// its length, so that a record torn by a crash is recognized and dropped. A group's statistics,
// once complete, are journaled as one record too; the journal is then rewritten from time to time
// without its members' records, so that it stays near the size of the statistics and of the
// members still being integrated rather than growing with the whole ensemble.
// Message tags between the processes of an MPI launch.
constexpr int kRequestTag = 41, kAssignTag = 42, kResultTag = 43, kDoneTag = 44, kEndTag = 45;

constexpr char kJournalMagic[] = "normdyn.ensemble.journal/3\n";
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
  out.reserve(payload.size() + 3 * sizeof mark);
  put(out, mark);
  put(out, static_cast<std::uint64_t>(payload.size()));
  out.insert(out.end(), payload.begin(), payload.end());
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

// The complete records at the start of `bytes` (members appended to `out`, groups to `groups`;
// without `groups` a group record is damaged); returns the bytes they take. A torn or damaged
// record ends the reading. Records of more than `max_frames` frames are damaged.
std::size_t parse_records(const char* bytes, std::size_t size, std::size_t max_frames,
                          std::vector<std::pair<std::size_t, EnsembleRecord>>& out, GroupRecords* groups = nullptr) {
  std::size_t good = 0;
  while (good < size) {
    Reader r(bytes + good, size - good);
    std::uint64_t mark = 0, length = 0, point = 0, end_mark = 0;
    std::int64_t status = 0;
    EnsembleRecord rec;
    if (!r.get(mark) || (mark != kRecordMark && !(mark == kGroupMark && groups)) || !r.get(length) ||
        length > size - good - r.at())
      break;
    Reader tail(bytes + good + r.at() + length, size - good - r.at() - length);
    if (!tail.get(end_mark) || end_mark != mark) break;  // the same mark closes the record
    const char* payload = bytes + good + r.at();
    const std::size_t next = good + r.at() + length + sizeof end_mark;
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
      if (!ok || !p.done() || status < 0 || status > static_cast<std::int64_t>(RunStatus::interrupted)) break;
      rec.status = static_cast<RunStatus>(status);
      out.emplace_back(static_cast<std::size_t>(point), std::move(rec));
    }
    good = next;
  }
  return good;
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
  };

  // Reads the records of an existing journal of the same ensemble (drops a torn last record), then
  // opens it for appending; creates it if there is none.
  Contents open(const std::string& output_name, const std::string& force_name, std::size_t max_frames) {
    Contents out;
    std::error_code ec;
    std::filesystem::remove(rewritten_path(), ec);  // a rewrite cut short
    const std::string header = header_text();
    // Never read or write through a FIFO, a device or a link left where the journal goes.
    if (struct stat st {}; ::lstat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      throw InputError(output_name, path_.string() + " exists and is not a regular file; remove it (or use " +
                                        force_name + " to start over)");
    if (std::filesystem::exists(path_, ec)) {
      std::vector<char> bytes = read_all();
      if (bytes.size() < header.size() || std::memcmp(bytes.data(), header.data(), header.size()) != 0)
        throw InputError(output_name, path_.string() + " is the journal of another ensemble (or not a journal); use " +
                                          force_name + " to start over");
      const std::size_t good = header.size() + parse_records(bytes.data() + header.size(), bytes.size() - header.size(),
                                                             max_frames, out.members, &out.groups);
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
  std::vector<char> read_all() const {
    std::FILE* f = std::fopen(path_.c_str(), "rb");
    if (!f) throw IoError(path_.string() + ": cannot read the journal: " + std::strerror(errno));
    std::vector<char> bytes;
    char buf[1 << 16];
    std::size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + got);
    const bool failed = std::ferror(f) != 0;
    std::fclose(f);
    if (failed) throw IoError(path_.string() + ": cannot read the journal");
    return bytes;
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

// The output may be created, or replaced with force: never an entry that is not a regular file (a
// FIFO, a device, a directory or a symbolic link, which the rename would replace or the checks
// follow), and never a run file, which is not an ensemble's to replace.
void require_replaceable_output(const EnsembleOptions& options) {
  struct stat st {};
  if (::lstat(options.output.c_str(), &st) != 0) return;  // nothing there
  if (!S_ISREG(st.st_mode))
    throw InputError(options.output_name, options.output.string() +
                                              " exists and is not a regular file (a FIFO, device, directory or "
                                              "symbolic link); an ensemble replaces only regular files");
  if (!options.force)
    throw InputError(options.output_name, options.output.string() + " exists (" + options.force_name + " replaces it)");
  if (is_run_file(options.output))
    throw InputError(options.output_name, options.output.string() + " is a normdyn run file; " + options.force_name +
                                              " replaces only an ensemble's file: choose another output");
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
  id += to_toml(points.front().config) + '\0' + std::to_string(points.size()) + ' ' +
        number_text(spec.ensemble.pair_cosine) + ' ' + number_text(spec.ensemble.cluster_epsilon) + " trajectories";
  for (auto p : options.trajectories) id += ' ' + std::to_string(p);
  return id;
}

}  // namespace

EnsembleOutcome run_ensemble(const SweepSpec& spec, const EnsembleOptions& options) {
  const auto started = Clock::now();
  for (double q : options.quantiles)
    if (!(q >= 0.0 && q <= 1.0)) throw InputError("quantiles", "must lie in [0, 1], got " + number_text(q));
  const std::vector<SweepPoint> points = expand_sweep(spec);
  if (points.empty()) throw InputError("axes", "the ensemble has no point");
  for (const auto& p : points)
    if (p.config.model.kind != ModelKind::particles)
      throw InputError("model.kind", "ensembles are of particle systems (point " + p.name + " is a mean-field run)");

  EnsembleOutcome outcome;
  EnsembleResult& res = outcome.result;
  res.pair_cosine = spec.ensemble.pair_cosine;
  res.cluster_epsilon = spec.ensemble.cluster_epsilon;
  res.quantiles = options.quantiles;
  res.sweep_text = spec.text;
  res.command_line = options.command_line;
  res.set = options.set;
  res.config_toml = to_toml(points.front().config);
  const RunConfig& first = points.front().config;
  res.time = first.output.sample_times(first.solver.t_end, first.solver.t_start);
  res.n = first.model.n;
  res.d = first.model.d;
  for (const auto& p : points)
    if (p.config.output.sample_times(p.config.solver.t_end, p.config.solver.t_start) != res.time)
      throw InputError("output.samples", "every member of an ensemble samples the same times (point " + p.name +
                                             " samples others; sweep the times with `normdyn sweep`)");

  // Axes: the group axes and the repetitions.
  const std::vector<std::string> dims = dimension_names(spec.axes);
  std::optional<std::size_t> over_axis;
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    if (!spec.ensemble.over.empty() && spec.axes[a].key == spec.ensemble.over) over_axis = a;
  std::vector<std::vector<ConfigScalar>> values(spec.axes.size());
  for (const auto& p : points) {
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      bool on_axis = true;  // every other coordinate 0: the point names this axis' value
      for (std::size_t b = 0; b < spec.axes.size(); ++b)
        if (b != a && p.coordinates[b] != 0) on_axis = false;
      if (on_axis && values[a].size() == p.coordinates[a]) values[a].push_back(config_value(p.config, spec.axes[a].key));
    }
  }
  std::vector<std::size_t> group_axes;
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    if (a != over_axis) {
      group_axes.push_back(a);
      res.axes.push_back(EnsembleAxis{spec.axes[a].key, dims[a], coordinate_values(values[a])});
    }
  if (over_axis) res.over = EnsembleAxis{spec.axes[*over_axis].key, dims[*over_axis], coordinate_values(values[*over_axis])};
  else res.over = EnsembleAxis{"", "member", std::vector<std::int64_t>{0}};
  res.members_per_group = over_axis ? spec.axes[*over_axis].values.size() : 1;
  res.groups = points.size() / res.members_per_group;
  auto group_of = [&](const SweepPoint& p) {
    std::size_t g = 0;
    for (std::size_t a : group_axes) g = g * spec.axes[a].values.size() + p.coordinates[a];
    return g;
  };
  auto member_of = [&](const SweepPoint& p) { return over_axis ? p.coordinates[*over_axis] : std::size_t{0}; };

  std::vector<char> keep(points.size(), 0);
  for (std::size_t k = 0; k < options.trajectories.size(); ++k) {
    const std::size_t p = options.trajectories[k];
    if (p >= points.size())
      throw InputError("trajectories", "point " + std::to_string(p) + " is not in the ensemble (points 0.." +
                                           std::to_string(points.size() - 1) + ")");
    if (points[p].config.model.n != res.n || points[p].config.model.d != res.d)
      throw InputError("trajectories", "the kept trajectories must share model.n and model.d (point " + points[p].name + ")");
    keep[p] = 1;
  }
  res.trajectory_points = options.trajectories;

  check_resources(first, options.output, false);
  Team* team = options.team && options.team->size() > 1 ? options.team : nullptr;
  const bool root = !team || team->is_root();
  // Output and journal (rank 0's), before anything runs.
  std::optional<Journal> journal;
  Journal::Contents kept;
  std::optional<WriterLock> output_lock;
  if (root && !options.output.empty()) {
    // The output's writer lock first, held until the file is published: another ensemble or a live
    // run on the same path is refused, and the checks below stay true until the rename.
    output_lock.emplace(WriterLock::acquire(options.output));
    require_replaceable_output(options);
    std::error_code ec;
    const std::filesystem::path journal_path = journal_path_of(options.output);
    if (options.force) std::filesystem::remove(journal_path, ec);
    journal.emplace(journal_path, identity_of(spec, points, options));
    kept = journal->open(options.output_name, options.force_name, res.time.size());
  }
  if (team) {
    // Every process runs the same ensemble into the same file (all read the sweep file; rank 0
    // alone writes). One collective agrees on that and on the set-up of every process.
    std::string id = identity_of(spec, points, options) + '\0';
    if (!options.output.empty()) id += std::filesystem::absolute(options.output).lexically_normal().string();
    for (double q : options.quantiles) id += ' ' + number_text(q);
    if (const int code = team->agree(0, std::hash<std::string>{}(id)); code != 0) {
      if (journal && journal->created()) journal->remove();
      if (team->mismatched() && root)
        throw InputError("mpirun", "the processes were given different ensembles: every process needs the same sweep "
                                   "file (and base), --set, -o, --quantiles and --trajectories");
      throw PeerFailure{code};
    }
  }

  // Members and groups.
  const std::size_t frames = res.time.size(), nq = res.quantiles.size(), G = res.groups, M = res.members_per_group;
  std::vector<EnsembleRecord> records(points.size());
  std::vector<char> done(points.size(), 0);
  std::vector<std::size_t> remaining(G, M);
  std::vector<char> group_done(G, 0);  // statistics computed (and journaled)
  std::vector<std::vector<std::size_t>> members_of(G, std::vector<std::size_t>(M));
  for (const auto& p : points) members_of[group_of(p)][member_of(p)] = p.index;
  std::vector<std::vector<std::size_t>> trajectories_of(G);  // indices into options.trajectories
  for (std::size_t k = 0; k < options.trajectories.size(); ++k)
    trajectories_of[group_of(points[options.trajectories[k]])].push_back(k);

  for (auto* v : {&res.pair_fraction, &res.sync_probability, &res.cluster_count, &res.one_minus_mean_cosine,
                  &res.mean_radius})
    v->assign(G * frames, kNaN);
  res.members_at.assign(G * frames, 0);
  res.one_minus_mean_cosine_quantiles.assign(G * nq * frames, kNaN);
  res.mean_radius_quantiles.assign(G * nq * frames, kNaN);
  res.status.assign(G * M, 0);
  res.final_cluster_count.assign(G * M, -1);
  res.accepted_steps.assign(G * M, 0);
  res.rhs_evaluations.assign(G * M, 0);
  res.t_sync.assign(G * M, kNaN);
  res.t_reached.assign(G * M, kNaN);
  res.rate_law.assign(G * M, -1);
  res.rate_problem.assign(G * M, 0);
  res.rate_parameter.assign(G * M, kNaN);
  res.rate_stderr.assign(G * M, kNaN);
  const std::size_t per_frame = static_cast<std::size_t>(res.n * res.d);
  res.trajectory_direction.assign(options.trajectories.size() * frames * per_frame, kNaN);
  res.trajectory_radius.assign(options.trajectories.size() * frames * static_cast<std::size_t>(res.n), kNaN);

  // What an earlier session kept: complete groups, then members of the others.
  for (auto& [g, bytes] : kept.groups) {
    if (g >= G || group_done[g] || !restore_group(res, g, trajectories_of[g], bytes)) continue;
    group_done[g] = 1;
    for (std::size_t p : members_of[g]) done[p] = 1;
    outcome.resumed += M;
    remaining[g] = 0;
  }
  for (auto& [p, rec] : kept.members) {
    // A record that does not fit this ensemble is integrated again (the identity makes it rare).
    const std::size_t f = rec.frames();
    const bool fits = p < points.size() && !done[p] && f <= res.time.size() && rec.cluster_count.size() == f &&
                      rec.one_minus_mean_cosine.size() == f && rec.mean_radius.size() == f &&
                      rec.status != RunStatus::interrupted &&
                      rec.direction.size() == (keep[p] ? f * static_cast<std::size_t>(res.n * res.d) : 0) &&
                      rec.radius.size() == (keep[p] ? f * static_cast<std::size_t>(res.n) : 0);
    if (!fits) continue;
    records[p] = std::move(rec);
    done[p] = 1;
    --remaining[group_of(points[p])];
    ++outcome.resumed;
  }
  kept = {};

  std::mutex mutex;
  std::vector<std::vector<char>> pending;  // rank 0: records to journal; others: records to send
  std::size_t groups_done_since_rewrite = 0;

  // The statistics of a complete group; its members' series are released afterwards, and the
  // group's record replaces theirs in the journal at its next rewrite.
  auto finish_group = [&](std::size_t g) {
    std::vector<analysis::RunSeries> series(M);
    std::vector<analysis::EnsembleMember> members(M);
    for (std::size_t m = 0; m < M; ++m) {
      const EnsembleRecord& r = records[members_of[g][m]];
      analysis::RunSeries& s = series[m];
      s.t.assign(res.time.begin(), res.time.begin() + static_cast<std::ptrdiff_t>(r.frames()));
      s.variance.assign(r.frames(), kNaN);
      s.one_minus_mean_cosine = r.one_minus_mean_cosine;
      s.cluster_count = r.cluster_count;
      s.pair_fraction = r.pair_fraction;
      members[m] = analysis::EnsembleMember{&s, r.status == RunStatus::synchronized};
      const std::size_t at = g * M + m;
      res.status[at] = static_cast<std::int64_t>(r.status);
      res.accepted_steps[at] = r.accepted_steps;
      res.rhs_evaluations[at] = r.rhs_evaluations;
      res.t_reached[at] = r.t_reached;
      const analysis::RunFigures fig = analysis::run_figures(s);
      res.t_sync[at] = fig.t_sync;
      res.final_cluster_count[at] = fig.final_cluster_count;
      res.rate_problem[at] = problem_flag(fig.rate.problem);
      if (fig.rate.ok) {
        res.rate_law[at] = static_cast<std::int64_t>(fig.rate.law);
        res.rate_parameter[at] = fig.rate.parameter;
        res.rate_stderr[at] = fig.rate.parameter_stderr;
      }
    }
    const analysis::EnsembleSeries e = analysis::ensemble_series(members);
    std::vector<double> omc, rad;
    for (std::size_t f = 0; f < e.t.size(); ++f) {
      const std::size_t at = g * frames + f;
      res.pair_fraction[at] = e.pair_fraction_mean[f];
      res.sync_probability[at] = e.sync_probability[f];
      res.cluster_count[at] = e.cluster_mean[f];
      res.members_at[at] = e.runs[f];
      // The same members as ensemble_series at this time.
      omc.clear();
      rad.clear();
      for (std::size_t m = 0; m < M; ++m) {
        const EnsembleRecord& r = records[members_of[g][m]];
        if (r.frames() == 0) continue;
        std::size_t k = f;
        if (f >= r.frames()) {
          if (!members[m].hold_last) continue;
          k = r.frames() - 1;
        }
        omc.push_back(r.one_minus_mean_cosine[k]);
        rad.push_back(r.mean_radius[k]);
      }
      if (omc.empty()) continue;
      double so = 0.0, sr = 0.0;
      for (std::size_t i = 0; i < omc.size(); ++i) {
        so += omc[i];
        sr += rad[i];
      }
      res.one_minus_mean_cosine[at] = so / static_cast<double>(omc.size());
      res.mean_radius[at] = sr / static_cast<double>(rad.size());
      std::sort(omc.begin(), omc.end());
      std::sort(rad.begin(), rad.end());
      for (std::size_t q = 0; q < nq; ++q) {
        res.one_minus_mean_cosine_quantiles[(g * nq + q) * frames + f] = quantile(omc, res.quantiles[q]);
        res.mean_radius_quantiles[(g * nq + q) * frames + f] = quantile(rad, res.quantiles[q]);
      }
    }
    for (std::size_t m = 0; m < M; ++m) {
      EnsembleRecord& r = records[members_of[g][m]];
      for (std::size_t k : trajectories_of[g]) {
        if (options.trajectories[k] != members_of[g][m]) continue;
        std::copy(r.direction.begin(), r.direction.end(),
                  res.trajectory_direction.begin() + static_cast<std::ptrdiff_t>(k * frames * per_frame));
        std::copy(r.radius.begin(), r.radius.end(),
                  res.trajectory_radius.begin() + static_cast<std::ptrdiff_t>(k * frames * static_cast<std::size_t>(res.n)));
      }
      r = EnsembleRecord{};  // its figures are in the statistics now
    }
    std::vector<char> bytes;
    if (journal) bytes = serialize_group(res, g, trajectories_of[g]);
    std::lock_guard lock(mutex);
    if (journal) pending.push_back(std::move(bytes));
    group_done[g] = 1;
    ++groups_done_since_rewrite;
  };
  for (std::size_t g = 0; g < G; ++g)
    if (remaining[g] == 0 && !group_done[g]) finish_group(g);

  std::vector<std::size_t> todo;
  for (std::size_t p = 0; p < points.size(); ++p)
    if (!done[p]) todo.push_back(p);

  // Workers take members in order (on rank 0 from `todo`, on the other processes from what rank 0
  // assigned them); the calling thread watches for stops, writes the journal (rank 0), exchanges
  // the messages of the other processes and reports progress.
  std::condition_variable wake;
  std::deque<std::size_t> assigned;        // the other processes: points rank 0 gave them
  bool no_more = root;                     // the other processes: rank 0 has nothing more to give
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr failure;
  std::size_t finished = outcome.resumed, running_workers = 0;
  const analysis::FigureOptions figures{spec.ensemble.cluster_epsilon, spec.ensemble.pair_cosine};

  auto take = [&]() -> std::optional<std::size_t> {
    if (root) {
      const std::size_t i = next.fetch_add(1);
      if (i >= todo.size()) return std::nullopt;
      return todo[i];
    }
    std::unique_lock lock(mutex);
    while (!stop && assigned.empty() && !no_more) wake.wait_for(lock, std::chrono::milliseconds(20));
    if (stop || assigned.empty()) return std::nullopt;
    const std::size_t p = assigned.front();
    assigned.pop_front();
    return p;
  };
  auto work = [&] {
    try {
      for (;;) {
        if (stop.load(std::memory_order_relaxed)) break;
        const std::optional<std::size_t> taken = take();
        if (!taken) break;
        const std::size_t p = *taken;
        RunConfig config = points[p].config;
        config.solver.threads = 1;           // parallel over members, not within one
        config.output.observables = false;   // not kept: the ensemble's figures replace them
        ExperimentOptions eo;
        eo.write_file = false;
        eo.size_check = false;  // checked once above
        eo.stop_requested = [&stop] { return stop.load(std::memory_order_relaxed) ? SIGINT : 0; };
        EnsembleRecord rec;
        FigureRecorder recorder(rec, figures, keep[p] != 0);
        run_experiment(config, eo, {&recorder});
        if (rec.status == RunStatus::interrupted && stop.load()) break;  // integrated again next time
        std::vector<char> bytes;
        if (journal || !root) bytes = serialize(p, rec);
        if (!root) {
          {
            std::lock_guard lock(mutex);
            pending.push_back(std::move(bytes));
            ++finished;
          }
          wake.notify_all();
          continue;
        }
        const std::size_t g = group_of(points[p]);
        bool complete = false;
        {
          std::lock_guard lock(mutex);
          records[p] = std::move(rec);
          done[p] = 1;
          if (journal) pending.push_back(std::move(bytes));
          complete = --remaining[g] == 0;
          ++finished;
        }
        wake.notify_all();  // the calling thread journals it and sees stops at once
        if (complete) finish_group(g);  // only this thread touches the group now
      }
    } catch (...) {
      std::lock_guard lock(mutex);
      if (!failure) failure = std::current_exception();
      stop = true;
    }
    std::lock_guard lock(mutex);
    --running_workers;
    wake.notify_all();
  };

  const std::size_t available = team ? static_cast<std::size_t>(team->cores()) : std::max(1u, std::thread::hardware_concurrency());
  std::size_t threads = options.threads > 0 ? static_cast<std::size_t>(options.threads) : available;
  threads = std::max<std::size_t>(1, std::min(threads, root ? todo.size() : points.size()));
  std::vector<std::thread> pool;
  const bool any_work = root ? !todo.empty() : true;
  running_workers = any_work ? threads : 0;
  if (any_work)
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);

  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - started).count(); };
  std::size_t rewrite_at = options.journal_rewrite_bytes;
  // Rewrites the journal from what is in memory (under the lock, so that every record pending is
  // in it): the records of the complete groups, then the members of the others. Not while a group
  // is being completed (its members' records are being released).
  auto rewrite_journal = [&](std::unique_lock<std::mutex>& lock) {
    if (groups_done_since_rewrite == 0 || (options.journal_rewrite_bytes > 0 && journal->size() < rewrite_at)) return;
    for (std::size_t g = 0; g < G; ++g)
      if (remaining[g] == 0 && !group_done[g]) return;
    std::vector<char> bytes;
    for (std::size_t g = 0; g < G; ++g) {
      if (group_done[g]) {
        const std::vector<char> b = serialize_group(res, g, trajectories_of[g]);
        bytes.insert(bytes.end(), b.begin(), b.end());
        continue;
      }
      for (std::size_t p : members_of[g])
        if (done[p]) {
          const std::vector<char> b = serialize(p, records[p]);
          bytes.insert(bytes.end(), b.begin(), b.end());
        }
    }
    pending.clear();
    groups_done_since_rewrite = 0;
    lock.unlock();
    journal->rewrite(bytes);
    lock.lock();
    rewrite_at = std::max<std::size_t>(options.journal_rewrite_bytes, 2 * journal->size());
  };
  auto flush_journal = [&](std::unique_lock<std::mutex>& lock) {
    if (!journal || pending.empty()) return;
    std::vector<std::vector<char>> batch;
    batch.swap(pending);
    lock.unlock();
    try {
      for (const auto& b : batch) journal->write(b);
      lock.lock();
      rewrite_journal(lock);
    } catch (...) {
      if (!lock.owns_lock()) lock.lock();
      if (!failure) failure = std::current_exception();
      stop = true;
    }
  };
  // ---- Over MPI (Team's point-to-point messages, polled: nobody spins in a blocking receive).
  // The other processes ask rank 0 for points a few at a time and send each finished member's
  // record (the journal's format) back; rank 0 journals them as its own and computes every
  // statistic, so the file is the one a single process writes.
  int remote_active = team && root ? team->size() - 1 : 0;
  if (team) outcome.per_process.assign(static_cast<std::size_t>(team->size()), 0);
  bool requested = false;
  auto exchange = [&](std::unique_lock<std::mutex>& lock) {
    if (!team) return;
    if (!root) {
      if (!pending.empty()) {
        std::string bytes;
        for (const auto& b : pending) bytes.append(b.data(), b.size());
        pending.clear();
        lock.unlock();
        team->send(0, kResultTag, bytes);
        lock.lock();
      }
      if (stop) no_more = true;
      if (!requested && !no_more && assigned.size() <= threads) {
        lock.unlock();
        team->send(0, kRequestTag, std::to_string(2 * threads));
        lock.lock();
        requested = true;
      }
    }
    lock.unlock();
    std::vector<Team::Message> messages;
    while (auto m = team->try_receive()) messages.push_back(std::move(*m));
    lock.lock();
    for (auto& m : messages) {
      if (m.tag == kAssignTag) {
        std::vector<std::uint64_t> ps(m.text.size() / sizeof(std::uint64_t));
        if (!ps.empty()) std::memcpy(ps.data(), m.text.data(), ps.size() * sizeof(std::uint64_t));
        for (auto p : ps) {
          if (p >= points.size()) throw IoError("rank 0 assigned point " + std::to_string(p) + ", not in the ensemble");
          assigned.push_back(static_cast<std::size_t>(p));
        }
        if (ps.empty()) no_more = true;
        requested = false;
      } else if (m.tag == kRequestTag) {
        std::string reply;
        if (!stop) {
          const std::size_t count = std::clamp<std::size_t>(std::stoull(m.text), 1, 4096);
          const std::size_t from = next.fetch_add(count);
          for (std::size_t i = from; i < std::min(from + count, todo.size()); ++i) {
            const std::uint64_t p = todo[i];
            reply.append(reinterpret_cast<const char*>(&p), sizeof p);
          }
        }
        lock.unlock();
        team->send(m.source, kAssignTag, reply);  // empty: nothing more
        lock.lock();
      } else if (m.tag == kResultTag) {
        std::vector<std::pair<std::size_t, EnsembleRecord>> got;
        if (parse_records(m.text.data(), m.text.size(), res.time.size(), got) != m.text.size())
          throw IoError("a damaged message of records from rank " + std::to_string(m.source));
        std::vector<std::size_t> complete;
        for (auto& [p, rec] : got) {
          if (p >= points.size() || done[p])
            throw IoError("rank " + std::to_string(m.source) + " sent point " + std::to_string(p) + " twice or out of range");
          done[p] = 1;
          records[p] = std::move(rec);
          const std::size_t g = group_of(points[p]);
          if (--remaining[g] == 0) complete.push_back(g);
          ++finished;
          ++outcome.per_process[static_cast<std::size_t>(m.source)];
        }
        if (journal) pending.emplace_back(m.text.begin(), m.text.end());
        lock.unlock();
        for (std::size_t g : complete) finish_group(g);
        lock.lock();
      } else if (m.tag == kDoneTag) {
        --remote_active;
      }
    }
  };
  {
    auto last_progress = Clock::now();
    std::unique_lock lock(mutex);
    while (running_workers > 0 || remote_active > 0) {
      wake.wait_for(lock, std::chrono::milliseconds(team ? 5 : 20));
      flush_journal(lock);
      if (options.stop_requested && !stop) {
        lock.unlock();
        const int code = options.stop_requested();
        lock.lock();
        if (code != 0) stop = true;
      }
      if (team) {
        try {
          exchange(lock);
        } catch (...) {
          if (!failure) failure = std::current_exception();
          stop = true;
          break;
        }
        wake.notify_all();
      }
      if (options.progress && Clock::now() - last_progress >= std::chrono::duration<double>(options.progress_interval)) {
        last_progress = Clock::now();
        const EnsembleProgress e{finished, outcome.resumed, points.size(), seconds(), false};
        lock.unlock();
        options.progress(e);
        lock.lock();
      }
    }
    flush_journal(lock);
    if (team && !root && !failure) {
      exchange(lock);  // the last records
      lock.unlock();
      team->send(0, kDoneTag, "");
    }
  }
  for (auto& t : pool) t.join();
  if (journal) journal->sync();
  if (failure) std::rethrow_exception(failure);
  outcome.integrated = finished - outcome.resumed;
  outcome.seconds = seconds();
  if (team && !root) {
    // Rank 0's outcome, once it wrote the file (or stopped); assignments still in flight are dropped.
    for (;;) {
      if (auto m = team->try_receive()) {
        if (m->tag != kEndTag) continue;
        outcome.status = static_cast<RunStatus>(std::stoi(m->text));
        outcome.message = "rank " + std::to_string(team->rank()) + ": " + std::to_string(outcome.integrated) +
                          " members integrated";
        if (outcome.status == RunStatus::interrupted) {
          outcome.message += "; the ensemble was interrupted";
          outcome.message += options.output.empty() ? "; nothing was kept (no output file)"
                                                    : "; those done are kept in " + journal_path_of(options.output).string() +
                                                          " (rank 0's): run the same command again to continue";
        }
        return outcome;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (options.progress) options.progress(EnsembleProgress{finished, outcome.resumed, points.size(), outcome.seconds, true});
  // A stop asked for at the very end (or by the last progress event) still publishes nothing: the
  // caller sees an interrupted ensemble, and the next run writes the file from the journal.
  if (!stop && options.stop_requested && options.stop_requested() != 0) stop = true;
  auto conclude = [&] {
    if (finished < points.size() || stop) {
      outcome.status = RunStatus::interrupted;
      outcome.message = "interrupted after " + std::to_string(finished) + " of " + std::to_string(points.size()) +
                        " members";
      outcome.message += journal ? "; those done are kept in " + journal->path().string() +
                                       ": run the same command again to continue"
                                 : "; nothing was kept (no output file)";
      return;
    }
    for (std::int64_t s : res.status)
      if (is_numerical_failure(static_cast<RunStatus>(s))) ++res.failed;
    if (!options.output.empty()) {
      write_grid_file(options.output, ensemble_grid(res));
      journal->remove();
    }
    outcome.message = std::to_string(points.size()) + " members (" + std::to_string(outcome.resumed) +
                      " kept from an earlier session)";
    if (team) {
      outcome.per_process[0] = outcome.integrated;
      for (std::size_t r = 1; r < outcome.per_process.size(); ++r) outcome.per_process[0] -= outcome.per_process[r];
      outcome.message += " on " + std::to_string(team->size()) + " processes (integrated per process:";
      for (std::size_t k : outcome.per_process) outcome.message += ' ' + std::to_string(k);
      outcome.message += ')';
    }
    if (res.failed > 0) {
      for (std::int64_t s : res.status)
        if (is_numerical_failure(static_cast<RunStatus>(s))) {
          outcome.status = static_cast<RunStatus>(s);
          break;
        }
      outcome.message += "; " + std::to_string(res.failed) + " ended with a numerical failure (see status)";
    }
  };
  conclude();
  if (team)
    for (int r = 1; r < team->size(); ++r) team->send(r, kEndTag, std::to_string(static_cast<int>(outcome.status)));
  return outcome;
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
  for (int s = 0; s <= static_cast<int>(RunStatus::interrupted); ++s) {
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
  }
  return f;
}

}  // namespace normdyn
