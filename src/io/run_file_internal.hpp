// The run file's pieces shared by src/io/run_file_*.cpp (not installed): its layout's paths and
// versions, the frame datasets' element, and the helpers that write and check the layout.
#pragma once

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

namespace normdyn::run_file_internal {

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

// The arrays given with the run (model.qkv = "given", init.kind = "given"), stored beside the
// configuration, whose model.qkv_digest and init.tokens_digest name them; a reader checks them.
constexpr const char* kGivenQkv = "qkv";
constexpr const char* kGivenTokens = "initial_tokens";
constexpr const char* kGivenScoreBias = "score_bias";

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

// Datasets left open by the file's creation, by path, for the writer to take instead of opening
// them again (each open or close of a dataset costs HDF5 tens of microseconds).
using OpenDatasets = std::map<std::string, h5::Dataset>;

// Metadata reads per attempt of a SWMR reader when no live writer holds the file's lock: metadata
// that fails its checksum then is damaged, not half-written, and HDF5's default (100 attempts with
// doubling sleeps) took hours to say so.
constexpr unsigned kReadAttemptsWithoutWriter = 2;

// The layout: written at creation, checked on opening (run_file_layout.cpp).
std::string host_name();
std::vector<std::string> split_names(const std::string& joined, char separator = ',');
void write_given(h5::Group& parameters, const RunConfig& config);
void write_parameters(h5::File& file, const RunConfig& config, const Provenance& provenance,
                      const RunFileOptions& options);
void write_h5md_metadata(h5::File& file, const RunConfig& config);
Element create_element(h5::File& file, const std::string& group, const std::vector<std::uint64_t>& inner, int deflate,
                       const std::vector<h5md::Axis>& axes, const std::string& unit);
void keep_element(OpenDatasets& kept, const std::string& group, Element&& e);
void truncate(Element& e, std::uint64_t frames);
void write_fields(h5::File& file, const std::vector<FieldSpec>& fields);
std::vector<std::string> frame_datasets(const h5::File& file);
std::vector<std::string> split_lines(const std::string& joined);
void create_frame_checksums(h5::File& file);
void write_structure(h5::File& file, const RunConfig& config, const Provenance& provenance,
                     const RunFileOptions& options, OpenDatasets& kept);
Recovery unreadable_because(const std::filesystem::path& path);
h5::File open_for_reading(const std::filesystem::path& path, bool lock_is_ours = false);
std::string shape_text(const std::vector<std::uint64_t>& s);
[[noreturn]] void damaged(const std::filesystem::path& path, const std::string& dataset, const std::string& problem);
std::uint64_t sample_count(const RunConfig& config);
void expect_frames_within(const std::filesystem::path& path, const std::string& dataset, std::uint64_t frames,
                          std::uint64_t max_frames);
void expect_shape(const std::filesystem::path& path, const h5::File& file, const std::string& dataset,
                  std::vector<std::int64_t> expected, h5::ElementType type,
                  std::uint64_t max_frames = std::numeric_limits<std::uint64_t>::max());
void validate_checksum_links(const std::filesystem::path& path, const h5::File& file, std::uint64_t max_frames);
void validate_layout(const std::filesystem::path& path, const h5::File& file, const RunConfig& config);
void read_given(const std::filesystem::path& path, const h5::Group& parameters, RunConfig& config);
RunConfig stored_config(const std::filesystem::path& path, const h5::File& file);

// Checks before a resume (run_file_recovery.cpp).
void check_run_file(const std::filesystem::path& path, const std::string& flag, bool lock_is_ours);
void validate_checkpoint(const std::filesystem::path& path, const RunReader& reader, const RunConfig& config,
                         const Checkpoint& c);

}  // namespace normdyn::run_file_internal

namespace normdyn {
using namespace run_file_internal;
}  // namespace normdyn
