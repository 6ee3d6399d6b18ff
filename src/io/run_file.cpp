#include "normdyn/io/run_file.hpp"
#include "normdyn/io/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <limits>
#include <map>

#include "io/feedforward_weights.hpp"
#include "io/terms_record.hpp"
#include "io/frame_checksums.hpp"
#include "io/h5.hpp"
#include "io/h5md.hpp"
#include "toml_text.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/given.hpp"
#include "normdyn/io/file_lock.hpp"
#include "normdyn/version.hpp"
#include "normdyn/stopwatch.hpp"
#include "normdyn/text_hash.hpp"

namespace normdyn {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kTokens = "/particles/tokens";
constexpr const char* kDirection = "/particles/tokens/direction";
constexpr const char* kRadius = "/particles/tokens/radius";
constexpr const char* kCheckpoint = "/checkpoint";
constexpr const char* kFields = "/fields";
// Version of the normdyn-specific parts of the layout (/checkpoint, /summary, /parameters keys).
// 1.1: each checkpoint slot holds its checksum (/checkpoint/<slot>/checksum).
constexpr std::int64_t kSchemaVersion[2] = {1, 1};
// The first version whose checkpoints carry a checksum.
constexpr std::int64_t kCheckpointChecksumVersion[2] = {1, 1};
// One checkpoint record: encode_checkpoint_record (checkpoint.hpp).
constexpr std::size_t kRecordSize = kCheckpointRecordSize;

std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

// "a,b,c" → {"a", "b", "c"} (separator ','); "" → {}.
std::vector<std::string> split_names(const std::string& joined, char separator = ',') {
  std::vector<std::string> names;
  for (std::size_t start = 0; start < joined.size();) {
    const std::size_t end = std::min(joined.find(separator, start), joined.size());
    names.push_back(joined.substr(start, end - start));
    start = end + 1;
  }
  return names;
}

// The arrays given with the run (model.qkv = "given", init.kind = "given"), stored beside the
// configuration, whose model.qkv_digest and init.tokens_digest name them; a reader checks them.
constexpr const char* kGivenQkv = "qkv";
constexpr const char* kGivenTokens = "initial_tokens";
constexpr const char* kGivenScoreBias = "score_bias";

void write_given(h5::Group& parameters, const RunConfig& config) {
  if (const auto& qkv = config.model.given_qkv) {
    const std::vector<double> values = given_qkv_values(config.model);
    const std::span<const double> all(values);
    const std::size_t third = values.size() / 3;
    const std::uint64_t dims[4] = {qkv->size(), static_cast<std::uint64_t>(config.model.heads),
                                   static_cast<std::uint64_t>(config.model.d), static_cast<std::uint64_t>(config.model.d)};
    h5::Group g = parameters.create_group(kGivenQkv);
    g.create_dataset("Q", dims, all.subspan(0, third));
    g.create_dataset("K", dims, all.subspan(third, third));
    g.create_dataset("V", dims, all.subspan(2 * third, third));
  }
  if (const auto& tokens = config.init.given_tokens) {
    const RowMatrix& rows = tokens->rows;
    const std::uint64_t dims[2] = {static_cast<std::uint64_t>(rows.rows()), static_cast<std::uint64_t>(rows.cols())};
    h5::Group g = parameters.create_group(kGivenTokens);
    g.create_dataset("value", dims, std::span<const double>(rows.data(), static_cast<std::size_t>(rows.size())));
  }
  if (const RowMatrix* bias = given_score_bias(config)) {
    const std::uint64_t dims[2] = {static_cast<std::uint64_t>(bias->rows()), static_cast<std::uint64_t>(bias->cols())};
    h5::Group g = parameters.create_group(kGivenScoreBias);
    g.create_dataset("value", dims, std::span<const double>(bias->data(), static_cast<std::size_t>(bias->size())));
  }
}

void write_parameters(h5::File& file, const RunConfig& config, const Provenance& provenance,
                      const RunFileOptions& options) {
  h5::Group p = file.create_group("parameters");
  const std::string config_text = to_toml(config);
  p.set_attribute("config", config_text);
  // Recognizes an edit of the stored configuration (a resume would continue another run).
  p.set_attribute("config_hash", text_hash_hex(config_text));
  p.set_attribute("seed", static_cast<std::int64_t>(config.init.seed));
  p.set_attribute("normdyn_version", std::string(version()));
  p.set_attribute("normdyn_revision", std::string(revision()));
  p.set_attribute("compiler", std::string(compiler()));
  p.set_attribute("build_type", std::string(build_type()));
  p.set_attribute("threads", static_cast<std::int64_t>(provenance.threads));
  p.set_attribute("mpi_ranks", static_cast<std::int64_t>(provenance.ranks));
  p.set_attribute("command_line", provenance.command_line);
  p.set_attribute("host", host_name());
  p.set_attribute("created_utc", utc_now());
  p.set_attribute("resume_log", std::string());
  for (const auto& [key, value] : config_values(config)) {
    const auto dot = key.find('.');
    h5::Group section = p.require_group(key.substr(0, dot));
    const std::string name = key.substr(dot + 1);
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, bool>) section.set_attribute(name, static_cast<std::int64_t>(v));
          else if constexpr (std::is_same_v<T, std::vector<double>>) section.set_attribute(name, std::span<const double>(v));
          else section.set_attribute(name, v);
        },
        value);
  }
  write_given(p, config);
  write_terms_record(p, config);
  // The feed-forward weights as run (from the configuration or from feedforward.file).
  if (const auto& f = options.feedforward) {
    h5::Group g = p.require_group("feedforward");
    const std::uint64_t a_dims[2] = {static_cast<std::uint64_t>(f->a.rows()), static_cast<std::uint64_t>(f->a.cols())};
    const std::uint64_t omega_dims[1] = {static_cast<std::uint64_t>(f->omega.size())};
    g.create_dataset("a", a_dims, std::span<const double>(f->a.data(), static_cast<std::size_t>(f->a.size())));
    g.create_dataset("omega", omega_dims, std::span<const double>(f->omega.data(), static_cast<std::size_t>(f->omega.size())));
  }
}

void write_h5md_metadata(h5::File& file, const RunConfig& config) {
  h5::Group h5md = h5md::write_header(file);
  h5::Group module = h5md.create_group("modules/normdyn");
  module.set_attribute("version", std::span<const std::int64_t>(kSchemaVersion));
  module.set_attribute("scheme", std::string(scheme_key(config.model.scheme)));
  module.set_attribute(
      "description",
      std::string("Tokens x_j = r_j theta_j of a deep transformer as particles: /particles/tokens/direction holds the "
                  "unit directions theta_j (constraint |theta_j| = 1, every frame), /particles/tokens/radius the "
                  "radii r_j > 0; time is continuous depth. The box is unbounded (boundary none) and only records d."));
  module.set_attribute("constraint", std::string("unit_sphere"));
}

// Empty time-dependent element (H5MD): value [0, inner...], time [0], step [0], each axis with its
// dimension scale (h5md::create_element).
// Frames are buffered between flushes and appended in one call per dataset: per-frame HDF5 appends
// cost ~20 µs each (nine datasets per frame) and grew HDF5's internal bookkeeping. Buffering does
// not change what survives a crash, since only flushed frames are durable anyway.
struct Element {
  std::string group;  // its path in the file
  h5::Dataset value, time, step;
  std::vector<double> pending_values, pending_times;
  std::vector<std::int64_t> pending_steps;

  void buffer(double t, std::int64_t s, std::span<const double> values) {
    pending_values.insert(pending_values.end(), values.begin(), values.end());
    pending_times.push_back(t);
    pending_steps.push_back(s);
  }
  void write_pending() {
    if (pending_times.empty()) return;
    const auto frames = static_cast<std::uint64_t>(pending_times.size());
    value.append(std::span<const double>(pending_values), frames);
    time.append(std::span<const double>(pending_times), frames);
    step.append(std::span<const std::int64_t>(pending_steps), frames);
    pending_values.clear();
    pending_times.clear();
    pending_steps.clear();
  }
};

Element create_element(h5::File& file, const std::string& group, const std::vector<std::uint64_t>& inner,
                       int deflate, const std::vector<h5md::Axis>& axes, const std::string& unit) {
  std::uint64_t per_frame = 1;
  for (auto v : inner) per_frame *= v;
  h5md::ElementDatasets created = h5md::create_element(
      file, group, h5::ElementType::f64, h5::ChunkedLayout{inner, h5md::chunk_frames(per_frame, deflate > 0), deflate},
      axes, unit);
  Element e;
  e.group = group;
  e.value = std::move(created.value);
  e.time = std::move(created.time);
  e.step = std::move(created.step);
  return e;
}

// Datasets left open by the file's creation, by path, for the writer to take instead of opening
// them again (each open or close of a dataset costs HDF5 tens of microseconds).
using OpenDatasets = std::map<std::string, h5::Dataset>;

void keep_element(OpenDatasets& kept, const std::string& group, Element&& e) {
  kept[group + "/value"] = std::move(e.value);
  kept[group + "/time"] = std::move(e.time);
  kept[group + "/step"] = std::move(e.step);
}

void truncate(Element& e, std::uint64_t frames) {
  e.value.resize_frames(frames);
  e.time.resize_frames(frames);
  e.step.resize_frames(frames);
}

