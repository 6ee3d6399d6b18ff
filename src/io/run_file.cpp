#include "normdyn/io/run_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <limits>

#include "io/h5.hpp"
#include "io/h5md.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/version.hpp"

namespace normdyn {
namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kTokens = "/particles/tokens";
constexpr const char* kDirection = "/particles/tokens/direction";
constexpr const char* kRadius = "/particles/tokens/radius";
constexpr const char* kCheckpoint = "/checkpoint";
constexpr const char* kFields = "/fields";
// Version of the normdyn-specific parts of the layout (/checkpoint, /summary, /parameters keys).
constexpr std::int64_t kSchemaVersion[2] = {1, 0};
// One checkpoint record: t, dt, accepted, rejected, rhs evaluations, max drift, next sample,
// integration seconds. Counts are exact in float64 up to 2^53.
constexpr std::size_t kRecordSize = 8;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

// "a,b,c" → {"a", "b", "c"}; "" → {}.
std::vector<std::string> split_names(const std::string& joined) {
  std::vector<std::string> names;
  for (std::size_t start = 0; start < joined.size();) {
    const std::size_t comma = std::min(joined.find(',', start), joined.size());
    names.push_back(joined.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

void write_parameters(h5::File& file, const RunConfig& config, const Provenance& provenance) {
  h5::Group p = file.create_group("parameters");
  p.set_attribute("config", to_toml(config));
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

// Empty time-dependent element (H5MD): value [0, inner...], time [0], step [0]; `time` is the
// dimension scale of the first axis, `axis_scales` those of the others.
// Frames are buffered between flushes and appended in one call per dataset: per-frame HDF5 appends
// cost ~20 µs each (nine datasets per frame) and grew HDF5's internal bookkeeping. Buffering does
// not change what survives a crash, since only flushed frames are durable anyway.
struct Element {
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
                       int deflate, const std::vector<const h5::Dataset*>& axis_scales) {
  std::uint64_t per_frame = 1;
  for (auto v : inner) per_frame *= v;
  Element e;
  e.value = file.create_extendable(group + "/value", h5::ElementType::f64,
                                   h5::ChunkedLayout{inner, h5md::chunk_frames(per_frame, deflate > 0), deflate});
  e.time = file.create_extendable(group + "/time", h5::ElementType::f64, h5::ChunkedLayout{{}, 1024, 0});
  e.step = file.create_extendable(group + "/step", h5::ElementType::i64, h5::ChunkedLayout{{}, 1024, 0});
  e.time.make_scale("time");
  e.value.attach_scale(e.time, 0);
  e.step.attach_scale(e.time, 0);
  for (std::size_t axis = 0; axis < axis_scales.size(); ++axis)
    e.value.attach_scale(*axis_scales[axis], static_cast<unsigned>(axis + 1));
  return e;
}

Element open_element(const h5::File& file, const std::string& group) {
  Element e;
  e.value = file.open_dataset(group + "/value");
  e.time = file.open_dataset(group + "/time");
  e.step = file.open_dataset(group + "/step");
  return e;
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
    Element e = create_element(file, base, inner, 1, {});
    {
      h5::Group group = file.open_group(base);
      group.set_attribute("description", spec.description);
      // Comma-separated names of the axes stored per frame (empty: none).
      std::string joined;
      for (const auto& m : moving) joined += (joined.empty() ? "" : ",") + m;
      group.set_attribute("moving_axes", joined);
    }
    e.value.set_attribute("unit", spec.unit);
    e.value.set_attribute("description", spec.description);
    e.value.set_attribute("axes", axis_names);
    e.value.set_dimension_label(0, "time");
    e.time.set_attribute("description", std::string("sample time (continuous depth t)"));
    e.step.set_attribute("description", std::string("accepted integrator steps before the sample"));
    for (std::size_t k = 0; k < spec.axes.size(); ++k) {
      const FieldAxis& a = spec.axes[k];
      const auto axis = static_cast<unsigned>(k + 1);
      e.value.set_dimension_label(axis, a.name);
      if (a.moving) {
        h5::Dataset ds = file.create_extendable(base + "/" + a.name, h5::ElementType::f64,
                                                h5::ChunkedLayout{{a.cells}, h5md::chunk_frames(a.cells, false), 0});
        ds.set_attribute("unit", a.unit);
        ds.set_attribute("description", a.description + " (moves with time: one row of cell centres per frame)");
      } else {
        const std::uint64_t dims[1] = {a.centres.size()};
        h5::Dataset ds = file.create_dataset(base + "/" + a.name, dims, std::span<const double>(a.centres));
        ds.set_attribute("unit", a.unit);
        ds.set_attribute("description", a.description);
        ds.make_scale(a.name);
        e.value.attach_scale(ds, axis);
      }
    }
  }
}

// Everything but the frames, before SWMR mode (which admits no new objects or attributes). Groups
// opened here are closed on return, as SWMR mode requires.
void write_structure(h5::File& file, const RunConfig& config, const Provenance& provenance,
                     const RunFileOptions& options) {
  const auto n = static_cast<std::uint64_t>(config.model.n);
  const auto d = static_cast<std::uint64_t>(config.model.d);
  const int deflate = config.output.compression;

  write_h5md_metadata(file, config);
  write_parameters(file, config, provenance);

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
    create_element(file, kDirection, {n, d}, deflate, {&token_scale, &component_scale});
    create_element(file, kRadius, {n}, deflate, {&token_scale});
    if (!options.masses.empty()) {
      const std::uint64_t m_dims[1] = {options.masses.size()};
      h5::Dataset masses = file.create_dataset(std::string(kTokens) + "/mass", m_dims,
                                               std::span<const double>(options.masses));
      masses.set_attribute("description", std::string("mass of each token (sums to 1); the empirical measure is "
                                                      "sum_j mass_j delta_(theta_j, r_j)"));
      masses.attach_scale(token_scale, 0);
    }
    if (config.output.observables)
      for (const auto& name : frame_observable_names()) {
        Element e = create_element(file, "/observables/" + name, {}, 0, {});
        const auto info = find_observable(name);
        e.value.set_attribute("description", std::string(info->description));
        e.value.set_attribute("unit", std::string(info->unit));
      }
  }
  write_fields(file, options.fields);

  // Two checkpoint slots and the index of the valid one ([-1, 0]: none yet).
  const std::uint64_t state = options.state_size > 0 ? options.state_size : n * d + n;
  const std::uint64_t state_dims[1] = {state}, record_dims[1] = {kRecordSize}, current_dims[1] = {2};
  const std::vector<double> zeros(state, 0.0), zero_record(kRecordSize, 0.0);
  for (const char* slot : {"/a", "/b"}) {
    file.create_dataset(std::string(kCheckpoint) + slot + "/state", state_dims, std::span<const double>(zeros));
    file.create_dataset(std::string(kCheckpoint) + slot + "/record", record_dims, std::span<const double>(zero_record));
  }
  const std::int64_t none[2] = {-1, 0};
  file.create_dataset(std::string(kCheckpoint) + "/current", current_dims, std::span<const std::int64_t>(none));
  file.open_group(kCheckpoint)
      .set_attribute("description",
                     std::string("Integrator state for `normdyn run --resume`: slots a and b hold state "
                                 "(the flat state of the integrated system) and record [t, dt, accepted, "
                                 "rejected, rhs_evaluations, max_norm_drift, next_sample, wall_seconds]; "
                                 "current = [slot, frames]."));
  file.create_group("summary").set_attribute("status", std::string("running"));
}

h5::File open_for_reading(const std::filesystem::path& path) {
  try {
    return h5::File::open(path, h5::OpenMode::read_only);
  } catch (const IoError&) {
    // Being written, or left by a killed writer: SWMR readers can still open it.
    return h5::File::open(path, h5::OpenMode::swmr_read);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// A field's frames and its moving axes (one row of cell centres per frame).
struct FieldStream {
  Element element;
  std::vector<h5::Dataset> moving;
  std::vector<std::vector<double>> pending_moving;
  std::vector<std::string> moving_names;
};

struct RunWriter::Impl {
  std::filesystem::path path;
  std::filesystem::path staging;  // where the file is built until its first durable state
  h5::File file;
  bool particles = false;
  Element direction, radius;
  std::vector<Element> observables;
  std::vector<std::string> field_names;
  std::vector<FieldStream> fields;
  h5::Dataset slot_state[2], slot_record[2], slot_current;
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

  // The file appears under its name only once it is a valid SWMR file; rename() replaces an
  // existing file (--force) atomically, so a run killed during set-up leaves the old file intact
  // and no half-made new one.
  void publish() {
    if (staging.empty()) return;
    std::error_code ec;
    std::filesystem::rename(staging, path, ec);
    if (ec) throw IoError(path.string() + ": cannot move the new run file into place: " + ec.message());
    staging.clear();
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
  // same ones.
  void open_datasets(const RunConfig& config) {
    flush_frames = config.output.flush_frames;
    flush_interval = config.output.flush_seconds;
    particles = file.contains(std::string(kDirection) + "/value");
    with_observables = file.contains("/observables/" + frame_observable_names().front() + "/value");
    field_names.clear();
    if (file.contains(kFields)) field_names = split_names(file.open_group(kFields).attribute_string("order").value_or(""));
    reopen_datasets();
  }

  // In SWMR mode HDF5 1.10 keeps every chunk written through a dataset handle in memory until the
  // handle is closed (measured: 8 bytes per value over 10^5 frames), so the writer closes and
  // reopens its datasets after every flush.
  void reopen_datasets() {
    if (particles) {
      direction = open_element(file, kDirection);
      radius = open_element(file, kRadius);
    }
    observables.clear();
    if (with_observables)
      for (const auto& name : frame_observable_names()) observables.push_back(open_element(file, "/observables/" + name));
    const bool first = fields.empty();
    if (first) fields.resize(field_names.size());
    for (std::size_t i = 0; i < field_names.size(); ++i) {
      const std::string base = std::string(kFields) + "/" + field_names[i];
      FieldStream& f = fields[i];
      std::vector<double> pending_values = std::move(f.element.pending_values);
      std::vector<double> pending_times = std::move(f.element.pending_times);
      std::vector<std::int64_t> pending_steps = std::move(f.element.pending_steps);
      f.element = open_element(file, base);
      f.element.pending_values = std::move(pending_values);
      f.element.pending_times = std::move(pending_times);
      f.element.pending_steps = std::move(pending_steps);
      if (first) {
        h5::Group group = file.open_group(base);
        f.moving_names = split_names(group.attribute_string("moving_axes").value_or(""));
        f.pending_moving.resize(f.moving_names.size());
      }
      f.moving.clear();
      for (const std::string& name : f.moving_names) f.moving.push_back(file.open_dataset(base + "/" + name));
    }
    for (int s = 0; s < 2; ++s) {
      const std::string slot = std::string(kCheckpoint) + (s == 0 ? "/a" : "/b");
      slot_state[s] = file.open_dataset(slot + "/state");
      slot_record[s] = file.open_dataset(slot + "/record");
    }
    slot_current = file.open_dataset(std::string(kCheckpoint) + "/current");
  }

  void store_checkpoint() {
    if (!has_pending) return;
    const int s = next_slot;
    slot_state[s].write(std::span<const double>(pending.x));
    const Counters& c = pending.counters;
    const double record[kRecordSize] = {pending.t,
                                        pending.dt,
                                        static_cast<double>(c.accepted_steps),
                                        static_cast<double>(c.rejected_steps),
                                        static_cast<double>(c.rhs_evaluations),
                                        c.max_constraint_drift,
                                        static_cast<double>(pending.next_sample),
                                        pending_wall_seconds};
    slot_record[s].write(std::span<const double>(record));
    // The slot must be complete on disk before `current` points at it.
    file.flush();
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
    const auto start = Clock::now();
    for (Element* e : elements()) e->write_pending();
    for (FieldStream& f : fields)
      for (std::size_t k = 0; k < f.moving.size(); ++k) {
        if (f.pending_moving[k].empty()) continue;
        const std::uint64_t cells = f.moving[k].shape().at(1);
        f.moving[k].append(std::span<const double>(f.pending_moving[k]), f.pending_moving[k].size() / cells);
        f.pending_moving[k].clear();
      }
    stats.write_seconds += seconds_since(start);
  }

  void flush() {
    write_pending();
    const auto start = Clock::now();
    file.flush();  // frames first: the checkpoint must never point past durable frames
    store_checkpoint();
    file.flush();
    reopen_datasets();
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
  if (!options.overwrite && std::filesystem::exists(path, ec))
    throw InputError("output.path", path.string() + " exists; pass --force to overwrite it");
  const std::filesystem::path parent = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  if (!std::filesystem::is_directory(parent, ec))
    throw IoError(path.string() + ": directory " + parent.string() + " does not exist");

  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->staging = path;
  impl->staging += ".normdyn-" + std::to_string(::getpid()) + ".tmp";
  impl->file = h5::File::create(impl->staging, h5::CreateMode::truncate);
  try {
    write_structure(impl->file, config, provenance, options);
    impl->open_datasets(config);
    impl->file.start_swmr_write();
    impl->file.flush();
    impl->publish();
  } catch (...) {
    impl->file.close();
    std::filesystem::remove(impl->staging, ec);
    throw;
  }
  impl->last_flush = Clock::now();
  impl_ = std::move(impl);
}



void require_run_file(const std::filesystem::path& path, const std::string& flag) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(flag, path.string() + ": no such file");
  if (!h5::File::is_hdf5(path)) throw InputError(flag, path.string() + ": not an HDF5 file");
  const h5::File f = open_for_reading(path);
  if ((!f.contains(std::string(kDirection) + "/value") && !f.contains(kFields)) || !f.contains("parameters"))
    throw InputError(flag, path.string() + ": not a normdyn run file");
}

RunWriter RunWriter::reopen_for_resume(const std::filesystem::path& path, const Provenance& provenance,
                                       ResumeState& state) {
  require_run_file(path, "--resume");
  // Inspect first through a reader (works on files left by a killed writer).
  {
    const RunReader reader(path);
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
  }
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->file = h5::File::open(path, h5::OpenMode::read_write_recover);
  // The wall seconds of earlier sessions are in the valid slot's record.
  if (state.checkpoint) {
    const auto current = impl->file.open_dataset(std::string(kCheckpoint) + "/current").read_ints();
    const auto record = impl->file.open_dataset(std::string(kCheckpoint) + (current[0] == 0 ? "/a" : "/b") + "/record")
                            .read_doubles();
    state.wall_seconds = record[7];
    impl->next_slot = 1 - static_cast<int>(current[0]);
  }
  impl->open_datasets(state.config);
  // Frames after the checkpoint are recomputed: drop them (they may be partial).
  const auto frames = static_cast<std::uint64_t>(state.checkpoint ? state.checkpoint->next_sample : 0);
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
                              " (previous session " + (state.crashed ? "killed" : "interrupted") + ")";
    const std::string log = parameters.attribute_string("resume_log").value_or("");
    parameters.set_attribute("resume_log", log.empty() ? entry : log + "\n" + entry);
    impl->file.open_group("summary").set_attribute("status", std::string("running"));
  }  // groups closed: SWMR mode admits only open datasets
  impl->file.start_swmr_write();
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
    if (f.moving.empty()) continue;
    const std::span<const double> centres = i < moving_centres.size() ? moving_centres[i] : std::span<const double>();
    std::size_t offset = 0;
    for (std::size_t k = 0; k < f.moving.size(); ++k) {
      const std::size_t cells = f.moving[k].shape().at(1);
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

void RunWriter::finish(const RunSummary& s) {
  Impl& w = *impl_;
  w.flush();
  // Attributes cannot be created in SWMR mode: close, reopen normally, write the summary.
  for (Element* e : w.elements()) *e = Element{};
  w.fields.clear();
  for (int i = 0; i < 2; ++i) {
    w.slot_state[i] = h5::Dataset();
    w.slot_record[i] = h5::Dataset();
  }
  w.slot_current = h5::Dataset();
  w.file.close();
  w.file = h5::File::open(w.path, h5::OpenMode::read_write);
  h5::Group g = w.file.open_group("summary");
  g.set_attribute("status", std::string(to_string(s.status)));
  g.set_attribute("message", s.message);
  g.set_attribute("t_reached", s.t_reached);
  g.set_attribute("frames", s.frames);
  g.set_attribute("accepted_steps", s.accepted_steps);
  g.set_attribute("rejected_steps", s.rejected_steps);
  g.set_attribute("rhs_evaluations", s.rhs_evaluations);
  g.set_attribute("wall_seconds", s.wall_seconds);
  g.set_attribute("max_norm_drift", s.max_norm_drift);
  g.set_attribute("flushes", w.stats.flushes);
  g.set_attribute("flush_seconds", w.stats.flush_seconds);
  for (const auto& [name, value] : s.extra) g.set_attribute(name, value);
  w.file.close();
}

const std::filesystem::path& RunWriter::path() const { return impl_->path; }
std::int64_t RunWriter::frames() const { return impl_->frames; }
const WriterStats& RunWriter::stats() const { return impl_->stats; }

// ---------------------------------------------------------------------------------------------
struct RunReader::Impl {
  std::filesystem::path path;
  h5::File file;
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

RunReader::RunReader(const std::filesystem::path& path)
    : impl_(std::make_unique<Impl>(Impl{path, open_for_reading(path), {}, {}})) {
  if (!impl_->file.contains(std::string(kDirection) + "/value") && !impl_->file.contains(kFields))
    throw IoError(path.string() + ": not a normdyn run file (no " + kDirection + "/value or " + kFields + ")");
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

RunConfig RunReader::config() const { return parse_config(config_toml(), impl_->path.string() + ":/parameters/config"); }

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
  return groups.empty() ? 0 : m;
}
std::vector<double> RunReader::times() const {
  auto t = impl_->file.open_dataset(frame_index_group(impl_->file) + "/time").read_doubles();
  t.resize(frames());
  return t;
}
std::vector<std::int64_t> RunReader::steps() const {
  auto s = impl_->file.open_dataset(frame_index_group(impl_->file) + "/step").read_ints();
  s.resize(frames());
  return s;
}

Tokens RunReader::frame(std::size_t index) const {
  const auto shape = impl_->direction_values().shape();
  const auto n_ = static_cast<Index>(shape.at(1)), d_ = static_cast<Index>(shape.at(2));
  Tokens t{RowMatrix(n_, d_), Vector(n_)};
  const auto theta = impl_->direction_values().read_frames(index, 1);
  const auto r = impl_->radius_values().read_frames(index, 1);
  std::copy(theta.begin(), theta.end(), t.theta.data());
  std::copy(r.begin(), r.end(), t.r.data());
  return t;
}

std::vector<double> RunReader::observable(const std::string& name) const {
  const std::string p = "/observables/" + name + "/value";
  if (!impl_->file.contains(p)) return {};
  return impl_->file.open_dataset(p).read_doubles();
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
  Checkpoint c;
  c.x = impl_->file.open_dataset(slot + "/state").read_doubles();
  c.t = record[0];
  c.dt = record[1];
  c.counters.accepted_steps = static_cast<std::int64_t>(record[2]);
  c.counters.rejected_steps = static_cast<std::int64_t>(record[3]);
  c.counters.rhs_evaluations = static_cast<std::int64_t>(record[4]);
  c.counters.max_constraint_drift = record[5];
  c.next_sample = static_cast<std::size_t>(record[6]);
  if (c.next_sample != static_cast<std::size_t>(current[1]))
    throw IoError(impl_->path.string() + ": checkpoint slot and index disagree");
  return c;
}

}  // namespace normdyn
