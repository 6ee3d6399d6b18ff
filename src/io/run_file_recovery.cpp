// Before a resume or a read: a file left by a killed or failed writer recovered, a file checked as a
// run file, a checkpoint checked against the frames beside it.
#include "io/run_file_internal.hpp"

namespace normdyn::run_file_internal {

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
      throw IoError(path.string() +
                    ": damaged run file: it begins with the HDF5 signature, but HDF5 cannot read it "
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

// A checkpoint is trusted only if it fits the frames, times and configuration stored beside it:
// a resume from a forged or damaged one would write frames that are not the run's.
void validate_checkpoint(const std::filesystem::path& path, const RunReader& reader, const RunConfig& config,
                         const Checkpoint& c) {
  const std::string where = std::string(kCheckpoint);
  const double t_end = config.solver.t_end;
  if (!std::isfinite(c.t) || c.t < config.solver.t_start || c.t > t_end * (1.0 + 1e-12))
    damaged(path, where,
            "holds t = " + toml_text::number_text(c.t) + ", outside [solver.t_start, solver.t_end] = [" +
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
    const std::size_t expected =
        static_cast<std::size_t>(config.model.n) * static_cast<std::size_t>(config.model.d + 1);
    if (c.x.size() != expected)
      damaged(path, where,
              "state has " + std::to_string(c.x.size()) + " values, expected n (d + 1) = " + std::to_string(expected));
  }
  const std::vector<double> samples = config.output.sample_times(t_end, config.solver.t_start);
  if (c.next_sample > samples.size())
    damaged(path, where, "points at sample " + std::to_string(c.next_sample) + " of " + std::to_string(samples.size()));
  // The samples still to record lie ahead of the checkpoint. (Recorded ones may lie after it too:
  // a dense-output step records the samples it spans and checkpoints its start.)
  const double slack = 1e-12 * std::max(1.0, std::abs(c.t));
  if (c.next_sample < samples.size() && samples[c.next_sample] < c.t - slack)
    damaged(path, where,
            "holds t = " + toml_text::number_text(c.t) + " past sample " + std::to_string(c.next_sample) +
                " (t = " + toml_text::number_text(samples[c.next_sample]) + "), which it says is still to record");
  const std::size_t frames = reader.frames();
  if (c.next_sample > frames)
    damaged(path, where,
            "points at frame " + std::to_string(c.next_sample) + " but the file holds " + std::to_string(frames) +
                " complete frames");
  // The kept frames are the configuration's samples (their times alone: a torn tail past them may
  // hold times a kill left unwritten).
  const std::vector<double> times = reader.times(c.next_sample);
  for (std::size_t i = 0; i < c.next_sample; ++i)
    if (!(std::abs(times[i] - samples[i]) <= 1e-12 * std::max(1.0, std::abs(samples[i]))))
      damaged(path, reader.has_particles() ? std::string(kDirection) + "/time" : std::string(kFields),
              "frame " + std::to_string(i) + " has t = " + std::to_string(times[i]) +
                  ", but the stored configuration samples t = " + std::to_string(samples[i]));
  // The last durable frame must read back (chunk filters detect some damage), and the frames the
  // resume keeps must be the ones written (the checksums detect changed bytes).
  if (reader.has_particles() && c.next_sample > 0) (void)reader.frame(c.next_sample - 1);
  (void)reader.verify_frames(c.next_sample);
}

}  // namespace normdyn::run_file_internal

namespace normdyn {

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
  if (!lock) return false;                        // a live writer's
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
    throw IoError(path.string() +
                  ": damaged run file: it ends before the end HDF5 recorded, and restoring that end "
                  "does not make it readable (" +
                  e.what() + ")");
  }
  return true;
}

void require_run_file(const std::filesystem::path& path, const std::string& flag) { check_run_file(path, flag, false); }

std::optional<std::size_t> verify_run_file(const std::filesystem::path& path, const std::string& flag) {
  require_run_file(path, flag);
  return RunReader(path).verify_frames();
}

bool is_run_file(const std::filesystem::path& path) {
  try {
    require_run_file(path, "");
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace normdyn
