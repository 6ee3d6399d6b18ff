// The ensemble's journal: an append-only file of finished members and complete groups, each record
// framed and digested (the format is described in ensemble_internal.hpp).
#include "ensemble_internal.hpp"

namespace normdyn::ensemble_internal {

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
void put(std::vector<char>& b, T v) {
  put(b, &v, sizeof v);
}
void put(std::vector<char>& b, std::span<const double> v) {
  put(b, static_cast<std::uint64_t>(v.size()));
  put(b, v.data(), v.size_bytes());
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
void put_runs(std::vector<char>& b, std::span<const double> v) {
  put(b, static_cast<std::uint64_t>(v.size()));
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i + 1;
    while (j < v.size() && std::memcmp(&v[j], &v[i], sizeof(double)) == 0) ++j;
    put(b, v[i]);
    put_varint(b, j - i);
    i = j;
  }
}

// A member's record is built in place: the head of its frame (mark, payload length filled in at the
// end), the payload, then the digest and the mark (a group's is framed as it is written).
std::vector<char> begin_frame(std::uint64_t mark, std::size_t payload_bytes) {
  std::vector<char> out;
  out.reserve(payload_bytes + 4 * sizeof mark);
  put(out, mark);
  put(out, std::uint64_t{0});
  return out;
}
void end_frame(std::vector<char>& out, std::uint64_t mark) {
  constexpr std::size_t head = 2 * sizeof(std::uint64_t);
  const std::uint64_t size = out.size() - head;
  std::memcpy(out.data() + sizeof(std::uint64_t), &size, sizeof size);
  put(out, fnv1a(out.data() + head, size));
  put(out, mark);
}

std::vector<char> serialize(std::size_t point, const MemberView& r) {
  std::vector<char> payload =
      begin_frame(kRecordMark, 8 * (5 + 2 * r.pair_fraction.size() + r.direction.size() + r.radius.size()));
  put(payload, static_cast<std::uint64_t>(point));
  put(payload, static_cast<std::int64_t>(r.status));
  put(payload, r.t_reached);
  put(payload, r.accepted_steps);
  put(payload, r.rhs_evaluations);
  for (const auto v : {r.pair_fraction, r.cluster_count, r.mean_radius}) put_runs(payload, v);
  for (const auto v : {r.one_minus_mean_cosine, r.direction, r.radius}) put(payload, v);
  end_frame(payload, kRecordMark);
  return payload;
}

// The slices of group g in the result, in the order its record stores them: the statistics
// ([group, time], [group, quantile, time]), the members ([group, member]) and the trajectories
// kept of its members (`kept`: their indices in EnsembleOptions::trajectories).
template <class Result, class F>
void for_each_group_slice(Result& r, std::size_t g, const std::vector<std::size_t>& kept, F&& f) {
  const std::size_t T = r.time.size(), Q = r.quantiles.size(), M = r.members_per_group;
  const std::size_t D = T * static_cast<std::size_t>(r.n * r.d), R = T * static_cast<std::size_t>(r.n);
  auto slice = [&](auto& v, std::size_t start, std::size_t count) { f(std::span(v.data() + start, count)); };
  for (auto* v : {&r.pair_fraction, &r.sync_probability, &r.cluster_count, &r.one_minus_mean_cosine, &r.mean_radius})
    slice(*v, g * T, T);
  slice(r.members_at, g * T, T);
  for (auto* v : {&r.one_minus_mean_cosine_quantiles, &r.mean_radius_quantiles}) slice(*v, g * Q * T, Q * T);
  for (auto* v :
       {&r.status, &r.final_cluster_count, &r.accepted_steps, &r.rhs_evaluations, &r.rate_law, &r.rate_problem})
    slice(*v, g * M, M);
  for (auto* v : {&r.t_sync, &r.t_reached, &r.rate_parameter, &r.rate_stderr}) slice(*v, g * M, M);
  slice(r.member_frames, g * M, M);
  for (auto* v :
       {&r.member_pair_fraction, &r.member_cluster_count, &r.member_one_minus_mean_cosine, &r.member_mean_radius})
    slice(*v, g * M * T, M * T);
  for (std::size_t k : kept) {
    slice(r.trajectory_direction, k * D, D);
    slice(r.trajectory_radius, k * R, R);
  }
}

// A group's record holds every member's figures of the group: built whole, it took as much memory
// again as the group's figures in the result (a third of the ensemble's memory at 2 groups).
RecordPieces group_record(const EnsembleResult& r, std::size_t g, const std::vector<std::size_t>& kept,
                          const std::uint64_t& index) {
  RecordPieces pieces{std::span(reinterpret_cast<const char*>(&index), sizeof index)};
  for_each_group_slice(r, g, kept,
                       [&](auto s) { pieces.emplace_back(reinterpret_cast<const char*>(s.data()), s.size_bytes()); });
  return pieces;
}

// Copies a group record's payload (after its group index) into the result; false, and nothing
// copied, when it does not have this ensemble's layout.
bool restore_group(EnsembleResult& r, std::size_t g, const std::vector<std::size_t>& kept,
                   const std::vector<char>& bytes) {
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

// The complete records at the start of `bytes` (members appended to `out`, groups to `groups`;
// without `groups` a group record is damaged); returns the bytes they take. A torn record, or one
// whose frame is damaged, ends the reading. A record framed whole whose payload does not match its
// digest is skipped and counted in `damaged`; without `damaged` it ends the reading too. Records of
// more than `max_frames` frames are damaged.
std::size_t parse_records(const char* bytes, std::size_t size, std::size_t max_frames,
                          std::vector<std::pair<std::size_t, EnsembleRecord>>& out, GroupRecords* groups,
                          std::size_t* damaged) {
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
      if (!ok || !p.done() || status < 0 || status > static_cast<std::int64_t>(kLastRunStatus)) break;
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
  const double M = static_cast<double>(r.members_per_group),
               nd = static_cast<double>(r.n) * static_cast<double>(r.d + 1);
  const double member = 128.0 + 3.0 * (8.0 + 18.0 * T) + 8.0 * T;
  const double group = 128.0 + 8.0 * (6.0 * T + 2.0 * Q * T + 11.0 * M + 4.0 * M * T);
  const double trajectories = static_cast<double>(kept) * 8.0 * T * nd;
  const double bound =
      2.0 * (static_cast<double>(points) * member + static_cast<double>(r.groups) * group + 2.0 * trajectories) +
      double(1 << 20);
  return bound >= 0x1p63 ? std::uint64_t{1} << 63 : static_cast<std::uint64_t>(bound);
}

}  // namespace normdyn::ensemble_internal
