#include "normdyn/experiment/recorder.hpp"

#include <system_error>
#include <string>

#include "normdyn/errors.hpp"

namespace normdyn {

// ---- RunFileRecorder

RunFileRecorder::RunFileRecorder(std::filesystem::path path, bool overwrite, std::string force_name)
    : path_(std::move(path)), overwrite_(overwrite), force_name_(std::move(force_name)) {}

RunFileRecorder::RunFileRecorder(std::filesystem::path path, RunWriter writer)
    : path_(std::move(path)), writer_(std::move(writer)) {}

RunFileRecorder::~RunFileRecorder() = default;

std::unique_ptr<RunFileRecorder> RunFileRecorder::reopen(const std::filesystem::path& path,
                                                         const Provenance& provenance, ResumeState& state) {
  try {
    return std::unique_ptr<RunFileRecorder>(
        new RunFileRecorder(path, RunWriter::reopen_for_resume(path, provenance, state)));
  } catch (const IoError& e) {
    // HDF5's errors name the object ("/summary"), not the file being resumed.
    const std::string what = e.what();
    if (what.rfind(path.string() + ":", 0) == 0) throw;
    throw IoError(path.string() + ": cannot resume it: " + what);
  }
}

void RunFileRecorder::begin(const RunLayout& layout) {
  if (writer_) return;  // reopened for a resume
  RunFileOptions options = layout.contents;
  options.overwrite = overwrite_;
  options.force_name = force_name_;
  writer_.emplace(path_, *layout.config, layout.provenance, options);
}

void RunFileRecorder::particle_frame(double t, std::int64_t step, const Tokens& tokens,
                                     std::span<const double> observables, const CheckpointView& checkpoint,
                                     double integration_seconds) {
  writer_->append_frame(t, step, tokens, observables, checkpoint, integration_seconds);
}

void RunFileRecorder::field_frame(double t, std::int64_t step, const std::vector<std::span<const double>>& values,
                                  const std::vector<std::span<const double>>& moving_centres,
                                  const CheckpointView& checkpoint, double integration_seconds) {
  writer_->append_field_frame(t, step, values, moving_centres, checkpoint, integration_seconds);
}

void RunFileRecorder::flush_if_due() { writer_->flush_if_due(); }

void RunFileRecorder::end(const RunSummary& summary) {
  RunSummary s = summary;
  s.frames = writer_->frames();
  writer_->finish(s);
}

void RunFileRecorder::abandon() {
  if (!writer_) return;
  writer_.reset();
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

std::int64_t RunFileRecorder::frames() const { return writer_ ? writer_->frames() : 0; }

// ---- MemoryRecorder

void MemoryRecorder::begin(const RunLayout& layout) {
  const RunConfig& c = *layout.config;
  config_toml = to_toml(c);
  provenance = layout.provenance;
  has_particles = layout.contents.particles;
  const std::size_t frames = layout.sample_times.size();
  times.reserve(frames);
  steps.reserve(frames);
  if (has_particles) {
    n = c.model.n;
    d = c.model.d;
    direction.reserve(frames * static_cast<std::size_t>(n * d));
    radius.reserve(frames * static_cast<std::size_t>(n));
    mass = layout.contents.masses;
    if (c.output.observables) {
      observable_names = frame_observable_names();
      observables.assign(observable_names.size(), {});
      for (auto& series : observables) series.reserve(frames);
    }
  }
  fields.clear();
  for (const FieldSpec& spec : layout.contents.fields) {
    Field f;
    f.spec = spec;
    std::size_t cells = 1;
    for (const FieldAxis& axis : spec.axes) {
      cells *= axis.cells;
      if (axis.moving) f.moving.emplace_back().reserve(frames * axis.cells);
    }
    f.values.reserve(frames * cells);
    fields.push_back(std::move(f));
  }
}

void MemoryRecorder::particle_frame(double t, std::int64_t step, const Tokens& tokens, std::span<const double> values,
                                    const CheckpointView&, double) {
  times.push_back(t);
  steps.push_back(step);
  direction.insert(direction.end(), tokens.theta.data(), tokens.theta.data() + tokens.theta.size());
  radius.insert(radius.end(), tokens.r.data(), tokens.r.data() + tokens.r.size());
  for (std::size_t k = 0; k < observables.size() && k < values.size(); ++k) observables[k].push_back(values[k]);
}

void MemoryRecorder::field_frame(double t, std::int64_t step, const std::vector<std::span<const double>>& values,
                                 const std::vector<std::span<const double>>& moving_centres, const CheckpointView&,
                                 double) {
  times.push_back(t);
  steps.push_back(step);
  for (std::size_t k = 0; k < fields.size(); ++k) {
    Field& f = fields[k];
    f.values.insert(f.values.end(), values[k].begin(), values[k].end());
    if (f.moving.empty() || k >= moving_centres.size()) continue;
    // The moving axes' centres of this field, concatenated in axis order.
    std::size_t offset = 0, m = 0;
    for (const FieldAxis& axis : f.spec.axes) {
      if (!axis.moving) continue;
      const auto part = moving_centres[k].subspan(offset, axis.cells);
      f.moving[m].insert(f.moving[m].end(), part.begin(), part.end());
      offset += axis.cells;
      ++m;
    }
  }
}

void MemoryRecorder::end(const RunSummary& s) {
  summary = s;
  summary->frames = static_cast<std::int64_t>(times.size());
}

// ---- RecorderFan

void RecorderFan::begin(const RunLayout& layout) {
  for (Recorder* r : recorders_) r->begin(layout);
}
void RecorderFan::particle_frame(double t, std::int64_t step, const Tokens& tokens, std::span<const double> observables,
                                 const CheckpointView& checkpoint, double integration_seconds) {
  for (Recorder* r : recorders_) r->particle_frame(t, step, tokens, observables, checkpoint, integration_seconds);
}
void RecorderFan::field_frame(double t, std::int64_t step, const std::vector<std::span<const double>>& values,
                              const std::vector<std::span<const double>>& moving_centres,
                              const CheckpointView& checkpoint, double integration_seconds) {
  for (Recorder* r : recorders_) r->field_frame(t, step, values, moving_centres, checkpoint, integration_seconds);
}
void RecorderFan::flush_if_due() {
  for (Recorder* r : recorders_) r->flush_if_due();
}
void RecorderFan::end(const RunSummary& summary) {
  for (Recorder* r : recorders_) r->end(summary);
}
void RecorderFan::abandon() {
  for (Recorder* r : recorders_) r->abandon();
}

}  // namespace normdyn