// Everything but the frames, before SWMR mode (which admits no new objects or attributes). Groups
// opened here are closed on return, as SWMR mode requires.
void write_fields(h5::File& file, const std::vector<FieldSpec>& fields) {
  if (fields.empty()) return;
  {
    // The order in which writers take a frame's fields (HDF5 lists members by name).
    std::string order;
    for (const FieldSpec& spec : fields) order += (order.empty() ? "" : ",") + spec.name;
    file.create_group(kFields).set_attribute("order", order);
  }
  for (const FieldSpec& spec : fields) {
    const std::string base = std::string(kFields) + "/" + spec.name;
    std::vector<std::uint64_t> inner;
    std::vector<std::string> axis_names{"time"}, moving;
    std::uint64_t per_frame = 1;
    for (const FieldAxis& a : spec.axes) {
      inner.push_back(a.cells);
      axis_names.push_back(a.name);
      per_frame *= a.cells;
      if (a.moving) moving.push_back(a.name);
    }
    // The axes' dimension scales: a fixed axis is its own (its cell centres), a moving one is the
    // dimension NAME_cell, and its centres [frames, cells] a coordinate on (time, NAME_cell).
    std::vector<h5::Dataset> fixed_scales(spec.axes.size());
    std::vector<h5md::Axis> axes;
    for (std::size_t k = 0; k < spec.axes.size(); ++k) {
      const FieldAxis& a = spec.axes[k];
      if (a.moving) {
        axes.push_back({a.name + "_cell", nullptr});
        continue;
      }
      const std::uint64_t dims[1] = {a.centres.size()};
      fixed_scales[k] = file.create_dataset(base + "/" + a.name, dims, std::span<const double>(a.centres));
      fixed_scales[k].set_ascii_attribute("unit", a.unit);
      fixed_scales[k].set_attribute("description", a.description);
      fixed_scales[k].make_scale(a.name);
      axes.push_back({a.name, &fixed_scales[k]});
    }
    Element e = create_element(file, base, inner, 1, axes, spec.unit);
    {
      h5::Group group = file.open_group(base);
      group.set_attribute("description", spec.description);
      // Comma-separated names of the axes stored per frame (empty: none).
      std::string joined;
      for (const auto& m : moving) joined += (joined.empty() ? "" : ",") + m;
      group.set_attribute("moving_axes", joined);
    }
    e.value.set_attribute("description", spec.description);
    e.value.set_attribute("axes", axis_names);
    e.value.set_dimension_label(0, "time");
    e.time.set_attribute("description", std::string("sample time (continuous depth t)"));
    e.step.set_attribute("description", std::string("accepted integrator steps before the sample"));
    std::string coordinates;  // CF: the moving centres are coordinates of the value (xarray reads them so)
    for (std::size_t k = 0; k < spec.axes.size(); ++k) {
      const FieldAxis& a = spec.axes[k];
      e.value.set_dimension_label(static_cast<unsigned>(k + 1), a.name);
      if (!a.moving) continue;
      h5::Dataset ds = file.create_extendable(base + "/" + a.name, h5::ElementType::f64,
                                              h5::ChunkedLayout{{a.cells}, h5md::chunk_frames(a.cells, false), 0});
      ds.set_ascii_attribute("unit", a.unit);
      ds.set_attribute("description", a.description + " (moves with time: one row of cell centres per frame)");
      ds.attach_scale(e.time, 0);
      ds.attach_scale(file.open_dataset(base + "/" + axes[k].name), 1);
      coordinates += (coordinates.empty() ? "" : " ") + a.name;
    }
    if (!coordinates.empty()) e.value.set_attribute("coordinates", coordinates);
  }
}

// The datasets whose rows make up a frame, in the order the frame checksums cover them: each
// element's value, time and step (directions, radii, observables, then the fields in their order),
// and after a field's element its moving axes.
std::vector<std::string> frame_datasets(const h5::File& file) {
  std::vector<std::string> groups;
  if (file.contains(std::string(kDirection) + "/value")) groups = {kDirection, kRadius};
  for (const auto& name : frame_observable_names())
    if (file.contains("/observables/" + name + "/value")) groups.push_back("/observables/" + name);
  std::vector<std::string> out;
  for (const auto& g : groups)
    for (const char* p : {"/value", "/time", "/step"}) out.push_back(g + p);
  if (file.contains(kFields))
    for (const auto& name : split_names(file.open_group(kFields).attribute_string("order").value_or(""))) {
      const std::string base = std::string(kFields) + "/" + name;
      for (const char* p : {"/value", "/time", "/step"}) out.push_back(base + p);
      for (const auto& axis : split_names(file.open_group(base).attribute_string("moving_axes").value_or("")))
        out.push_back(base + "/" + axis);
    }
  return out;
}

std::vector<std::string> split_lines(const std::string& joined) { return split_names(joined, '\n'); }

void create_frame_checksums(h5::File& file) {
  h5::Dataset ds = file.create_extendable(frame_checksums::kDataset, h5::ElementType::i64,
                                          h5::ChunkedLayout{{}, h5md::chunk_frames(1, false), 0});
  // Its own dimension scale (a netCDF coordinate variable), so that xarray opens /checksums.
  ds.make_scale("frames");
  ds.set_attribute(frame_checksums::kCoversAttribute, toml_text::join(frame_datasets(file), "\n"));
  ds.set_attribute("algorithm", std::string(frame_checksums::kAlgorithm));
  ds.set_attribute("description",
                   std::string("One checksum per frame: the CRC-32 (zlib's; Python's zlib.crc32) of the frame's rows, "
                               "as stored (little-endian float64 and int64), in the datasets listed by @covers, one "
                               "line each, in that order. A frame whose bytes changed since it was written no longer "
                               "matches; normdyn's readers check them (normdyn analyze, run --resume, normdyn.load)."));
}

// Everything but the frames, before SWMR mode (which admits no new objects or attributes). Groups
// opened here are closed on return, as SWMR mode requires.
void write_structure(h5::File& file, const RunConfig& config, const Provenance& provenance,
                     const RunFileOptions& options, OpenDatasets& kept) {
  const auto n = static_cast<std::uint64_t>(config.model.n);
  const auto d = static_cast<std::uint64_t>(config.model.d);
  const int deflate = config.output.compression;

  write_h5md_metadata(file, config);
  write_parameters(file, config, provenance, options);

  if (options.particles) {
    h5::Group tokens = file.create_group(kTokens);
    h5::Group box = tokens.create_group("box");
    box.set_attribute("dimension", static_cast<std::int64_t>(d));
    box.set_attribute("boundary", std::vector<std::string>(d, "none"));
    // Dimension scales naming the token and component axes, so that xarray labels them.
    std::vector<std::int64_t> token_index(n), component_index(d);
    for (std::uint64_t i = 0; i < n; ++i) token_index[i] = static_cast<std::int64_t>(i);
    for (std::uint64_t i = 0; i < d; ++i) component_index[i] = static_cast<std::int64_t>(i);
    const std::uint64_t n_dims[1] = {n}, d_dims[1] = {d};
    h5::Dataset token_scale = file.create_dataset(std::string(kTokens) + "/token", n_dims,
                                                  std::span<const std::int64_t>(token_index));
    h5::Dataset component_scale = file.create_dataset(std::string(kTokens) + "/component", d_dims,
                                                      std::span<const std::int64_t>(component_index));
    token_scale.make_scale("token");
    component_scale.make_scale("component");
    keep_element(kept, kDirection,
                 create_element(file, kDirection, {n, d}, deflate,
                                {{"token", &token_scale}, {"component", &component_scale}}, h5md::kDimensionless));
    keep_element(kept, kRadius, create_element(file, kRadius, {n}, deflate, {{"token", &token_scale}}, h5md::kDimensionless));
    if (!options.masses.empty()) {
      const std::uint64_t m_dims[1] = {options.masses.size()};
      h5::Dataset masses = file.create_dataset(std::string(kTokens) + "/mass", m_dims,
                                               std::span<const double>(options.masses));
      masses.set_attribute("description", std::string("mass of each token (sums to 1); the empirical measure is "
                                                      "sum_j mass_j delta_(theta_j, r_j)"));
      masses.attach_scale(token_scale, 0);
      masses.set_ascii_attribute("unit", h5md::kDimensionless);
    }
    if (config.output.observables)
      for (const auto& name : frame_observable_names()) {
        const auto info = find_observable(name);
        Element e = create_element(file, "/observables/" + name, {}, 0, {}, std::string(info->unit));
        e.value.set_attribute("description", std::string(info->description));
        keep_element(kept, "/observables/" + name, std::move(e));
      }
  }
  write_fields(file, options.fields);
  create_frame_checksums(file);

  // Two checkpoint slots and the index of the valid one ([-1, 0]: none yet).
  const std::uint64_t state = options.state_size > 0 ? options.state_size : n * d + n;
  const std::uint64_t state_dims[1] = {state}, record_dims[1] = {kRecordSize}, current_dims[1] = {2};
  const std::vector<double> zeros(state, 0.0), zero_record(kRecordSize, 0.0);
  // Their axes are named dimensions too, so that xarray opens these groups as well.
  const std::string base = kCheckpoint;
  const h5::Dataset state_entry = file.create_dimension(base + "/state_entry", state);
  const h5::Dataset record_entry = file.create_dimension(base + "/record_entry", kRecordSize);
  const h5::Dataset current_entry = file.create_dimension(base + "/current_entry", 2);
  const h5::Dataset checksum_entry = file.create_dimension(base + "/checksum_entry", 1);
  for (const char* slot : {"/a", "/b"}) {
    h5::Dataset& state_slot = kept[base + slot + "/state"];
    state_slot = file.create_dataset(base + slot + "/state", state_dims, std::span<const double>(zeros));
    state_slot.attach_scale(state_entry, 0);
    h5::Dataset& record_slot = kept[base + slot + "/record"];
    record_slot = file.create_dataset(base + slot + "/record", record_dims, std::span<const double>(zero_record));
    record_slot.attach_scale(record_entry, 0);
    const std::uint64_t one[1] = {1};
    const std::int64_t no_checksum[1] = {0};
    h5::Dataset& checksum_slot = kept[base + slot + "/checksum"];
    checksum_slot = file.create_dataset(base + slot + "/checksum", one, std::span<const std::int64_t>(no_checksum));
    checksum_slot.set_attribute("description", std::string(frame_checksums::kCheckpointDescription));
    checksum_slot.attach_scale(checksum_entry, 0);
  }
  const std::int64_t none[2] = {-1, 0};
  h5::Dataset& current = kept[base + "/current"];
  current = file.create_dataset(base + "/current", current_dims, std::span<const std::int64_t>(none));
  current.attach_scale(current_entry, 0);
  file.open_group(kCheckpoint)
      .set_attribute("description",
                     std::string("Integrator state for `normdyn run --resume`: slots a and b hold state "
                                 "(the flat state of the integrated system) and record [t, dt, accepted, "
                                 "rejected, rhs_evaluations, max_norm_drift, next_sample, wall_seconds] and checksum "
                                 "(the CRC-32 of state and record); current = [slot, frames]."));
  h5::Group summary = file.create_group("summary");
  summary.set_attribute("status", std::string("running"));
  // The method used (solver.method = "auto" is resolved before the file is made).
  summary.set_attribute("method", std::string(to_string(config.solver.method)));
  summary.set_attribute("method_chosen", std::string(config.solver.method_auto ? "auto" : "solver.method"));
}

// Metadata reads per attempt of a SWMR reader when no live writer holds the file's lock: metadata
// that fails its checksum then is damaged, not half-written, and HDF5's default (100 attempts with
// doubling sleeps) took hours to say so.
constexpr unsigned kReadAttemptsWithoutWriter = 2;

// Why no reader opens `path`, from one read of its superblock, whether or not a writer lives:
// * failed_write: a write that extended the file failed (disk full, a file-size limit), so the
//   file ends before the end its superblock records; HDF5 opens it for no reader until the end is
//   restored (taken first: a cut-short file may also carry the write flag).
// * killed_plain_session: a writer killed in a session outside SWMR mode (writing the summary at the
//   end of a run, or preparing a resume) left HDF5's write flag without the SWMR one; no reader
//   opens the file until the flag is cleared. What that session had not yet closed may be lost; the
//   frames and the checkpoint were closed before it began.
Recovery unreadable_because(const std::filesystem::path& path) {
  const auto flags = h5::File::unfinished_session(path);
  if (!flags) return Recovery::none;
  if (flags->truncated) return Recovery::failed_write;
  return flags->write && !flags->swmr_write ? Recovery::killed_plain_session : Recovery::none;
}

