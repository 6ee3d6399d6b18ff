// RunWriter: the frames and fields of a run appended (buffered between flushes, SWMR), the
// checkpoint, the summary; a resume reopens the file for writing.
#include "io/run_file_internal.hpp"

namespace normdyn {

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
      if (err == EEXIST)
        throw InputError("output.path", path.string() + " exists; pass " + force_name + " to overwrite it");
      if (err != EINVAL && err != ENOSYS)
        throw IoError(path.string() + ": cannot move the new run file into place: " + std::strerror(err));
      if (::link(staging.c_str(), path.c_str()) != 0) {
        const int link_err = errno;
        if (link_err == EEXIST)
          throw InputError("output.path", path.string() + " exists; pass " + force_name + " to overwrite it");
        throw IoError(path.string() + ": cannot move the new run file into place: " + std::strerror(link_err));
      }
      ::unlink(staging.c_str());
    }
    staging.clear();
  }

  // --force replaces regular files only (never a FIFO, a device, a directory or a symbolic link).
  static void require_replaceable(const std::filesystem::path& p, const std::string& force_name) {
    if (is_special_entry(p))
      throw InputError("output.path", p.string() + " exists and is not a regular file; " + force_name +
                                          " replaces only regular files");
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
    if (file.contains(kFields))
      field_names = split_names(file.open_group(kFields).attribute_string("order").value_or(""));
    observables.clear();
    observables.resize(with_observables ? frame_observable_names().size() : 0);
    fields.clear();
    fields.resize(field_names.size());
    checkpoint_checksums = file.contains(std::string(kCheckpoint) + "/a/checksum");
    checksum_covers.clear();
    if (file.contains(frame_checksums::kDataset))
      checksum_covers = split_lines(file.open_dataset(frame_checksums::kDataset)
                                        .attribute_string(frame_checksums::kCoversAttribute)
                                        .value_or(""));
    for (std::size_t i = 0; i < field_names.size(); ++i) {
      const h5::Group group = file.open_group(std::string(kFields) + "/" + field_names[i]);
      FieldStream& f = fields[i];
      f.moving_names = split_names(group.attribute_string("moving_axes").value_or(""));
      f.pending_moving.resize(f.moving_names.size());
      for (const std::string& name : f.moving_names)
        f.moving_cells.push_back(
            file.open_dataset(std::string(kFields) + "/" + field_names[i] + "/" + name).shape().at(1));
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
    if (++frames_since_flush >= flush_frames)
      flush();
    else if (buffered_values() >= kMaxBufferedValues)
      write_pending();
    else if (seconds_since(last_flush) >= flush_interval)
      flush();
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
      if (it == rows.end())
        throw IoError(dataset + ": listed by " + frame_checksums::kDataset + " but not written by this run");
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
    const auto record =
        impl->file.open_dataset(std::string(kCheckpoint) + (current[0] == 0 ? "/a" : "/b") + "/record").read_doubles();
    decode_checkpoint_record(record, state.wall_seconds);
    impl->next_slot = 1 - static_cast<int>(current[0]);
  }
  // Running again before any frame is dropped: the earlier summary's frame count no longer holds.
  impl->file.open_group("summary").set_attribute("status", std::string("running"));
  impl->read_streams(state.config);
  impl->reopen_datasets();
  // Frames after the checkpoint are recomputed: drop them (they may be partial).
  const auto frames = static_cast<std::uint64_t>(state.checkpoint ? state.checkpoint->next_sample : 0);
  // Every dataset is cut to the checkpoint's frames, whatever torn tail a kill left past them; a kill
  // during the cut leaves every dataset at least that long, which is all a reader requires.
  if (!impl->checksum_covers.empty()) impl->checksums.resize_frames(frames);
  for (Element* e : impl->elements()) truncate(*e, frames);
  for (FieldStream& f : impl->fields)
    for (h5::Dataset& axis : f.moving) axis.resize_frames(frames);
  impl->frames = static_cast<std::int64_t>(frames);

  {
    // A log of the sessions: when, from which frame, by which build and thread count.
    h5::Group parameters = impl->file.open_group("parameters");
    const std::string entry =
        utc_now() + " resumed from frame " + std::to_string(frames) + " by " + std::string(revision()) + " with " +
        std::to_string(provenance.threads) + " threads" +
        (provenance.ranks > 1 ? " on " + std::to_string(provenance.ranks) + " MPI ranks" : "") + " (previous session " +
        (state.crashed ? "killed" : "interrupted") + ")" +
        (state.checkpoint_unchecked ? "; its checkpoint predates checkpoint checksums and was not checked" : "");
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
  w.direction.buffer(t, step,
                     std::span<const double>(tokens.theta.data(), static_cast<std::size_t>(tokens.theta.size())));
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

}  // namespace normdyn
