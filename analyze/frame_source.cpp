#include "normdyn/analyze/frame_source.hpp"

#include <cmath>

#include "normdyn/errors.hpp"
#include "normdyn/io/inputs.hpp"
#include "normdyn/experiment/recorder.hpp"
#include "normdyn/version.hpp"

namespace normdyn {

// ---- RunFileSource

RunFileSource::RunFileSource(const std::filesystem::path& path)
    : path_(path), reader_(path), config_(reader_.config()), particles_(reader_.has_particles()) {
  frames_ = std::min({reader_.frames(), reader_.times().size(), reader_.steps().size()});
  // Nothing is analyzed from frames whose bytes changed since they were written.
  (void)reader_.verify_frames(frames_);
}

std::vector<double> RunFileSource::times() const {
  auto t = reader_.times();
  t.resize(std::min(t.size(), frames_));
  return t;
}

std::vector<std::int64_t> RunFileSource::steps() const {
  auto s = reader_.steps();
  s.resize(std::min(s.size(), frames_));
  return s;
}

Index RunFileSource::n() const { return particles_ ? reader_.n() : 0; }
Index RunFileSource::d() const { return particles_ ? reader_.d() : 0; }
Tokens RunFileSource::frame(std::size_t index) const { return reader_.frame(index); }

std::vector<double> RunFileSource::field_frame(const std::string& name, std::size_t index) const {
  return reader_.field_frame(name, index);
}

// ---- MemorySource

namespace {

void require(bool ok, const std::string& what, const std::string& problem) {
  if (!ok) throw InputError(what, problem);
}

}  // namespace

MemorySource::MemorySource(RunConfig config, std::span<const double> time, std::span<const std::int64_t> step,
                           const Particles& particles, std::optional<RunSummary> summary, std::string revision,
                           const std::string& what)
    : config_(std::move(config)),
      time_(time),
      step_(step),
      particles_(particles),
      summary_(std::move(summary)),
      revision_(std::move(revision)) {
  check_times(what);
  const std::size_t frames = time_.size();
  const auto n = static_cast<std::size_t>(particles.n), d = static_cast<std::size_t>(particles.d);
  require(particles.n > 0 && particles.d > 0, what, "a particle run needs n > 0 tokens in d > 0 dimensions");
  require(particles.direction.size() == frames * n * d, what,
          "direction holds " + std::to_string(particles.direction.size()) +
              " values, expected frames x n x d = " + std::to_string(frames * n * d));
  require(particles.radius.size() == frames * n, what,
          "radius holds " + std::to_string(particles.radius.size()) +
              " values, expected frames x n = " + std::to_string(frames * n));
}

MemorySource::MemorySource(RunConfig config, std::span<const double> time, std::span<const std::int64_t> step,
                           std::map<std::string, Field> fields, std::optional<RunSummary> summary, std::string revision,
                           const std::string& what)
    : config_(std::move(config)),
      time_(time),
      step_(step),
      fields_(std::move(fields)),
      summary_(std::move(summary)),
      revision_(std::move(revision)) {
  check_times(what);
  require(!fields_.empty(), what, "a mean-field run needs its fields (density)");
  for (const auto& [name, f] : fields_)
    require(f.cells > 0 && f.values.size() == time_.size() * f.cells, what,
            "field " + name + " holds " + std::to_string(f.values.size()) + " values, expected frames x " +
                std::to_string(f.cells));
}

std::optional<FeedForward> MemorySource::feedforward() const { return read_feedforward(config_); }

void MemorySource::check_times(const std::string& what) const {
  require(time_.size() == step_.size(), what,
          std::to_string(time_.size()) + " times but " + std::to_string(step_.size()) + " steps");
  for (std::size_t i = 0; i < time_.size(); ++i)
    require(std::isfinite(time_[i]) && (i == 0 || time_[i] > time_[i - 1]), what,
            "frame " + std::to_string(i) + " has t = " + std::to_string(time_[i]) +
                ": sample times are finite and increase");
}

MemorySource MemorySource::view(const MemoryRecorder& r) {
  const RunConfig config = parse_config(r.config_toml, "the recorded configuration");
  const std::size_t frames = r.frames();
  const std::span<const double> time(r.times.data(), frames);
  const std::span<const std::int64_t> step(r.steps.data(), frames);
  const std::string rev(normdyn::revision());
  if (r.has_particles) {
    const auto n = static_cast<std::size_t>(r.n), d = static_cast<std::size_t>(r.d);
    return MemorySource(config, time, step,
                        Particles{std::span<const double>(r.direction.data(), frames * n * d),
                                  std::span<const double>(r.radius.data(), frames * n), r.n, r.d},
                        r.summary, rev);
  }
  std::map<std::string, Field> fields;
  for (const auto& f : r.fields) {
    std::size_t cells = 1;
    for (const FieldAxis& a : f.spec.axes) cells *= a.cells;
    fields[f.spec.name] = Field{std::span<const double>(f.values.data(), frames * cells), cells};
  }
  return MemorySource(config, time, step, std::move(fields), r.summary, rev);
}

Tokens MemorySource::frame(std::size_t index) const {
  if (!particles_) throw IoError("frame " + std::to_string(index) + ": a mean-field run has no particle frames");
  if (index >= frames())
    throw IoError("frame " + std::to_string(index) + " out of range (" + std::to_string(frames()) + " frames)");
  const Index n = particles_->n, d = particles_->d;
  const auto offset = index * static_cast<std::size_t>(n * d);
  Tokens t{RowMatrix(Eigen::Map<const RowMatrix>(particles_->direction.data() + offset, n, d)),
           Vector(Eigen::Map<const Vector>(particles_->radius.data() + index * static_cast<std::size_t>(n), n))};
  // As the run-file reader does: frames with non-finite values were not written by a run.
  if (!t.theta.allFinite() || !t.r.allFinite())
    throw IoError("frame " + std::to_string(index) + " has non-finite directions or radii");
  return t;
}

std::vector<std::string> MemorySource::field_names() const {
  std::vector<std::string> names;
  for (const auto& [name, f] : fields_) names.push_back(name);
  return names;
}

std::vector<double> MemorySource::field_frame(const std::string& name, std::size_t index) const {
  const auto it = fields_.find(name);
  if (it == fields_.end()) throw IoError("the run has no field " + name);
  if (index >= frames())
    throw IoError("frame " + std::to_string(index) + " out of range (" + std::to_string(frames()) + " frames)");
  const auto part = it->second.values.subspan(index * it->second.cells, it->second.cells);
  return {part.begin(), part.end()};
}

}  // namespace normdyn