// `lock_is_ours`: the caller holds the file's writer lock (a resume inspecting its file), so no other
// writer can be at work and the lock it finds held is its own.
h5::File open_for_reading(const std::filesystem::path& path, bool lock_is_ours = false) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw IoError(path.string() + (std::filesystem::exists(path, ec) ? ": not a regular file" : ": no such file"));
  try {
    return h5::File::open(path, h5::OpenMode::read_only);
  } catch (const IoError& plain) {
    // Being written, or left by a killed writer: SWMR readers can still open it.
    h5::OpenOptions options;
    const bool live = !lock_is_ours && WriterLock::held(path);
    if (!live) options.metadata_read_attempts = kReadAttemptsWithoutWriter;
    try {
      return h5::File::open(path, h5::OpenMode::swmr_read, options);
    } catch (const IoError& swmr) {
      const Recovery why = live ? Recovery::none : unreadable_because(path);  // recovery_needed()
      if (why == Recovery::failed_write)
        throw IoError(path.string() + ": its last write failed (the file ends before the end HDF5 recorded: a full "
                      "disk or a file-size limit, or a damaged, truncated copy); no process is writing it: normdyn run --resume " +
                      path.string() + " recovers it if the rest is intact");
      if (why == Recovery::killed_plain_session)
        throw IoError(path.string() + ": left by a writer killed while it wrote outside SWMR mode (its summary, or the "
                      "start of a resume); no process is writing it: normdyn run --resume " + path.string() +
                      " recovers it, unless the session had begun its final writes");
      throw IoError(std::string(swmr.what()) + (live ? "" : " (no process is writing it: the file is damaged)"));
    }
  }
}

