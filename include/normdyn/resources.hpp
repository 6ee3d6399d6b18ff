#pragma once
// What a run will need, computed from its configuration before anything is allocated, and the check
// against what the machine has: physical memory, the cgroup memory limit and the address-space
// limit (ulimit -v) for memory; free space (statvfs) and the file-size limit (ulimit -f) for the
// run file. A run that cannot fit is refused as bad input naming the key that makes it large.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "normdyn/config.hpp"

namespace normdyn {

struct ResourceEstimate {
  double memory_bytes = 0.0;  // peak resident memory of the run (an upper estimate)
  double disk_bytes = 0.0;    // size of the finished run file, uncompressed
  std::string memory_key;     // the key that sets the memory (model.n, meanfield.grid, attention.normalizer)
  std::string memory_detail;  // what takes it, when one part dominates ("the n x n matrix of ...")
  std::string disk_key;       // the key that sets the number of frames (output.samples, output.times)
};

ResourceEstimate estimate_resources(const RunConfig& config);

struct ResourceLimits {
  double memory_bytes = 0.0;     // the smallest of physical memory, cgroup limit, RLIMIT_AS
  std::string memory_source;     // which of them
  double disk_free_bytes = 0.0;  // free space for unprivileged users where the file goes, or RLIMIT_FSIZE
  std::string disk_source;
};

// The limits for a run file at `output` (its directory's file system). `existing_bytes`: what the
// file occupies already when it is written in place (a resume), free for it to grow into.
ResourceLimits resource_limits(const std::filesystem::path& output, double existing_bytes = 0.0);

// Throws InputError naming the key when the estimate exceeds the limits (the message says how much
// is needed and available, and that --no-size-check overrides).
// `disk`: also the run file's size. A resume checks the final size of the file it extends in place
// (`existing_bytes`, its size now): a write that fails part-way leaves HDF5's metadata half-written.
void check_resources(const RunConfig& config, const std::filesystem::path& output, bool disk = true,
                     double existing_bytes = 0.0);

// The check of an array read from an input file, whose size the configuration does not give:
// "needs about X of memory, more than the Y of <limit>" when `bytes` exceed the memory limits.
std::optional<std::string> memory_shortfall(double bytes);

}  // namespace normdyn
