#include "normdyn/io/run_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>

#include "io/h5.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/version.hpp"

namespace normdyn {
namespace {

constexpr const char* kDirection = "/particles/tokens/direction";
constexpr const char* kRadius = "/particles/tokens/radius";

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

// Frames per chunk: about 256 KiB of values per chunk, at least one frame.
std::uint64_t chunk_frames(std::uint64_t values_per_frame) {
  constexpr std::uint64_t kChunkValues = 32768;
  return std::clamp<std::uint64_t>(kChunkValues / std::max<std::uint64_t>(values_per_frame, 1), 1, 4096);
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
  p.set_attribute("command_line", provenance.command_line);
  p.set_attribute("host", host_name());
  p.set_attribute("created_utc", utc_now());
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

}  // namespace

// ---------------------------------------------------------------------------------------------
struct RunWriter::Impl {
  std::filesystem::path path;
  h5::File file;
  h5::Dataset direction, direction_time, direction_step;
  h5::Dataset radius, radius_time, radius_step;
  Index n = 0, d = 0;
  std::int64_t frames = 0;
  // [meanfield]
  struct Field {
    h5::Dataset value, time, step;
    std::vector<h5::Dataset> moving_axes;
    std::vector<std::size_t> moving_cells;
    std::size_t values_per_frame = 0;
    std::int64_t frames = 0;
  };
  bool particles = true;
  int deflate_level = 1;
  std::vector<Field> fields;
};

RunWriter::RunWriter(const std::filesystem::path& path, const RunConfig& config, const Provenance& provenance,
                     const RunFileOptions& options) {
  std::error_code ec;
  if (!options.overwrite && std::filesystem::exists(path, ec))
    throw InputError("output.path", path.string() + " exists; pass --force to overwrite it");
  if (options.overwrite) std::filesystem::remove(path, ec);

  h5::File file = h5::File::create(path, h5::CreateMode::exclusive);
  const Index n = config.model.n;
  const Index d = config.model.d;

  h5::Group h5md = file.create_group("h5md");
  const std::int64_t h5md_version[2] = {1, 1};
  h5md.set_attribute("version", std::span<const std::int64_t>(h5md_version));
  h5::Group author = h5md.create_group("author");
  author.set_attribute("name", std::string("normdyn user"));
  h5::Group creator = h5md.create_group("creator");
  creator.set_attribute("name", std::string("normdyn"));
  creator.set_attribute("version", std::string(version()) + " (" + std::string(revision()) + ")");

  if (options.particles) {
    h5::Group tokens = file.create_group("particles/tokens");
    h5::Group box = tokens.create_group("box");
    box.set_attribute("dimension", static_cast<std::int64_t>(d));
    box.set_attribute("boundary", std::vector<std::string>(static_cast<std::size_t>(d), "none"));
  }

  const auto nd = static_cast<std::uint64_t>(n * d);
  const h5::ChunkedLayout direction_layout{{static_cast<std::uint64_t>(n), static_cast<std::uint64_t>(d)},
                                           chunk_frames(nd), options.deflate_level};
  const h5::ChunkedLayout radius_layout{{static_cast<std::uint64_t>(n)}, chunk_frames(static_cast<std::uint64_t>(n)),
                                        options.deflate_level};
  const h5::ChunkedLayout scalar_layout{{}, 1024, 0};

  write_parameters(file, config, provenance);
  h5::Group summary = file.create_group("summary");
  summary.set_attribute("status", std::string("running"));

  impl_ = std::make_unique<Impl>();
  impl_->path = path;
  impl_->n = n;
  impl_->d = d;
  impl_->particles = options.particles;
  impl_->deflate_level = options.deflate_level;
  if (!options.particles) {
    impl_->file = std::move(file);
    return;
  }
  impl_->direction = file.create_extendable(std::string(kDirection) + "/value", h5::ElementType::f64, direction_layout);
  impl_->direction_time = file.create_extendable(std::string(kDirection) + "/time", h5::ElementType::f64, scalar_layout);
  impl_->direction_step = file.create_extendable(std::string(kDirection) + "/step", h5::ElementType::i64, scalar_layout);
  impl_->radius = file.create_extendable(std::string(kRadius) + "/value", h5::ElementType::f64, radius_layout);
  impl_->radius_time = file.create_extendable(std::string(kRadius) + "/time", h5::ElementType::f64, scalar_layout);
  impl_->radius_step = file.create_extendable(std::string(kRadius) + "/step", h5::ElementType::i64, scalar_layout);
  impl_->file = std::move(file);
}

RunWriter::~RunWriter() = default;
RunWriter::RunWriter(RunWriter&&) noexcept = default;
RunWriter& RunWriter::operator=(RunWriter&&) noexcept = default;

void RunWriter::append_frame(double t, std::int64_t step, const Tokens& tokens) {
  Impl& w = *impl_;
  if (tokens.n() != w.n || tokens.d() != w.d) throw IoError(w.path.string() + ": frame has the wrong shape");
  w.direction.append(std::span<const double>(tokens.theta.data(), static_cast<std::size_t>(tokens.theta.size())));
  w.radius.append(std::span<const double>(tokens.r.data(), static_cast<std::size_t>(tokens.r.size())));
  const double time[1] = {t};
  const std::int64_t steps[1] = {step};
  w.direction_time.append(std::span<const double>(time));
  w.direction_step.append(std::span<const std::int64_t>(steps));
  w.radius_time.append(std::span<const double>(time));
  w.radius_step.append(std::span<const std::int64_t>(steps));
  ++w.frames;
}

void RunWriter::write_summary(const RunSummary& s) {
  h5::Group g = impl_->file.open_group("summary");
  g.set_attribute("status", std::string(to_string(s.status)));
  g.set_attribute("message", s.message);
  g.set_attribute("t_reached", s.t_reached);
  g.set_attribute("frames", s.frames);
  g.set_attribute("accepted_steps", s.accepted_steps);
  g.set_attribute("rejected_steps", s.rejected_steps);
  g.set_attribute("rhs_evaluations", s.rhs_evaluations);
  g.set_attribute("wall_seconds", s.wall_seconds);
  g.set_attribute("max_norm_drift", s.max_norm_drift);
}

void RunWriter::flush() { impl_->file.flush(); }

// ---- [meanfield] masses and fields ------------------------------------------------------------
void RunWriter::write_masses(std::span<const double> masses) {
  Impl& w = *impl_;
  const std::uint64_t dims[1] = {masses.size()};
  h5::Dataset ds = w.file.create_dataset("/particles/tokens/mass", std::span<const std::uint64_t>(dims), masses);
  ds.set_attribute("description", std::string("mass of each token (sums to 1); the empirical measure is "
                                              "sum_j mass_j delta_(theta_j, r_j)"));
}

std::size_t RunWriter::add_field(const FieldSpec& spec) {
  Impl& w = *impl_;
  const std::string base = "/fields/" + spec.name;
  h5::Group group = w.file.require_group(base);
  group.set_attribute("description", spec.description);
  std::vector<std::uint64_t> inner;
  std::vector<std::string> axis_names{"time"};
  Impl::Field field;
  field.values_per_frame = 1;
  for (const FieldAxis& a : spec.axes) {
    inner.push_back(a.cells);
    axis_names.push_back(a.name);
    field.values_per_frame *= a.cells;
  }
  field.value = w.file.create_extendable(base + "/value", h5::ElementType::f64,
                                         h5::ChunkedLayout{inner, chunk_frames(field.values_per_frame), w.deflate_level});
  field.value.set_attribute("unit", spec.unit);
  field.value.set_attribute("description", spec.description);
  field.value.set_attribute("axes", axis_names);
  const h5::ChunkedLayout scalar_layout{{}, 1024, 0};
  field.time = w.file.create_extendable(base + "/time", h5::ElementType::f64, scalar_layout);
  field.time.set_attribute("description", std::string("sample time (continuous depth t)"));
  field.step = w.file.create_extendable(base + "/step", h5::ElementType::i64, scalar_layout);
  field.step.set_attribute("description", std::string("accepted integrator steps before the sample"));
  field.time.make_scale("time");
  field.value.attach_scale(field.time, 0);
  field.value.set_dimension_label(0, "time");
  for (std::size_t k = 0; k < spec.axes.size(); ++k) {
    const FieldAxis& a = spec.axes[k];
    const auto axis = static_cast<unsigned>(k + 1);
    field.value.set_dimension_label(axis, a.name);
    if (a.moving) {
      h5::Dataset ds = w.file.create_extendable(base + "/" + a.name, h5::ElementType::f64,
                                                h5::ChunkedLayout{{a.cells}, chunk_frames(a.cells), 0});
      ds.set_attribute("unit", a.unit);
      ds.set_attribute("description", a.description + " (moves with time: one row of cell centres per frame)");
      field.moving_axes.push_back(std::move(ds));
      field.moving_cells.push_back(a.cells);
    } else {
      const std::uint64_t dims[1] = {a.centres.size()};
      h5::Dataset ds = w.file.create_dataset(base + "/" + a.name, std::span<const std::uint64_t>(dims),
                                             std::span<const double>(a.centres));
      ds.set_attribute("unit", a.unit);
      ds.set_attribute("description", a.description);
      ds.make_scale(a.name);
      field.value.attach_scale(ds, axis);
    }
  }
  w.fields.push_back(std::move(field));
  return w.fields.size() - 1;
}

void RunWriter::append_field_frame(std::size_t index, double t, std::int64_t step, std::span<const double> values,
                                   std::span<const double> moving_centres) {
  Impl& w = *impl_;
  Impl::Field& f = w.fields.at(index);
  if (values.size() != f.values_per_frame) throw IoError(w.path.string() + ": field frame has the wrong size");
  f.value.append(values);
  const double time[1] = {t};
  const std::int64_t steps[1] = {step};
  f.time.append(std::span<const double>(time));
  f.step.append(std::span<const std::int64_t>(steps));
  std::size_t offset = 0;
  for (std::size_t k = 0; k < f.moving_axes.size(); ++k) {
    f.moving_axes[k].append(moving_centres.subspan(offset, f.moving_cells[k]));
    offset += f.moving_cells[k];
  }
  ++f.frames;
  if (!w.particles && index == 0) ++w.frames;
}

void RunWriter::set_summary_attribute(const std::string& name, double value) {
  impl_->file.open_group("summary").set_attribute(name, value);
}

void RunWriter::close() {
  if (!impl_) return;
  // Datasets first: HDF5 keeps a file open while any of its objects is.
  for (h5::Dataset* ds : {&impl_->direction, &impl_->direction_time, &impl_->direction_step, &impl_->radius,
                          &impl_->radius_time, &impl_->radius_step})
    *ds = h5::Dataset();
  impl_->fields.clear();  // [meanfield]
  impl_->file.close();
}

const std::filesystem::path& RunWriter::path() const { return impl_->path; }
std::int64_t RunWriter::frames() const { return impl_->frames; }

// ---------------------------------------------------------------------------------------------
struct RunReader::Impl {
  std::filesystem::path path;
  h5::File file;
};

RunReader::RunReader(const std::filesystem::path& path)
    : impl_(std::make_unique<Impl>(Impl{path, h5::File::open(path, h5::OpenMode::read_only)})) {
  if (!impl_->file.contains(std::string(kDirection) + "/value"))
    throw IoError(path.string() + ": not a normdyn run file (no " + kDirection + "/value)");
}

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
std::size_t RunReader::frames() const {
  return impl_->file.open_dataset(std::string(kDirection) + "/value").shape().at(0);
}
std::vector<double> RunReader::times() const {
  return impl_->file.open_dataset(std::string(kDirection) + "/time").read_doubles();
}
std::vector<std::int64_t> RunReader::steps() const {
  return impl_->file.open_dataset(std::string(kDirection) + "/step").read_ints();
}

Tokens RunReader::frame(std::size_t index) const {
  const Index n_ = n(), d_ = d();
  Tokens t{RowMatrix(n_, d_), Vector(n_)};
  const auto theta = impl_->file.open_dataset(std::string(kDirection) + "/value").read_frames(index, 1);
  const auto r = impl_->file.open_dataset(std::string(kRadius) + "/value").read_frames(index, 1);
  std::copy(theta.begin(), theta.end(), t.theta.data());
  std::copy(r.begin(), r.end(), t.r.data());
  return t;
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

}  // namespace normdyn