std::string shape_text(const std::vector<std::uint64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// A file that contradicts itself is damaged (or forged): an IoError naming the file and dataset.
[[noreturn]] void damaged(const std::filesystem::path& path, const std::string& dataset, const std::string& problem) {
  throw IoError(path.string() + ": damaged run file: " + dataset + " " + problem);
}

// The frames a run of `config` records at most: one per sample time.
std::uint64_t sample_count(const RunConfig& config) {
  return config.output.samples ? static_cast<std::uint64_t>(std::max<std::int64_t>(*config.output.samples, 0))
                               : config.output.times.size();
}

// A dataset holds more frames than the run's samples: refused before anything reads it (a forged or
// damaged extent, e.g. a sparse dataset of a gibibyte, would otherwise be read whole).
void expect_frames_within(const std::filesystem::path& path, const std::string& dataset, std::uint64_t frames,
                          std::uint64_t max_frames) {
  if (frames > max_frames)
    damaged(path, dataset, "holds " + std::to_string(frames) + " frames, more than the " + std::to_string(max_frames) +
                               " samples of its configuration (output.samples, output.times)");
}

void expect_shape(const std::filesystem::path& path, const h5::File& file, const std::string& dataset,
                  std::vector<std::int64_t> expected, h5::ElementType type,
                  std::uint64_t max_frames = std::numeric_limits<std::uint64_t>::max()) {
  // expected: -1 for the free (frame) axis.
  if (!file.contains(dataset)) damaged(path, dataset, "is missing");
  const h5::Dataset ds = file.open_dataset(dataset);
  const auto shape = ds.shape();
  if (!expected.empty() && expected[0] < 0 && !shape.empty()) expect_frames_within(path, dataset, shape[0], max_frames);
  bool ok = shape.size() == expected.size();
  for (std::size_t i = 0; ok && i < shape.size(); ++i)
    ok = expected[i] < 0 || shape[i] == static_cast<std::uint64_t>(expected[i]);
  if (!ok) {
    std::string want = "[";
    for (std::size_t i = 0; i < expected.size(); ++i)
      want += (i ? ", " : "") + (expected[i] < 0 ? std::string("frames") : std::to_string(expected[i]));
    damaged(path, dataset, "has shape " + shape_text(shape) + ", expected " + want + "] (from /parameters/config)");
  }
  if (ds.element_type() != type)
    damaged(path, dataset, std::string("has elements of the wrong type (expected ") +
                               (type == h5::ElementType::i64 ? "integers" : "floating point") + ")");
}

// /checksums/frames, where present, is a dataset [frames] of integers reached by hard links only: a
// soft link (a loop), a link to another file or a group in its place is damage, never "written
// before checksums" (which is a file without /checksums at all).
void validate_checksum_links(const std::filesystem::path& path, const h5::File& file, std::uint64_t max_frames) {
  using Link = h5::Group::Link;
  const Link group = file.link("checksums");
  if (group == Link::none) return;
  const auto refuse = [&](const std::string& object, Link link) {
    const char* what = link == Link::soft       ? "is a soft link (it must be the group and dataset themselves)"
                       : link == Link::external ? "is a link to another file"
                       : link == Link::none     ? "is missing"
                                                : "is not what the layout puts there";
    damaged(path, object, what);
  };
  if (group != Link::group) refuse("/checksums", group);
  const Link frames = file.open_group("checksums").link("frames");
  if (frames != Link::dataset) refuse(frame_checksums::kDataset, frames);
  expect_shape(path, file, frame_checksums::kDataset, {-1}, h5::ElementType::i64, max_frames);
}

// Every dataset a reader or a resume uses, against each other and the stored configuration.
void validate_layout(const std::filesystem::path& path, const h5::File& file, const RunConfig& config) {
  using h5::ElementType;
  const std::uint64_t max_frames = sample_count(config);
  const bool particles = file.contains(std::string(kDirection) + "/value");
  if (particles) {
    const auto n = static_cast<std::int64_t>(config.model.n), d = static_cast<std::int64_t>(config.model.d);
    expect_shape(path, file, std::string(kDirection) + "/value", {-1, n, d}, ElementType::f64, max_frames);
    expect_shape(path, file, std::string(kRadius) + "/value", {-1, n}, ElementType::f64, max_frames);
    for (const char* g : {kDirection, kRadius}) {
      expect_shape(path, file, std::string(g) + "/time", {-1}, ElementType::f64, max_frames);
      expect_shape(path, file, std::string(g) + "/step", {-1}, ElementType::i64, max_frames);
    }
    if (file.contains("/observables"))
      for (const auto& name : frame_observable_names())
        if (file.contains("/observables/" + name + "/value")) {
          expect_shape(path, file, "/observables/" + name + "/value", {-1}, ElementType::f64, max_frames);
          for (const char* p : {"/time", "/step"})
            if (file.contains("/observables/" + name + p))
              expect_shape(path, file, "/observables/" + name + p, {-1},
                           std::string(p) == "/time" ? ElementType::f64 : ElementType::i64, max_frames);
        }
  }
  if (file.contains(kFields)) {
    const auto names = split_names(file.open_group(kFields).attribute_string("order").value_or(""));
    if (names.empty()) damaged(path, kFields, "lists no fields (@order)");
    // A frame of a field holds at most the cells of the configuration's grid (meanfield.grid in the
    // angle, times meanfield.radial_grid in the radius).
    std::uint64_t max_cells = static_cast<std::uint64_t>(std::max<std::int64_t>(config.meanfield.grid, 1)) *
                              static_cast<std::uint64_t>(std::max<std::int64_t>(config.meanfield.radial_grid, 1));
    // On the sphere (model.d = 3): the Gauss–Legendre grid of meanfield.degree L, ⌈(3L+1)/2⌉ rings of
    // twice as many points (solvers/meanfield_sphere.cpp).
    if (config.model.kind == ModelKind::meanfield && config.model.d == 3) {
      const auto rings = static_cast<std::uint64_t>((3 * std::max<std::int64_t>(config.meanfield.degree, 1) + 2) / 2);
      max_cells = 2 * rings * rings;
    }
    for (const auto& name : names) {
      const std::string base = std::string(kFields) + "/" + name;
      if (!file.contains(base + "/value")) damaged(path, base + "/value", "is missing");
      // A field has a frame axis and one per grid axis; a scalar per frame has none beside it.
      const auto shape = file.open_dataset(base + "/value").shape();
      if (shape.empty()) damaged(path, base + "/value", "has no frame axis");
      expect_frames_within(path, base + "/value", shape[0], max_frames);
      std::uint64_t cells = 1;
      for (std::size_t k = 1; k < shape.size() && cells <= max_cells; ++k) cells *= shape[k];
      if (cells > max_cells)
        damaged(path, base + "/value", "has frames of shape " + shape_text({shape.begin() + 1, shape.end()}) +
                                           ", more cells than the grid of its configuration (meanfield.grid, "
                                           "meanfield.radial_grid)");
      expect_shape(path, file, base + "/time", {-1}, ElementType::f64, max_frames);
      expect_shape(path, file, base + "/step", {-1}, ElementType::i64, max_frames);
      for (const auto& axis : split_names(file.open_group(base).attribute_string("moving_axes").value_or(""))) {
        if (!file.contains(base + "/" + axis)) damaged(path, base + "/" + axis, "is missing (@moving_axes names it)");
        const auto axis_shape = file.open_dataset(base + "/" + axis).shape();
        if (axis_shape.size() != 2 || axis_shape[1] > max_cells)
          damaged(path, base + "/" + axis, "has shape " + shape_text(axis_shape) + ", expected [frames, cells]");
        expect_frames_within(path, base + "/" + axis, axis_shape[0], max_frames);
      }
    }
  }
  validate_checksum_links(path, file, max_frames);
  if (file.contains("/h5md/modules/normdyn")) {
    const auto scheme = file.open_group("/h5md/modules/normdyn").attribute_string("scheme");
    if (scheme && *scheme != scheme_key(config.model.scheme))
      damaged(path, "/h5md/modules/normdyn@scheme", "says \"" + *scheme + "\" but /parameters/config says \"" +
                                                    std::string(scheme_key(config.model.scheme)) + "\"");
  }
  if (file.contains(kCheckpoint)) {
    // A particle run's state is its tokens (n d directions and n radii); read whole by a resume, so
    // bounded before.
    const std::int64_t state =
        particles ? static_cast<std::int64_t>(config.model.n) * static_cast<std::int64_t>(config.model.d + 1) : -1;
    for (const char* slot : {"/a", "/b"}) {
      expect_shape(path, file, std::string(kCheckpoint) + slot + "/state", {state}, ElementType::f64);
      expect_shape(path, file, std::string(kCheckpoint) + slot + "/record", {static_cast<std::int64_t>(kRecordSize)},
                   ElementType::f64);
      if (file.contains(std::string(kCheckpoint) + slot + "/checksum"))
        expect_shape(path, file, std::string(kCheckpoint) + slot + "/checksum", {1}, ElementType::i64);
    }
    expect_shape(path, file, std::string(kCheckpoint) + "/current", {2}, ElementType::i64);
  }
}

// The given arrays back into `config`, checked against the configuration and the digests it holds.
void read_given(const std::filesystem::path& path, const h5::Group& parameters, RunConfig& config) {
  try {
    if (config.model.qkv == QkvKind::given) {
      if (!parameters.contains(kGivenQkv)) damaged(path, "/parameters/qkv", "is missing (model.qkv = \"given\")");
      const h5::Group g = parameters.open_group(kGivenQkv);
      std::vector<std::vector<double>> arrays;
      std::vector<std::uint64_t> shape;
      for (const char* name : {"Q", "K", "V"}) {
        if (!g.contains(name)) damaged(path, std::string("/parameters/qkv/") + name, "is missing");
        const h5::Dataset ds = g.open_dataset(name);
        shape = ds.shape();
        if (shape.size() != 4) damaged(path, std::string("/parameters/qkv/") + name, "is not [layers, heads, d, d]");
        arrays.push_back(ds.read_doubles());
      }
      const std::string named = config.model.qkv_digest;
      give_qkv(config, arrays[0], arrays[1], arrays[2], static_cast<Index>(shape[0]), static_cast<Index>(shape[1]),
               static_cast<Index>(shape[2]), "/parameters/qkv");
      if (config.model.qkv_digest != named)
        damaged(path, "/parameters/qkv", "was edited after the run was written (its values no longer match model.qkv_digest)");
    }
    if (config.init.kind == InitKind::given) {
      if (!parameters.contains(kGivenTokens))
        damaged(path, "/parameters/initial_tokens", "is missing (init.kind = \"given\")");
      const h5::Group g = parameters.open_group(kGivenTokens);
      if (!g.contains("value")) damaged(path, "/parameters/initial_tokens/value", "is missing");
      const h5::Dataset ds = g.open_dataset("value");
      const auto shape = ds.shape();
      if (shape.size() != 2) damaged(path, "/parameters/initial_tokens/value", "is not [n, d]");
      const std::vector<double> rows = ds.read_doubles();
      const std::string named = config.init.tokens_digest;
      give_tokens(config, rows, static_cast<Index>(shape[0]), static_cast<Index>(shape[1]), "/parameters/initial_tokens");
      if (config.init.tokens_digest != named)
        damaged(path, "/parameters/initial_tokens",
                "was edited after the run was written (its values no longer match init.tokens_digest)");
    }
    if (const auto named = score_bias_digest(config)) {
      if (!parameters.contains(kGivenScoreBias))
        damaged(path, "/parameters/score_bias", "is missing (attention.bias = \"matrix\")");
      const h5::Group g = parameters.open_group(kGivenScoreBias);
      if (!g.contains("value")) damaged(path, "/parameters/score_bias/value", "is missing");
      const h5::Dataset ds = g.open_dataset("value");
      const auto shape = ds.shape();
      if (shape.size() != 2) damaged(path, "/parameters/score_bias/value", "is not [n, n]");
      give_score_bias(config, ds.read_doubles(), static_cast<Index>(shape[0]), static_cast<Index>(shape[1]),
                      "/parameters/score_bias");
      if (score_bias_digest(config) != named)
        damaged(path, "/parameters/score_bias",
                "was edited after the run was written (its values no longer match attention.bias_digest)");
    }
  } catch (const InputError& e) {
    damaged(path, "/parameters", std::string("holds given arrays that do not fit its configuration (") + e.what() + ")");
  }
}

RunConfig stored_config(const std::filesystem::path& path, const h5::File& file) {
  if (!file.contains("parameters")) damaged(path, "/parameters", "is missing");
  const h5::Group parameters = file.open_group("parameters");
  const auto text = parameters.attribute_string("config");
  if (!text) damaged(path, "/parameters@config", "is missing");
  // Files written before the hash was stored have none.
  if (const auto hash = parameters.attribute_string("config_hash"); hash && *hash != text_hash_hex(*text))
    damaged(path, "/parameters@config",
            "was edited after the run was written (it no longer matches /parameters@config_hash): its frames "
            "are not those of this configuration");
  RunConfig config;
  try {
    config = parse_config(*text, path.string() + ":/parameters/config");
  } catch (const InputError& e) {
    damaged(path, "/parameters@config", std::string("is not a valid configuration (") + e.what() + ")");
  }
  read_given(path, parameters, config);
  read_terms_record(parameters, config);
  return config;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// A field's frames and its moving axes (one row of cell centres per frame).
struct FieldStream {
  Element element;
  std::vector<h5::Dataset> moving;
  std::vector<std::vector<double>> pending_moving;
  std::vector<std::string> moving_names;
  std::vector<std::uint64_t> moving_cells;  // cells per frame of each moving axis
};

struct RunWriter::Impl {
  // Declared first, released last: held from before the file is looked at until it is closed.
  std::optional<WriterLock> lock;
  std::filesystem::path path;
  std::filesystem::path staging;  // where the file is built until it is published
  // A descriptor of the file itself, through which finish() reopens it (never through the path,
  // which another program could have pointed elsewhere meanwhile).
  int fd = -1;
  bool overwrite = false;
  std::string force_name;
  h5::File file;
  bool particles = false;
  Element direction, radius;
  std::vector<Element> observables;
  std::vector<std::string> field_names;
  std::vector<FieldStream> fields;
  h5::Dataset slot_state[2], slot_record[2], slot_current;
  // The checkpoint slots' checksums (none in files written before them: those stay without).
  h5::Dataset slot_checksum[2];
  bool checkpoint_checksums = false;
  // The frame checksums and the datasets they cover (none in files written before them).
  h5::Dataset checksums;
  std::vector<std::string> checksum_covers;
  std::int64_t frames = 0;
  std::int64_t frames_since_flush = 0;
  std::int64_t flush_frames = 1;
  double flush_interval = 1.0;
  Clock::time_point last_flush = Clock::now();
  int next_slot = 0;
  // The checkpoint of the last appended frame, stored at the next flush.
  Checkpoint pending;
  double pending_wall_seconds = 0.0;
  bool has_pending = false;
  WriterStats stats;
  // SWMR mode and the publication wait for the first flush. A run that ends before it (any run
  // shorter than output.flush_seconds with fewer than output.flush_frames frames) writes its frames,
  // checkpoint and summary in one plain HDF5 session, closes the file and publishes it whole: it
  // never pays for the SWMR switch, the dataset handles reopened after it, or the close and reopen
  // that attributes need under SWMR.
  bool swmr = false;
  OpenDatasets kept;  // from the file's creation, until the datasets are first opened

  h5::Dataset open_dataset(const std::string& p) {
    const auto it = kept.find(p);
    if (it == kept.end()) return file.open_dataset(p);
    h5::Dataset d = std::move(it->second);
    kept.erase(it);
    return d;
  }
  // Opens an element's datasets, keeping the frames buffered for it.
  void open_element(const std::string& group, Element& e) {
    e.group = group;
    e.value = open_dataset(group + "/value");
    e.time = open_dataset(group + "/time");
    e.step = open_dataset(group + "/step");
  }

  ~Impl() {
    close_datasets();  // before the file: HDF5 closes it only with its last object
    file.close();
    if (fd >= 0) ::close(fd);
    // Left unfinished before its first flush (an exception during the run, a full disk): nothing
    // of it was durable, and the file may be half-written. It is never published.
    if (!staging.empty()) {
      std::error_code ec;
      std::filesystem::remove(staging, ec);
    }
  }

  // The file appears under its name only once it is a valid file (SWMR, or closed), so a run killed
  // before leaves the old file intact and no half-made new one. Without --force nothing at the path
  // is ever replaced (renameat2 RENAME_NOREPLACE, or link + unlink where the file system lacks it);
  // with --force rename() replaces a regular file atomically.
  void publish() {
    if (staging.empty()) return;
    if (overwrite) {
      require_replaceable(path, force_name);
      if (::rename(staging.c_str(), path.c_str()) != 0)
        throw IoError(path.string() + ": cannot move the new run file into place: " + std::strerror(errno));
    } else if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) != 0) {
      const int err = errno;
      if (err == EEXIST) throw InputError("output.path", path.string() + " exists; pass " + force_name + " to overwrite it");
      if (err != EINVAL && err != ENOSYS)
        throw IoError(path.string() + ": cannot move the new run file into place: " + std::strerror(err));
      if (::link(staging.c_str(), path.c_str()) != 0) {
        const int link_err = errno;
        if (link_err == EEXIST) throw InputError("output.path", path.string() + " exists; pass " + force_name + " to overwrite it");
        throw IoError(path.string() + ": cannot move the new run file into place: " + std::strerror(link_err));
      }
      ::unlink(staging.c_str());
    }
    staging.clear();
  }

  // --force replaces regular files only (never a FIFO, a device, a directory or a symbolic link).
  static void require_replaceable(const std::filesystem::path& p, const std::string& force_name) {
    if (is_special_entry(p))
      throw InputError("output.path", p.string() + " exists and is not a regular file; " + force_name + " replaces only regular files");
  }

  // Reopens the file through its descriptor for the summary.
  h5::File reopen_through_handle() {
    struct stat by_fd {};
    if (fd < 0 || ::fstat(fd, &by_fd) != 0) throw IoError(path.string() + ": the run file's descriptor is gone");
    h5::OpenOptions options;
    options.file_locking = false;  // the writer lock rules; SWMR readers may still hold HDF5's
    const std::filesystem::path self = "/proc/self/fd/" + std::to_string(fd);
    struct stat by_proc {};
    if (::stat(self.c_str(), &by_proc) == 0 && by_proc.st_ino == by_fd.st_ino && by_proc.st_dev == by_fd.st_dev)
      return h5::File::open(self, h5::OpenMode::read_write, options);
    // No /proc: the path, if it still names this file.
    struct stat by_path {};
    if (::stat(path.c_str(), &by_path) != 0 || by_path.st_ino != by_fd.st_ino || by_path.st_dev != by_fd.st_dev)
      throw IoError(path.string() + ": the run file was moved or replaced by another program while it was written");
    return h5::File::open(path, h5::OpenMode::read_write, options);
  }

  void open_descriptor(const std::filesystem::path& p) {
    fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) throw IoError(p.string() + ": cannot open the run file: " + std::strerror(errno));
  }

  std::vector<Element*> elements() {
    std::vector<Element*> all;
    if (particles) all = {&direction, &radius};
    for (auto& o : observables) all.push_back(&o);
    for (auto& f : fields) all.push_back(&f.element);
    return all;
  }

  bool with_observables = false;

  // What streams the file has is read from the file itself, so that a resumed run writes the
  // same ones. The datasets are opened when first needed (open_datasets).
  void read_streams(const RunConfig& config) {
    flush_frames = config.output.flush_frames;
    flush_interval = config.output.flush_seconds;
    particles = file.contains(std::string(kDirection) + "/value");
    with_observables = file.contains("/observables/" + frame_observable_names().front() + "/value");
    field_names.clear();
    if (file.contains(kFields)) field_names = split_names(file.open_group(kFields).attribute_string("order").value_or(""));
    observables.clear();
    observables.resize(with_observables ? frame_observable_names().size() : 0);
    fields.clear();
    fields.resize(field_names.size());
    checkpoint_checksums = file.contains(std::string(kCheckpoint) + "/a/checksum");
    checksum_covers.clear();
    if (file.contains(frame_checksums::kDataset))
      checksum_covers = split_lines(
          file.open_dataset(frame_checksums::kDataset).attribute_string(frame_checksums::kCoversAttribute).value_or(""));
    for (std::size_t i = 0; i < field_names.size(); ++i) {
      const h5::Group group = file.open_group(std::string(kFields) + "/" + field_names[i]);
      FieldStream& f = fields[i];
      f.moving_names = split_names(group.attribute_string("moving_axes").value_or(""));
      f.pending_moving.resize(f.moving_names.size());
      for (const std::string& name : f.moving_names)
        f.moving_cells.push_back(file.open_dataset(std::string(kFields) + "/" + field_names[i] + "/" + name).shape().at(1));
    }
  }

  // Before the first frames go to the file: SWMR mode, then the datasets (start_swmr_write closes
  // and reopens every open dataset, so they are opened after it).
  void enter_swmr() {
    if (swmr) return;
    kept.clear();  // closed rather than refreshed by the switch, which costs more
    file.start_swmr_write();
    swmr = true;
    reopen_datasets();
  }

  void close_datasets() {
    kept.clear();
    for (Element* e : elements()) *e = Element{};
    fields.clear();
    for (int i = 0; i < 2; ++i) {
      slot_state[i] = h5::Dataset();
      slot_record[i] = h5::Dataset();
      slot_checksum[i] = h5::Dataset();
    }
    slot_current = h5::Dataset();
    checksums = h5::Dataset();
  }

  // In SWMR mode HDF5 1.10 keeps every chunk written through a dataset handle in memory until the
  // handle is closed (measured: 8 bytes per value over 10^5 frames), so the writer closes and
  // reopens its datasets after every flush.
  void reopen_datasets() {
    if (particles) {
      open_element(kDirection, direction);
      open_element(kRadius, radius);
    }
    const auto names = frame_observable_names();
    for (std::size_t i = 0; i < observables.size(); ++i) open_element("/observables/" + names[i], observables[i]);
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const std::string base = std::string(kFields) + "/" + field_names[i];
      FieldStream& f = fields[i];
      open_element(base, f.element);
      f.moving.clear();
      for (const std::string& name : f.moving_names) f.moving.push_back(file.open_dataset(base + "/" + name));
    }
    for (int s = 0; s < 2; ++s) {
      const std::string slot = std::string(kCheckpoint) + (s == 0 ? "/a" : "/b");
      slot_state[s] = open_dataset(slot + "/state");
      slot_record[s] = open_dataset(slot + "/record");
      if (checkpoint_checksums) slot_checksum[s] = open_dataset(slot + "/checksum");
    }
    slot_current = open_dataset(std::string(kCheckpoint) + "/current");
    if (!checksum_covers.empty()) checksums = open_dataset(frame_checksums::kDataset);
  }

  // `ordered`: the slot reaches the disk before `current` points at it (not needed in a file that is
  // published only once closed).
  void store_checkpoint(bool ordered = true) {
    if (!has_pending) return;
    const int s = next_slot;
    slot_state[s].write(std::span<const double>(pending.x));
    const auto record = encode_checkpoint_record(pending, pending_wall_seconds);
    slot_record[s].write(std::span<const double>(record));
    if (checkpoint_checksums) {
      const std::int64_t crc[1] = {frame_checksums::checkpoint(pending.x, record)};
      slot_checksum[s].write(std::span<const std::int64_t>(crc));
    }
    if (ordered) file.flush();
    const std::int64_t current[2] = {s, static_cast<std::int64_t>(pending.next_sample)};
    slot_current.write(std::span<const std::int64_t>(current));
    next_slot = 1 - s;
    has_pending = false;
  }

  // Buffered frames go to the file at every flush, and earlier when the buffer grows large
  // (frames of big systems are tens of MB each).
  static constexpr std::size_t kMaxBufferedValues = std::size_t{1} << 19;  // 4 MiB
  std::size_t buffered_values() const {
    std::size_t values = direction.pending_values.size() + radius.pending_values.size();
    for (const FieldStream& f : fields) values += f.element.pending_values.size();
    return values;
  }

  // After a frame is buffered: remember its checkpoint and keep the flush cadence.
  void commit_frame(const CheckpointView& checkpoint, double wall_seconds) {
    ++frames;
    pending.t = checkpoint.t;
    pending.dt = checkpoint.dt;
    pending.x.assign(checkpoint.x.begin(), checkpoint.x.end());
    pending.counters = checkpoint.counters;
    pending.next_sample = checkpoint.next_sample;
    pending_wall_seconds = wall_seconds;
    has_pending = true;
    if (++frames_since_flush >= flush_frames) flush();
    else if (buffered_values() >= kMaxBufferedValues) write_pending();
    else if (seconds_since(last_flush) >= flush_interval) flush();
  }
  void write_pending() {
    enter_swmr();
    const auto start = Clock::now();
    write_pending_frames();
    stats.write_seconds += seconds_since(start);
  }
  // The checksums of the buffered frames, from the rows as they go to the file.
  std::vector<std::int64_t> pending_checksums() {
    if (checksum_covers.empty()) return {};
    struct Rows {
      const unsigned char* bytes;
      std::size_t row;
    };
    std::map<std::string, Rows> rows;
    std::size_t count = 0;
    const auto add = [&](const std::string& dataset, const auto& buffer, std::size_t per_frame) {
      rows[dataset] = {reinterpret_cast<const unsigned char*>(buffer.data()), per_frame * sizeof(buffer[0])};
    };
    for (Element* e : elements()) {
      count = e->pending_times.size();
      if (count == 0) return {};
      add(e->group + "/value", e->pending_values, e->pending_values.size() / count);
      add(e->group + "/time", e->pending_times, 1);
      add(e->group + "/step", e->pending_steps, 1);
    }
    for (std::size_t i = 0; i < fields.size(); ++i)
      for (std::size_t k = 0; k < fields[i].moving_names.size(); ++k)
        add(std::string(kFields) + "/" + field_names[i] + "/" + fields[i].moving_names[k], fields[i].pending_moving[k],
            fields[i].moving_cells[k]);
    std::vector<const Rows*> covered;
    for (const std::string& dataset : checksum_covers) {
      const auto it = rows.find(dataset);
      if (it == rows.end()) throw IoError(dataset + ": listed by " + frame_checksums::kDataset + " but not written by this run");
      covered.push_back(&it->second);
    }
    std::vector<std::int64_t> out(count);
    for (std::size_t f = 0; f < count; ++f) {
      std::uint32_t crc = frame_checksums::initial();
      for (const Rows* r : covered) crc = frame_checksums::extend(crc, r->bytes + f * r->row, r->row);
      out[f] = crc;
    }
    return out;
  }

  void write_pending_frames() {
    // Appended after the frames: a reader counts only frames with their checksum.
    const std::vector<std::int64_t> crcs = pending_checksums();
    for (Element* e : elements()) e->write_pending();
    for (FieldStream& f : fields)
      for (std::size_t k = 0; k < f.moving.size(); ++k) {
        if (f.pending_moving[k].empty()) continue;
        const std::uint64_t cells = f.moving_cells[k];
        f.moving[k].append(std::span<const double>(f.pending_moving[k]), f.pending_moving[k].size() / cells);
        f.pending_moving[k].clear();
      }
    if (!crcs.empty()) checksums.append(std::span<const std::int64_t>(crcs), crcs.size());
  }

  // `reopen`: false for the last flush of a run, whose datasets are closed right after it.
  void flush(bool reopen = true) {
    write_pending();
    const auto start = Clock::now();
    file.flush();  // frames first: the checkpoint must never point past durable frames
    store_checkpoint();
    file.flush();
    publish();
    if (reopen) reopen_datasets();
    stats.flushes++;
    stats.flush_seconds += seconds_since(start);
    frames_since_flush = 0;
    last_flush = Clock::now();
  }
};

