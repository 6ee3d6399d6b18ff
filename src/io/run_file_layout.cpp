// The run file's layout: the structure written when a run file is created (parameters, H5MD
// metadata, the frame datasets, fields, checksums), and its checks when a file is opened (shapes,
// links, the stored configuration and given arrays).
#include "io/run_file_internal.hpp"

namespace normdyn::run_file_internal {

std::string host_name() {
  char buffer[256] = {};
  if (gethostname(buffer, sizeof buffer - 1) != 0) return "unknown";
  return buffer;
}

// "a,b,c" → {"a", "b", "c"} (separator ','); "" → {}.
std::vector<std::string> split_names(const std::string& joined, char separator) {
  std::vector<std::string> names;
  for (std::size_t start = 0; start < joined.size();) {
    const std::size_t end = std::min(joined.find(separator, start), joined.size());
    names.push_back(joined.substr(start, end - start));
    start = end + 1;
  }
  return names;
}

void write_given(h5::Group& parameters, const RunConfig& config) {
  if (const auto& qkv = config.model.given_qkv) {
    const std::vector<double> values = given_qkv_values(config.model);
    const std::span<const double> all(values);
    const std::size_t third = values.size() / 3;
    const std::uint64_t dims[4] = {qkv->size(), static_cast<std::uint64_t>(config.model.heads),
                                   static_cast<std::uint64_t>(config.model.d),
                                   static_cast<std::uint64_t>(config.model.d)};
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
          if constexpr (std::is_same_v<T, bool>)
            section.set_attribute(name, static_cast<std::int64_t>(v));
          else if constexpr (std::is_same_v<T, std::vector<double>>)
            section.set_attribute(name, std::span<const double>(v));
          else
            section.set_attribute(name, v);
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
    g.create_dataset("omega", omega_dims,
                     std::span<const double>(f->omega.data(), static_cast<std::size_t>(f->omega.size())));
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

Element create_element(h5::File& file, const std::string& group, const std::vector<std::uint64_t>& inner, int deflate,
                       const std::vector<h5md::Axis>& axes, const std::string& unit) {
  std::uint64_t per_frame = 1;
  for (auto v : inner) per_frame *= v;
  h5md::ElementDatasets created =
      h5md::create_element(file, group, h5::ElementType::f64,
                           h5::ChunkedLayout{inner, h5md::chunk_frames(per_frame, deflate > 0), deflate}, axes, unit);
  Element e;
  e.group = group;
  e.value = std::move(created.value);
  e.time = std::move(created.time);
  e.step = std::move(created.step);
  return e;
}

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
    h5::Dataset token_scale =
        file.create_dataset(std::string(kTokens) + "/token", n_dims, std::span<const std::int64_t>(token_index));
    h5::Dataset component_scale = file.create_dataset(std::string(kTokens) + "/component", d_dims,
                                                      std::span<const std::int64_t>(component_index));
    token_scale.make_scale("token");
    component_scale.make_scale("component");
    keep_element(kept, kDirection,
                 create_element(file, kDirection, {n, d}, deflate,
                                {{"token", &token_scale}, {"component", &component_scale}}, h5md::kDimensionless));
    keep_element(kept, kRadius,
                 create_element(file, kRadius, {n}, deflate, {{"token", &token_scale}}, h5md::kDimensionless));
    if (!options.masses.empty()) {
      const std::uint64_t m_dims[1] = {options.masses.size()};
      h5::Dataset masses =
          file.create_dataset(std::string(kTokens) + "/mass", m_dims, std::span<const double>(options.masses));
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
h5::File open_for_reading(const std::filesystem::path& path, bool lock_is_ours) {
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
        throw IoError(path.string() +
                      ": its last write failed (the file ends before the end HDF5 recorded: a full "
                      "disk or a file-size limit, or a damaged, truncated copy); no process is writing it: normdyn run "
                      "--resume " +
                      path.string() + " recovers it if the rest is intact");
      if (why == Recovery::killed_plain_session)
        throw IoError(path.string() +
                      ": left by a writer killed while it wrote outside SWMR mode (its summary, or the "
                      "start of a resume); no process is writing it: normdyn run --resume " +
                      path.string() + " recovers it, unless the session had begun its final writes");
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
    damaged(path, dataset,
            "holds " + std::to_string(frames) + " frames, more than the " + std::to_string(max_frames) +
                " samples of its configuration (output.samples, output.times)");
}

void expect_shape(const std::filesystem::path& path, const h5::File& file, const std::string& dataset,
                  std::vector<std::int64_t> expected, h5::ElementType type, std::uint64_t max_frames) {
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
    damaged(path, dataset,
            std::string("has elements of the wrong type (expected ") +
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
    // angle, times meanfield.radial_grid in the radius or meanfield.cursor_grid in the cursor).
    std::uint64_t max_cells = static_cast<std::uint64_t>(std::max<std::int64_t>(config.meanfield.grid, 1)) *
                              static_cast<std::uint64_t>(std::max(
                                  {config.meanfield.radial_grid, config.meanfield.cursor_grid, std::int64_t{1}}));
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
        damaged(path, base + "/value",
                "has frames of shape " + shape_text({shape.begin() + 1, shape.end()}) +
                    ", more cells than the grid of its configuration (meanfield.grid, "
                    "meanfield.radial_grid, meanfield.cursor_grid)");
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
      damaged(path, "/h5md/modules/normdyn@scheme",
              "says \"" + *scheme + "\" but /parameters/config says \"" + std::string(scheme_key(config.model.scheme)) +
                  "\"");
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
        damaged(path, "/parameters/qkv",
                "was edited after the run was written (its values no longer match model.qkv_digest)");
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
      give_tokens(config, rows, static_cast<Index>(shape[0]), static_cast<Index>(shape[1]),
                  "/parameters/initial_tokens");
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
    damaged(path, "/parameters",
            std::string("holds given arrays that do not fit its configuration (") + e.what() + ")");
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

}  // namespace normdyn::run_file_internal
