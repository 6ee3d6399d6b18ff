// RunReader: a run file's configuration, frames, fields, observables, summary and checkpoint, each
// checked against the layout; the frames' checksums verified.
#include "io/run_file_internal.hpp"

namespace normdyn {

// ---------------------------------------------------------------------------------------------
struct RunReader::Impl {
  std::filesystem::path path;
  h5::File file;
  RunConfig config;              // the stored configuration, validated against the datasets
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
    for (const auto& name : impl_->file.open_group(kFields).member_names())
      groups.push_back(std::string(kFields) + "/" + name);
  std::uint64_t m = std::numeric_limits<std::uint64_t>::max();
  for (const auto& g : groups)
    for (const char* p : {"/value", "/time", "/step"}) m = std::min(m, impl_->file.open_dataset(g + p).shape().at(0));
  // A frame counts once its checksum is written too (files written before checksums have none).
  if (impl_->file.contains(frame_checksums::kDataset))
    m = std::min(m, impl_->file.open_dataset(frame_checksums::kDataset).shape().at(0));
  return groups.empty() ? 0 : m;
}
std::vector<double> RunReader::times(std::optional<std::size_t> count) const {
  const std::string dataset = frame_index_group(impl_->file) + "/time";
  // The complete frames only: a longer extent (a killed writer's, or a forged one) is never read.
  const std::size_t complete = frames();
  if (count && *count > complete)
    throw IoError(impl_->path.string() + ": " + std::to_string(*count) + " frames asked for, the file holds " +
                  std::to_string(complete) + " complete frames");
  const std::size_t n = count.value_or(complete);
  auto t = n > 0 ? impl_->file.open_dataset(dataset).read_frames(0, n) : std::vector<double>{};
  // Sample times are finite and increase: anything else was not written by a run.
  for (std::size_t i = 0; i < t.size(); ++i)
    if (!std::isfinite(t[i]) || (i > 0 && !(t[i] > t[i - 1])))
      damaged(impl_->path, dataset,
              "frame " + std::to_string(i) + " has t = " + std::to_string(t[i]) +
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
      damaged(impl_->path, std::string(kDirection) + "/value",
              "frame " + std::to_string(index) + " has non-finite values");
  for (double v : r)
    if (!std::isfinite(v))
      damaged(impl_->path, std::string(kRadius) + "/value",
              "frame " + std::to_string(index) + " has non-finite values");
  std::copy(theta.begin(), theta.end(), t.theta.data());
  std::copy(r.begin(), r.end(), t.r.data());
  return t;
}

std::optional<FeedForward> RunReader::feedforward() const {
  const char* const group = "parameters/feedforward";
  if (!impl_->config.feedforward.active()) return std::nullopt;
  if (!impl_->file.contains(group))
    damaged(impl_->path, group, "is missing (the configuration has a feed-forward term)");
  return read_feedforward_weights(impl_->file.open_group(group), impl_->config.model.d,
                                  impl_->config.feedforward.activation,
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

// The frames the run committed, which its checksums and every dataset they cover must hold: once it
// ended, exactly those /summary@frames records; after its writer was killed, those its checkpoint
// records. Frames, then their checksums, are appended and flushed before the checkpoint that counts
// them is written, so a kill at any moment leaves at least those; past them, a kill in the middle of
// appends or of HDF5's flush leaves each dataset's extent wherever its metadata reached the disk
// (a value dataset behind its checksums, or ahead): a torn tail, which a resume cuts and recomputes.
// A /checksums/frames cut short of the committed frames is damage, not a shorter run. Nothing is
// committed while a live writer moves its checkpoint, or before the first checkpoint.
struct CommittedFrames {
  std::uint64_t frames;
  std::string by;  // what commits them, as the damage message says it
};
std::optional<CommittedFrames> committed_frames(const std::filesystem::path& path, const h5::File& file,
                                                std::uint64_t checksummed, bool live) {
  if (file.contains("summary")) {
    const h5::Group g = file.open_group("summary");
    const bool ended = run_status_from_string(g.attribute_string("status").value_or("")).has_value();
    if (ended && g.has_attribute("frames")) {
      const std::int64_t recorded = g.attribute_int("frames").value_or(-1);
      if (recorded < 0 || static_cast<std::uint64_t>(recorded) != checksummed)
        damaged(path, frame_checksums::kDataset,
                "holds the checksums of " + std::to_string(checksummed) +
                    " frames, but /summary@frames says the run "
                    "wrote " +
                    std::to_string(recorded));
      return CommittedFrames{checksummed, "its " + std::to_string(checksummed) + " checksums"};
    }
  }
  // A live writer moves its checkpoint while this reader looks: only a killed writer's file is held
  // to it (a resume holds the lock itself, and sees no live writer).
  const std::string current = std::string(kCheckpoint) + "/current";
  if (live || !file.contains(current)) return std::nullopt;
  const auto slot = file.open_dataset(current).read_ints();
  if (slot.size() != 2 || (slot[0] != 0 && slot[0] != 1)) return std::nullopt;
  if (slot[1] < 0 || static_cast<std::uint64_t>(slot[1]) > checksummed)
    damaged(path, frame_checksums::kDataset,
            "holds the checksums of " + std::to_string(checksummed) + " frames, but the checkpoint (" + current +
                ") says " + std::to_string(slot[1]) + " were written");
  return CommittedFrames{static_cast<std::uint64_t>(slot[1]),
                         "the " + std::to_string(slot[1]) + " its checkpoint (" + current + ") says were written"};
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
    damaged(path, covers_name,
            covers.empty() || covers.front().empty()
                ? "lists no datasets"
                : "does not list the datasets of this file's frames (its first: " + covers.front() + ")");
  const std::uint64_t checksummed = stored.shape().at(0);
  // Another open of the file in this process (h5py's, in the Python package) shares HDF5's cache of
  // its metadata, whose extents may predate frames a writer appended since: the checkpoint (data,
  // read fresh) is then not comparable with them.
  const bool live = (!impl_->lock_is_ours && WriterLock::held(path)) || file.opened_elsewhere();
  const auto committed = committed_frames(path, file, checksummed, live);
  // Each covered dataset must hold the committed frames; past them it may hold fewer or more frames
  // than the checksums (a torn tail). While a writer appends (or with extents this reader cannot
  // compare with a checkpoint) nothing is committed: the complete frames are those checked. A file
  // without a checkpoint and without a writer (which no run leaves once published) must hold every
  // checksummed frame.
  std::vector<h5::Dataset> datasets;
  std::vector<std::vector<std::uint64_t>> shapes;
  std::uint64_t complete = checksummed;
  for (const std::string& covered : covers) {
    datasets.push_back(file.open_dataset(covered));
    shapes.push_back(datasets.back().shape());
    const std::uint64_t held = shapes.back().empty() ? 0 : shapes.back()[0];
    const std::uint64_t required = committed ? committed->frames : live ? 0 : checksummed;
    if (shapes.back().empty() || held < required)
      damaged(path, covered,
              "holds " + std::to_string(held) + " frames, fewer than " +
                  (committed ? committed->by : "its " + std::to_string(checksummed) + " checksums"));
    complete = std::min(complete, held);
  }
  // The frames asked for (a resume's: those its checkpoint keeps), or every frame complete in all
  // datasets and checksummed: those a reader shows (RunReader::frames, normdyn.load).
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(count.value_or(complete), complete));
  std::vector<std::uint32_t> crc(n, frame_checksums::initial());
  // Read a few MiB at a time: the frames of a long run need not fit in memory. Every covered
  // dataset's frame shape was bounded by the configuration when the file was opened.
  constexpr std::uint64_t kValuesPerRead = std::uint64_t{1} << 19;
  for (std::size_t c = 0; c < covers.size(); ++c) {
    const h5::Dataset& ds = datasets[c];
    const auto& shape = shapes[c];
    std::uint64_t per_frame = 1;
    for (std::size_t k = 1; k < shape.size(); ++k) per_frame *= shape[k];
    const bool integers = ds.element_type() == h5::ElementType::i64;
    const std::uint64_t step = std::max<std::uint64_t>(1, kValuesPerRead / std::max<std::uint64_t>(per_frame, 1));
    for (std::uint64_t first = 0; first < n; first += step) {
      const std::uint64_t m = std::min<std::uint64_t>(step, n - first);
      const auto add = [&](const auto& v) {
        using T = typename std::decay_t<decltype(v)>::value_type;
        for (std::uint64_t f = 0; f < m; ++f)
          crc[first + f] =
              frame_checksums::extend(crc[first + f], std::span<const T>(v.data() + f * per_frame, per_frame));
      };
      if (integers)
        add(ds.read_int_frames(first, m));
      else
        add(ds.read_frames(first, m));
    }
  }
  const std::vector<std::int64_t> expected = n > 0 ? stored.read_int_frames(0, n) : std::vector<std::int64_t>{};
  for (std::size_t f = 0; f < n; ++f) {
    if (expected.at(f) == static_cast<std::int64_t>(crc[f])) continue;
    // Past the committed frames of a killed run (an ended run commits all it checksummed): a frame
    // whose extents reached the disk before its rows or its checksum did, which the resume rewrites.
    if (committed && f >= committed->frames)
      // (Its time read alone: a kill can leave it unwritten, which times() would refuse first.)
      throw FrameChecksumError(
          impl_->path.string() + ": frame " + std::to_string(f) + " (t = " +
          toml_text::number_text(file.open_dataset(frame_index_group(file) + "/time").read_frames(f, 1).at(0)) +
          ") does not match its checksum in " + frame_checksums::kDataset + ": it lies past the last checkpoint (" +
          std::to_string(committed->frames) +
          " frames) of a run whose writer was killed, a write "
          "the kill cut short; normdyn run --resume " +
          impl_->path.string() + " recomputes it and completes the run");
    throw FrameChecksumError(impl_->path.string() + ": damaged run file: frame " + std::to_string(f) +
                             " (t = " + toml_text::number_text(times().at(f)) + ") does not match its checksum in " +
                             frame_checksums::kDataset +
                             ": its values, time or step changed after they were written (a damaged disk or copy, "
                             "or an edit)");
  }
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
    if (file.contains("/h5md/modules/normdyn"))
      version = file.open_group("/h5md/modules/normdyn").attribute_ints("version");
    const bool checksummed_layout =
        version.size() >= 2 &&
        std::pair(version[0], version[1]) >= std::pair(kCheckpointChecksumVersion[0], kCheckpointChecksumVersion[1]);
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
            "does not match its checksum in " + slot +
                "/checksum: its state, time, step size or counters changed "
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