RunWriter::RunWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RunWriter::RunWriter(const std::filesystem::path& path, const RunConfig& config, const Provenance& provenance,
                     const RunFileOptions& options) {
  std::error_code ec;
  const std::filesystem::path parent = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  if (!std::filesystem::is_directory(parent, ec))
    throw IoError(path.string() + ": directory " + parent.string() + " does not exist");
  if (path.filename().string().size() + 32 > 255)  // room for the staging and lock suffixes (NAME_MAX)
    throw InputError("output.path", path.filename().string() + ": file name too long (at most 223 bytes)");

  auto impl = std::make_unique<Impl>();
  // The lock first: the existence check, the creation and the publication are then one writer's.
  impl->lock.emplace(WriterLock::acquire(path));
  if (std::filesystem::symlink_status(path, ec).type() != std::filesystem::file_type::not_found) {
    if (!options.overwrite)
      throw InputError("output.path", path.string() + " exists; pass " + options.force_name + " to overwrite it");
    Impl::require_replaceable(path, options.force_name);
  }
  impl->path = path;
  impl->overwrite = options.overwrite;
  impl->force_name = options.force_name;
  // One name per output, not per process: the lock makes this writer its only user, and a file left
  // there by a run killed before its first flush is replaced (removed first: it could be a link).
  impl->staging = path;
  impl->staging += ".normdyn.tmp";
  std::filesystem::remove(impl->staging, ec);
  // If any of this throws (a full disk can fail the creation after the file exists), ~Impl removes
  // the staging file.
  impl->file = h5::File::create(impl->staging, h5::CreateMode::truncate);
  impl->open_descriptor(impl->staging);
  write_structure(impl->file, config, provenance, options, impl->kept);
  impl->read_streams(config);
  impl->last_flush = Clock::now();
  impl_ = std::move(impl);
}



Recovery recovery_needed(const std::filesystem::path& path) {
  const Recovery why = unreadable_because(path);
  return why != Recovery::none && !WriterLock::held(path) ? why : Recovery::none;
}

bool limit_swmr_read_attempts(const std::filesystem::path& path, std::int64_t file_access_list) {
  if (WriterLock::held(path)) return false;
  h5::set_metadata_read_attempts(file_access_list, kReadAttemptsWithoutWriter);
  return true;
}

bool recover_killed_session(const std::filesystem::path& path) {
  if (unreadable_because(path) == Recovery::none) return false;
  const auto lock = WriterLock::try_acquire(path);
  if (!lock) return false;  // a live writer's
  const Recovery why = unreadable_because(path);  // under the lock: it may have been cleared meanwhile
  if (why == Recovery::none) return false;
  if (why == Recovery::killed_plain_session) {
    h5::File::open(path, h5::OpenMode::read_write_recover).close();  // clears the flags, as h5clear --status does
    return true;
  }
  // The end is restored on a copy, which must then read as a run file with its checkpoint before it
  // replaces the file: a file cut short otherwise (a truncated copy) stays as it was.
  try {
    replace_file_atomically(
        path,
        [](const std::filesystem::path& staging) {
          h5::File::open(staging, h5::OpenMode::read_write_recover).close();
          const RunReader check(staging);
          (void)check.frames();
          (void)check.checkpoint();
        },
        true);
  } catch (const IoError& e) {
    throw IoError(path.string() + ": damaged run file: it ends before the end HDF5 recorded, and restoring that end "
                  "does not make it readable (" + e.what() + ")");
  }
  return true;
}

namespace {

// require_run_file, for a caller that may hold the file's writer lock itself.
void check_run_file(const std::filesystem::path& path, const std::string& flag, bool lock_is_ours) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw InputError(flag, path.string() + ": no such file");
  if (!std::filesystem::is_regular_file(status)) throw InputError(flag, path.string() + ": not a regular file");
  // A file that begins with HDF5's signature was written as an HDF5 file: if HDF5 cannot read it
  // now (cut short, or a byte of its first blocks changed), it is a damaged file, not another kind.
  if (!h5::File::is_hdf5(path)) {
    if (h5::File::has_signature(path))
      throw IoError(path.string() + ": damaged run file: it begins with the HDF5 signature, but HDF5 cannot read it "
                    "(a truncated or corrupted copy)");
    throw InputError(flag, path.string() + ": not an HDF5 file");
  }
  const h5::File f = open_for_reading(path, lock_is_ours);
  bool run = false;
  try {
    run = (f.contains(std::string(kDirection) + "/value") || f.contains(kFields)) && f.contains("parameters");
  } catch (const IoError& e) {
    // The file opened, but its groups do not read (metadata that fails its checksum).
    throw IoError(path.string() + ": damaged run file: " + e.what());
  }
  if (!run) throw InputError(flag, path.string() + ": not a normdyn run file");
}

}  // namespace

void require_run_file(const std::filesystem::path& path, const std::string& flag) { check_run_file(path, flag, false); }

std::optional<std::size_t> verify_run_file(const std::filesystem::path& path, const std::string& flag) {
  require_run_file(path, flag);
  return RunReader(path).verify_frames();
}

namespace {

// A checkpoint is trusted only if it fits the frames, times and configuration stored beside it:
// a resume from a forged or damaged one would write frames that are not the run's.
void validate_checkpoint(const std::filesystem::path& path, const RunReader& reader, const RunConfig& config,
                         const Checkpoint& c) {
  const std::string where = std::string(kCheckpoint);
  const double t_end = config.solver.t_end;
  if (!std::isfinite(c.t) || c.t < config.solver.t_start || c.t > t_end * (1.0 + 1e-12))
    damaged(path, where, "holds t = " + toml_text::number_text(c.t) + ", outside [solver.t_start, solver.t_end] = [" +
                             toml_text::number_text(config.solver.t_start) + ", " + toml_text::number_text(t_end) + "]");
  if (!std::isfinite(c.dt) || !(c.dt > 0.0))
    damaged(path, where, "holds step size dt = " + toml_text::number_text(c.dt) + " (must be finite and positive)");
  if (c.counters.accepted_steps < 0 || c.counters.rejected_steps < 0 || c.counters.rhs_evaluations < 0)
    damaged(path, where, "holds negative step counters");
  if (config.solver.max_steps > 0 && c.counters.accepted_steps > config.solver.max_steps)
    damaged(path, where, "holds more steps than solver.max_steps");
  for (double v : c.x)
    if (!std::isfinite(v)) damaged(path, where, "holds a non-finite state");
  if (reader.has_particles()) {
    const std::size_t expected = static_cast<std::size_t>(config.model.n) * static_cast<std::size_t>(config.model.d + 1);
    if (c.x.size() != expected)
      damaged(path, where, "state has " + std::to_string(c.x.size()) + " values, expected n (d + 1) = " +
                               std::to_string(expected));
  }
  const std::vector<double> samples = config.output.sample_times(t_end, config.solver.t_start);
  if (c.next_sample > samples.size())
    damaged(path, where, "points at sample " + std::to_string(c.next_sample) + " of " + std::to_string(samples.size()));
  // The samples still to record lie ahead of the checkpoint. (Recorded ones may lie after it too:
  // a dense-output step records the samples it spans and checkpoints its start.)
  const double slack = 1e-12 * std::max(1.0, std::abs(c.t));
  if (c.next_sample < samples.size() && samples[c.next_sample] < c.t - slack)
    damaged(path, where, "holds t = " + toml_text::number_text(c.t) + " past sample " + std::to_string(c.next_sample) +
                             " (t = " + toml_text::number_text(samples[c.next_sample]) + "), which it says is still to record");
  const std::size_t frames = reader.frames();
  if (c.next_sample > frames)
    damaged(path, where, "points at frame " + std::to_string(c.next_sample) + " but the file holds " +
                             std::to_string(frames) + " complete frames");
  // The stored frames are the configuration's samples.
  const std::vector<double> times = reader.times();
  for (std::size_t i = 0; i < c.next_sample; ++i)
    if (!(std::abs(times[i] - samples[i]) <= 1e-12 * std::max(1.0, std::abs(samples[i]))))
      damaged(path, reader.has_particles() ? std::string(kDirection) + "/time" : std::string(kFields), "frame " + std::to_string(i) + " has t = " + std::to_string(times[i]) +
                                                    ", but the stored configuration samples t = " +
                                                    std::to_string(samples[i]));
  // The last durable frame must read back (chunk filters detect some damage), and the frames the
  // resume keeps must be the ones written (the checksums detect changed bytes).
  if (reader.has_particles() && c.next_sample > 0) (void)reader.frame(c.next_sample - 1);
  (void)reader.verify_frames(c.next_sample);
}

}  // namespace

bool is_run_file(const std::filesystem::path& path) {
  try {
    require_run_file(path, "");
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

RunWriter RunWriter::reopen_for_resume(const std::filesystem::path& path, const Provenance& provenance,
                                       ResumeState& state) {
  auto impl = std::make_unique<Impl>();
  // Held before the file is inspected: a file another process writes is never touched.
  impl->lock.emplace(WriterLock::acquire(path));
  check_run_file(path, "--resume", true);
  // Inspect first through a reader (works on files left by a killed writer).
  {
    const RunReader reader(path, *impl->lock);
    state.config = reader.config();
    const auto summary = reader.summary();
    state.crashed = !summary.has_value();
    if (summary) {
      state.previous_status = summary->status;
      if (summary->status != RunStatus::interrupted)
        throw InputError("--resume", path.string() + " ended with status " + std::string(to_string(summary->status)) +
                                         "; only interrupted or killed runs can be resumed");
    }
    state.checkpoint = reader.checkpoint();
    if (state.checkpoint) {
      validate_checkpoint(path, reader, state.config, *state.checkpoint);
      // Last: a checkpoint that contradicts the file is named by what it contradicts.
      state.checkpoint_unchecked = !reader.verify_checkpoint();
    }
  }
  impl->path = path;
  impl->open_descriptor(path);
  impl->file = h5::File::open(path, h5::OpenMode::read_write_recover);
  // The wall seconds of earlier sessions are in the valid slot's record.
  if (state.checkpoint) {
    const auto current = impl->file.open_dataset(std::string(kCheckpoint) + "/current").read_ints();
    const auto record = impl->file.open_dataset(std::string(kCheckpoint) + (current[0] == 0 ? "/a" : "/b") + "/record")
                            .read_doubles();
    decode_checkpoint_record(record, state.wall_seconds);
    impl->next_slot = 1 - static_cast<int>(current[0]);
  }
  // Running again before any frame is dropped: the earlier summary's frame count no longer holds.
  impl->file.open_group("summary").set_attribute("status", std::string("running"));
  impl->read_streams(state.config);
  impl->reopen_datasets();
  // Frames after the checkpoint are recomputed: drop them (they may be partial).
  const auto frames = static_cast<std::uint64_t>(state.checkpoint ? state.checkpoint->next_sample : 0);
  // The checksums first: cut short by a kill in between, every dataset still holds at least the
  // frames its checksums count, as after a kill while appending (frames first, then checksums).
  if (!impl->checksum_covers.empty()) impl->checksums.resize_frames(frames);
  for (Element* e : impl->elements()) truncate(*e, frames);
  for (FieldStream& f : impl->fields)
    for (h5::Dataset& axis : f.moving) axis.resize_frames(frames);
  impl->frames = static_cast<std::int64_t>(frames);

  {
    // A log of the sessions: when, from which frame, by which build and thread count.
    h5::Group parameters = impl->file.open_group("parameters");
    const std::string entry = utc_now() + " resumed from frame " + std::to_string(frames) + " by " +
                              std::string(revision()) + " with " + std::to_string(provenance.threads) +
                              " threads" +
                              (provenance.ranks > 1 ? " on " + std::to_string(provenance.ranks) + " MPI ranks" : "") +
                              " (previous session " + (state.crashed ? "killed" : "interrupted") + ")" +
                              (state.checkpoint_unchecked
                                   ? "; its checkpoint predates checkpoint checksums and was not checked"
                                   : "");
    const std::string log = parameters.attribute_string("resume_log").value_or("");
    parameters.set_attribute("resume_log", log.empty() ? entry : log + "\n" + entry);
  }  // groups closed: SWMR mode admits only open datasets
  impl->file.start_swmr_write();
  impl->swmr = true;
  impl->last_flush = Clock::now();
  return RunWriter(std::move(impl));
}

RunWriter::~RunWriter() = default;
RunWriter::RunWriter(RunWriter&&) noexcept = default;
RunWriter& RunWriter::operator=(RunWriter&&) noexcept = default;

void RunWriter::append_frame(double t, std::int64_t step, const Tokens& tokens, std::span<const double> observables,
                             const CheckpointView& checkpoint, double wall_seconds) {
  Impl& w = *impl_;
  if (observables.size() != w.observables.size())
    throw IoError(w.path.string() + ": " + std::to_string(observables.size()) + " observables for " +
                  std::to_string(w.observables.size()) + " datasets");
  w.direction.buffer(t, step, std::span<const double>(tokens.theta.data(), static_cast<std::size_t>(tokens.theta.size())));
  w.radius.buffer(t, step, std::span<const double>(tokens.r.data(), static_cast<std::size_t>(tokens.r.size())));
  for (std::size_t i = 0; i < observables.size(); ++i) w.observables[i].buffer(t, step, observables.subspan(i, 1));
  w.commit_frame(checkpoint, wall_seconds);
}

void RunWriter::append_field_frame(double t, std::int64_t step, const std::vector<std::span<const double>>& values,
                                   const std::vector<std::span<const double>>& moving_centres,
                                   const CheckpointView& checkpoint, double wall_seconds) {
  Impl& w = *impl_;
  if (values.size() != w.fields.size())
    throw IoError(w.path.string() + ": " + std::to_string(values.size()) + " field frames for " +
                  std::to_string(w.fields.size()) + " fields");
  for (std::size_t i = 0; i < values.size(); ++i) {
    FieldStream& f = w.fields[i];
    f.element.buffer(t, step, values[i]);
    if (f.moving_cells.empty()) continue;
    const std::span<const double> centres = i < moving_centres.size() ? moving_centres[i] : std::span<const double>();
    std::size_t offset = 0;
    for (std::size_t k = 0; k < f.moving_cells.size(); ++k) {
      const std::size_t cells = f.moving_cells[k];
      if (offset + cells > centres.size()) throw IoError(w.path.string() + ": moving axis centres missing");
      f.pending_moving[k].insert(f.pending_moving[k].end(), centres.begin() + static_cast<std::ptrdiff_t>(offset),
                                 centres.begin() + static_cast<std::ptrdiff_t>(offset + cells));
      offset += cells;
    }
  }
  w.commit_frame(checkpoint, wall_seconds);
}

void RunWriter::flush_if_due() {
  Impl& w = *impl_;
  if (w.frames_since_flush > 0 && seconds_since(w.last_flush) >= w.flush_interval) w.flush();
}

void RunWriter::flush() { impl_->flush(); }

namespace {
void write_summary(const h5::File& file, const RunSummary& s, const WriterStats& stats) {
  h5::Group g = file.open_group("summary");
  g.set_attribute("message", s.message);
  g.set_attribute("t_reached", s.t_reached);
  g.set_attribute("frames", s.frames);
  g.set_attribute("accepted_steps", s.accepted_steps);
  g.set_attribute("rejected_steps", s.rejected_steps);
  g.set_attribute("rhs_evaluations", s.rhs_evaluations);
  g.set_attribute("wall_seconds", s.wall_seconds);
  g.set_attribute("max_norm_drift", s.max_norm_drift);
  g.set_attribute("flushes", stats.flushes);
  g.set_attribute("flush_seconds", stats.flush_seconds);
  g.set_attribute("write_seconds", stats.write_seconds);
  for (const auto& [name, value] : s.extra) g.set_attribute(name, value);
  if (!s.warnings.empty()) g.set_attribute("warnings", s.warnings);
  // Last: a session killed before it leaves the status "running", so that no reader takes the
  // counts above for an ended run's before they are all written.
  g.set_attribute("status", std::string(to_string(s.status)));
}
}  // namespace

void RunWriter::finish(const RunSummary& s) {
  Impl& w = *impl_;
  if (w.swmr) {
    w.flush(false);
    // Attributes cannot be created in SWMR mode: close, reopen normally, write the summary.
    w.close_datasets();
    w.file.close();
    w.file = w.reopen_through_handle();
    write_summary(w.file, s, w.stats);
  } else {
    // Never flushed: frames and checkpoint in the same plain session as the summary, counted as a
    // flush's are (the frames in write_seconds, the checkpoint in flush_seconds).
    w.reopen_datasets();
    const auto start = Clock::now();
    w.write_pending_frames();
    w.stats.write_seconds += seconds_since(start);
    const auto checkpoint_start = Clock::now();
    w.store_checkpoint(false);
    w.stats.flush_seconds += seconds_since(checkpoint_start);
    w.stats.flushes++;
    w.close_datasets();
    write_summary(w.file, s, w.stats);
    // Checked here: the close itself would drop HDF5's error (a full disk) and leave a broken file.
    w.file.flush();
  }
  w.file.close();
  try {
    w.publish();
  } catch (const InputError& e) {
    // Another program took the name during the run: this run's file stays where it is.
    const std::string kept = w.staging.string();
    w.staging.clear();
    throw InputError(e.key(), w.path.string() + " was created during the run; this run's file is kept as " + kept);
  }
}

const std::filesystem::path& RunWriter::path() const { return impl_->path; }
std::int64_t RunWriter::frames() const { return impl_->frames; }

// ---------------------------------------------------------------------------------------------
struct RunReader::Impl {
  std::filesystem::path path;
  h5::File file;
  RunConfig config;  // the stored configuration, validated against the datasets
  std::size_t known_frames = 0;  // complete frames when last counted
  bool lock_is_ours = false;     // opened by the holder of the file's writer lock
  // Kept open between frame() calls so that HDF5's chunk cache holds the last chunk: a chunk spans
  // many frames, and re-opening the datasets for every frame decompressed it again each time.
  h5::Dataset direction, radius;

  const h5::Dataset& direction_values() {
    if (direction.id() < 0) direction = file.open_dataset(std::string(kDirection) + "/value");
    return direction;
  }
  const h5::Dataset& radius_values() {
    if (radius.id() < 0) radius = file.open_dataset(std::string(kRadius) + "/value");
    return radius;
  }
};

RunReader::RunReader(const std::filesystem::path& path) : RunReader(path, false) {}

RunReader::RunReader(const std::filesystem::path& path, const WriterLock& own_lock) : RunReader(path, true) {
  (void)own_lock;  // its holder is the caller: proof that no other writer is at work
}

RunReader::RunReader(const std::filesystem::path& path, bool lock_is_ours)
    : impl_(std::make_unique<Impl>(Impl{path, open_for_reading(path, lock_is_ours), {}, 0, lock_is_ours, {}, {}})) {
  try {
    if (!impl_->file.contains(std::string(kDirection) + "/value") && !impl_->file.contains(kFields))
      throw IoError(path.string() + ": not a normdyn run file (no " + kDirection + "/value or " + kFields + ")");
    impl_->config = stored_config(path, impl_->file);
    validate_layout(path, impl_->file, impl_->config);
  } catch (const IoError& e) {
    // The file opened but its layout does not read (metadata that fails its checksum, a link that
    // resolves nowhere): damage, said as the readers' own checks say it.
    const std::string what = e.what();
    if (what.rfind(path.string() + ": ", 0) == 0) throw;
    throw IoError(path.string() + ": damaged run file: " + what);
  }
}

bool RunReader::has_particles() const { return impl_->file.contains(std::string(kDirection) + "/value"); }

namespace {
// The time and step datasets that index the frames: the directions', or the first field's.
std::string frame_index_group(const h5::File& file) {
  if (file.contains(std::string(kDirection) + "/value")) return kDirection;
  const auto names = split_names(file.open_group(kFields).attribute_string("order").value_or(""));
  if (names.empty()) throw IoError("run file has neither particles nor fields");
  return std::string(kFields) + "/" + names.front();
}
}  // namespace

RunReader::~RunReader() = default;
RunReader::RunReader(RunReader&&) noexcept = default;
RunReader& RunReader::operator=(RunReader&&) noexcept = default;

std::string RunReader::config_toml() const {
  auto text = impl_->file.open_group("parameters").attribute_string("config");
  if (!text) throw IoError(impl_->path.string() + ": /parameters has no config attribute");
  return *text;
}

RunConfig RunReader::config() const { return impl_->config; }

std::string RunReader::revision() const {
  return impl_->file.open_group("parameters").attribute_string("normdyn_revision").value_or("unknown");
}

Index RunReader::n() const {
  return static_cast<Index>(impl_->file.open_dataset(std::string(kDirection) + "/value").shape().at(1));
}
Index RunReader::d() const {
  return static_cast<Index>(impl_->file.open_dataset(std::string(kDirection) + "/value").shape().at(2));
}
// Frames complete in every dataset (a killed writer may have extended some but not others).
std::size_t RunReader::frames() const {
  std::vector<std::string> groups;
  if (has_particles()) groups = {kDirection, kRadius};
  if (impl_->file.contains(kFields))
    for (const auto& name : impl_->file.open_group(kFields).member_names()) groups.push_back(std::string(kFields) + "/" + name);
  std::uint64_t m = std::numeric_limits<std::uint64_t>::max();
  for (const auto& g : groups)
    for (const char* p : {"/value", "/time", "/step"}) m = std::min(m, impl_->file.open_dataset(g + p).shape().at(0));
  // A frame counts once its checksum is written too (files written before checksums have none).
  if (impl_->file.contains(frame_checksums::kDataset))
    m = std::min(m, impl_->file.open_dataset(frame_checksums::kDataset).shape().at(0));
  return groups.empty() ? 0 : m;
}
std::vector<double> RunReader::times() const {
  const std::string dataset = frame_index_group(impl_->file) + "/time";
  // The complete frames only: a longer extent (a killed writer's, or a forged one) is never read.
  const std::size_t n = frames();
  auto t = n > 0 ? impl_->file.open_dataset(dataset).read_frames(0, n) : std::vector<double>{};
  // Sample times are finite and increase: anything else was not written by a run.
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!std::isfinite(t[i]) || (i > 0 && !(t[i] > t[i - 1])))
      damaged(impl_->path, dataset, "frame " + std::to_string(i) + " has t = " + std::to_string(t[i]) +
                                        (std::isfinite(t[i]) ? ", not after the frame before" : ""));
  return t;
}
std::vector<std::int64_t> RunReader::steps() const {
  const std::size_t n = frames();
  return n > 0 ? impl_->file.open_dataset(frame_index_group(impl_->file) + "/step").read_int_frames(0, n)
               : std::vector<std::int64_t>{};
}

Tokens RunReader::frame(std::size_t index) const {
  const auto shape = impl_->direction_values().shape();
  const auto n_ = static_cast<Index>(shape.at(1)), d_ = static_cast<Index>(shape.at(2));
  // The frame count is looked up again only past the last one seen (it costs six dataset opens).
  if (index >= impl_->known_frames) impl_->known_frames = frames();
  if (index >= impl_->known_frames)
    throw IoError(impl_->path.string() + ": frame " + std::to_string(index) + " out of range (" +
                  std::to_string(frames()) + " frames)");
  Tokens t{RowMatrix(n_, d_), Vector(n_)};
  const auto theta = impl_->direction_values().read_frames(index, 1);
  const auto r = impl_->radius_values().read_frames(index, 1);
  for (double v : theta)
    if (!std::isfinite(v))
      damaged(impl_->path, std::string(kDirection) + "/value", "frame " + std::to_string(index) + " has non-finite values");
  for (double v : r)
    if (!std::isfinite(v))
      damaged(impl_->path, std::string(kRadius) + "/value", "frame " + std::to_string(index) + " has non-finite values");
  std::copy(theta.begin(), theta.end(), t.theta.data());
  std::copy(r.begin(), r.end(), t.r.data());
  return t;
}

std::optional<FeedForward> RunReader::feedforward() const {
  const char* const group = "parameters/feedforward";
  if (!impl_->config.feedforward.active()) return std::nullopt;
  if (!impl_->file.contains(group)) damaged(impl_->path, group, "is missing (the configuration has a feed-forward term)");
  return read_feedforward_weights(impl_->file.open_group(group), impl_->config.model.d, impl_->config.feedforward.activation,
                                  [&](const std::string& problem) { damaged(impl_->path, group, problem); });
}

std::vector<double> RunReader::observable(const std::string& name) const {
  const std::string p = "/observables/" + name + "/value";
  if (!impl_->file.contains(p)) return {};
  return impl_->file.open_dataset(p).read_doubles();
}

std::vector<std::string> RunReader::field_names() const {
  if (!impl_->file.contains(kFields)) return {};
  return split_names(impl_->file.open_group(kFields).attribute_string("order").value_or(""));
}

std::vector<double> RunReader::field_frame(const std::string& name, std::size_t index) const {
  const std::string p = std::string(kFields) + "/" + name + "/value";
  if (!impl_->file.contains(p)) throw IoError(impl_->path.string() + ": no field " + name);
  if (index >= frames())
    throw IoError(impl_->path.string() + ": frame " + std::to_string(index) + " of " + p + " out of range (" +
                  std::to_string(frames()) + " frames)");
  return impl_->file.open_dataset(p).read_frames(index, 1);
}

namespace {

// The frames the run says it wrote, which its checksums must cover: once it ended, exactly those
// /summary@frames records; while it runs, or after its writer was killed, at least those its
// checkpoint records (frames are appended, with their checksums, before the checkpoint that counts
// them). A /checksums/frames cut short is damage, not a shorter run.
void expect_checksums_of_recorded_frames(const std::filesystem::path& path, const h5::File& file,
                                         std::uint64_t checksummed, bool live) {
  if (file.contains("summary")) {
    const h5::Group g = file.open_group("summary");
    const bool ended = run_status_from_string(g.attribute_string("status").value_or("")).has_value();
    if (ended && g.has_attribute("frames")) {
      const std::int64_t recorded = g.attribute_int("frames").value_or(-1);
      if (recorded < 0 || static_cast<std::uint64_t>(recorded) != checksummed)
        damaged(path, frame_checksums::kDataset,
                "holds the checksums of " + std::to_string(checksummed) + " frames, but /summary@frames says the run "
                "wrote " + std::to_string(recorded));
      return;
    }
  }
  // A live writer moves its checkpoint while this reader looks: only a killed writer's file is held
  // to it (a resume holds the lock itself, and sees no live writer).
  const std::string current = std::string(kCheckpoint) + "/current";
  if (live || !file.contains(current)) return;
  const auto slot = file.open_dataset(current).read_ints();
  if (slot.size() == 2 && (slot[0] == 0 || slot[0] == 1) && (slot[1] < 0 || static_cast<std::uint64_t>(slot[1]) > checksummed))
    damaged(path, frame_checksums::kDataset,
            "holds the checksums of " + std::to_string(checksummed) + " frames, but the checkpoint (" + current +
                ") says " + std::to_string(slot[1]) + " were written");
}

}  // namespace

std::optional<std::size_t> RunReader::verify_frames(std::optional<std::size_t> count) const {
  const h5::File& file = impl_->file;
  const std::filesystem::path& path = impl_->path;
  // Written before checksums: no /checksums at all. Its links, rank, type and extent were checked
  // when the reader opened the file (validate_layout).
  if (file.link("checksums") == h5::Group::Link::none) return std::nullopt;
  const h5::Dataset stored = file.open_dataset(frame_checksums::kDataset);
  const std::string covers_name = std::string(frame_checksums::kDataset) + "@" + frame_checksums::kCoversAttribute;
  if (!stored.has_attribute(frame_checksums::kCoversAttribute)) damaged(path, covers_name, "is missing");
  if (stored.attribute_type(frame_checksums::kCoversAttribute) != h5::ElementType::string)
    damaged(path, covers_name, "is not text");
  const std::vector<std::string> covers =
      split_lines(stored.attribute_string(frame_checksums::kCoversAttribute).value_or(""));
  // Exactly the datasets of this file's frames, in the writer's order: nothing else is read.
  if (covers != frame_datasets(file))
    damaged(path, covers_name, covers.empty() || covers.front().empty()
                                   ? "lists no datasets"
                                   : "does not list the datasets of this file's frames (its first: " + covers.front() + ")");
  const std::uint64_t checksummed = stored.shape().at(0);
  // Another open of the file in this process (h5py's, in the Python package) shares HDF5's cache of
  // its metadata, whose extents may predate frames a writer appended since: the checkpoint (data,
  // read fresh) is then not comparable with them.
  expect_checksums_of_recorded_frames(path, file, checksummed,
                                      (!impl_->lock_is_ours && WriterLock::held(path)) || file.opened_elsewhere());
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(count.value_or(checksummed), checksummed));
  std::vector<std::uint32_t> crc(n, frame_checksums::initial());
  // Read a few MiB at a time: the frames of a long run need not fit in memory. Every covered
  // dataset's frame shape was bounded by the configuration when the file was opened.
  constexpr std::uint64_t kValuesPerRead = std::uint64_t{1} << 19;
  for (const std::string& covered : covers) {
    const h5::Dataset ds = file.open_dataset(covered);
    const auto shape = ds.shape();
    if (shape.empty() || shape[0] < checksummed)
      damaged(path, covered, "holds " + std::to_string(shape.empty() ? 0 : shape[0]) + " frames, fewer than its " +
                                 std::to_string(checksummed) + " checksums");
    std::uint64_t per_frame = 1;
    for (std::size_t k = 1; k < shape.size(); ++k) per_frame *= shape[k];
    const bool integers = ds.element_type() == h5::ElementType::i64;
    const std::uint64_t step = std::max<std::uint64_t>(1, kValuesPerRead / std::max<std::uint64_t>(per_frame, 1));
    for (std::uint64_t first = 0; first < n; first += step) {
      const std::uint64_t m = std::min<std::uint64_t>(step, n - first);
      const auto add = [&](const auto& v) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        for (std::uint64_t f = 0; f < m; ++f)
          crc[first + f] = frame_checksums::extend(crc[first + f], std::span<const T>(v.data() + f * per_frame, per_frame));
      };
      if (integers) add(ds.read_int_frames(first, m));
      else add(ds.read_frames(first, m));
    }
  }
  const std::vector<std::int64_t> expected = n > 0 ? stored.read_int_frames(0, n) : std::vector<std::int64_t>{};
  for (std::size_t f = 0; f < n; ++f)
    if (expected.at(f) != static_cast<std::int64_t>(crc[f]))
      throw FrameChecksumError(impl_->path.string() + ": damaged run file: frame " + std::to_string(f) +
                               " (t = " + toml_text::number_text(times().at(f)) + ") does not match its checksum in " +
                               frame_checksums::kDataset +
                               ": its values, time or step changed after they were written (a damaged disk or copy, "
                               "or an edit)");
  return n;
}

bool RunReader::verify_checkpoint() const {
  const h5::File& file = impl_->file;
  const std::string current = std::string(kCheckpoint) + "/current";
  if (!file.contains(current)) return true;
  const auto index = file.open_dataset(current).read_ints();
  if (index.size() != 2 || (index[0] != 0 && index[0] != 1)) return true;  // none stored yet
  const std::string slot = std::string(kCheckpoint) + (index[0] == 0 ? "/a" : "/b");
  if (!file.contains(slot + "/checksum")) {
    // Files of layout 1.0 have none; a later layout always writes one.
    std::vector<std::int64_t> version;
    if (file.contains("/h5md/modules/normdyn")) version = file.open_group("/h5md/modules/normdyn").attribute_ints("version");
    const bool checksummed_layout =
        version.size() >= 2 && std::pair(version[0], version[1]) >= std::pair(kCheckpointChecksumVersion[0],
                                                                              kCheckpointChecksumVersion[1]);
    if (checksummed_layout)
      damaged(impl_->path, slot + "/checksum",
              "is missing (layout version " + std::to_string(version[0]) + "." + std::to_string(version[1]) +
                  " stores one with every checkpoint)");
    return false;
  }
  const std::vector<double> state = file.open_dataset(slot + "/state").read_doubles();
  const std::vector<double> record = file.open_dataset(slot + "/record").read_doubles();
  const std::vector<std::int64_t> stored = file.open_dataset(slot + "/checksum").read_ints();
  if (stored.size() != 1 || stored[0] != static_cast<std::int64_t>(frame_checksums::checkpoint(state, record)))
    damaged(impl_->path, "checkpoint " + slot,
            "does not match its checksum in " + slot + "/checksum: its state, time, step size or counters changed "
            "after it was written (a damaged disk or copy, or an edit). The frames before it are intact (normdyn "
            "verify checks them), but the run cannot resume from it");
  return true;
}

std::optional<RunSummary> RunReader::summary() const {
  if (!impl_->file.contains("summary")) return std::nullopt;
  const h5::Group g = impl_->file.open_group("summary");
  const auto status = run_status_from_string(g.attribute_string("status").value_or(""));
  if (!status) return std::nullopt;
  RunSummary s;
  s.status = *status;
  s.message = g.attribute_string("message").value_or("");
  s.t_reached = g.attribute_double("t_reached").value_or(0.0);
  s.frames = g.attribute_int("frames").value_or(0);
  s.accepted_steps = g.attribute_int("accepted_steps").value_or(0);
  s.rejected_steps = g.attribute_int("rejected_steps").value_or(0);
  s.rhs_evaluations = g.attribute_int("rhs_evaluations").value_or(0);
  s.wall_seconds = g.attribute_double("wall_seconds").value_or(0.0);
  s.max_norm_drift = g.attribute_double("max_norm_drift").value_or(0.0);
  return s;
}

std::optional<Checkpoint> RunReader::checkpoint() const {
  const std::string base = kCheckpoint;
  if (!impl_->file.contains(base + "/current")) return std::nullopt;
  const auto current = impl_->file.open_dataset(base + "/current").read_ints();
  if (current.size() != 2 || (current[0] != 0 && current[0] != 1)) return std::nullopt;
  const std::string slot = base + (current[0] == 0 ? "/a" : "/b");
  const auto record = impl_->file.open_dataset(slot + "/record").read_doubles();
  if (record.size() != kRecordSize) throw IoError(impl_->path.string() + ": malformed checkpoint record");
  double wall_seconds = 0.0;
  Checkpoint c = decode_checkpoint_record(record, wall_seconds);
  c.x = impl_->file.open_dataset(slot + "/state").read_doubles();
  for (double v : record)
    if (!std::isfinite(v)) damaged(impl_->path, slot + "/record", "holds non-finite values");
  if (record[6] < 0.0 || record[6] > 9007199254740992.0 || record[2] < 0.0 || record[2] > 9007199254740992.0 ||
      record[3] < 0.0 || record[3] > 9007199254740992.0 || record[4] < 0.0 || record[4] > 9007199254740992.0)
    damaged(impl_->path, slot + "/record", "holds counts out of range");
  if (c.next_sample != static_cast<std::size_t>(current[1]))
    throw IoError(impl_->path.string() + ": checkpoint slot and index disagree");
  return c;
}

}  // namespace normdyn
