#include "normdyn/resources.hpp"

#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "normdyn/errors.hpp"

namespace normdyn {
namespace {

// Copies of the flat state alive at once: the integrator's stages and error estimate (up to 13 for
// fehlberg78), dense output, the sample being written, the checkpoint and the packed tokens.
constexpr double kStateCopies = 24.0;
// Rows of the attention kernel's per-thread score buffer (blocks of tokens times all tokens).
constexpr double kKernelBlockRows = 256.0;
// The program itself, its libraries and HDF5's caches.
constexpr double kBaseBytes = 64.0 * (1 << 20);
// The writer buffers up to 4 MiB of frames between flushes.
constexpr double kWriterBuffer = 4.0 * (1 << 20);

std::string bytes_text(double bytes) {
  char buffer[64];
  if (bytes >= 1e9)
    std::snprintf(buffer, sizeof buffer, "%.3g GB", bytes / 1e9);
  else
    std::snprintf(buffer, sizeof buffer, "%.3g MB", bytes / 1e6);
  return buffer;
}

double read_limit(const std::string& file) {
  std::ifstream in(file);
  std::string text;
  if (!(in >> text) || text == "max") return INFINITY;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return end && *end == '\0' && v > 0.0 ? v : INFINITY;
}

// The memory limit of this process's cgroup (v2 memory.max or v1 memory.limit_in_bytes).
double cgroup_limit() {
  double limit = INFINITY;
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, controllers, path;
    if (!std::getline(fields, id, ':') || !std::getline(fields, controllers, ':') || !std::getline(fields, path))
      continue;
    if (id == "0" && controllers.empty()) {
      limit = std::min(limit, read_limit("/sys/fs/cgroup" + path + "/memory.max"));
      limit = std::min(limit, read_limit("/sys/fs/cgroup/memory.max"));
    } else if (controllers.find("memory") != std::string::npos) {
      limit = std::min(limit, read_limit("/sys/fs/cgroup/memory" + path + "/memory.limit_in_bytes"));
      limit = std::min(limit, read_limit("/sys/fs/cgroup/memory/memory.limit_in_bytes"));
    }
  }
  return limit;
}

}  // namespace

ResourceEstimate estimate_resources(const RunConfig& c) {
  ResourceEstimate e;
  // Counted, not resolved: sample_times() would allocate every time.
  const double frames =
      c.output.samples ? static_cast<double>(*c.output.samples) : static_cast<double>(c.output.times.size());
  e.disk_key = c.output.samples ? "output.samples" : "output.times";
  const double threads = std::max<double>(1.0, static_cast<double>(c.solver.threads));
  if (c.model.kind == ModelKind::meanfield && c.model.d == 3) {
    // The sphere: (L + 1)² coefficients and a grid of 2 ⌈(3L+1)/2⌉² points (solvers/meanfield_sphere.hpp).
    const double L = static_cast<double>(c.meanfield.degree), rings = std::floor((3.0 * L + 2.0) / 2.0);
    const double points = 2.0 * rings * rings, coefficients = (L + 1.0) * (L + 1.0);
    e.memory_key = "meanfield.degree";
    e.memory_bytes = kBaseBytes + kWriterBuffer + 8.0 * coefficients * (kStateCopies + 4.0) + 8.0 * points * 12.0;
    e.disk_bytes = frames * 8.0 * (points + 4.0);
    return e;
  }
  if (c.model.kind == ModelKind::meanfield) {
    // A causal mask: one slice of the grid per cursor cell.
    const double cursor =
        std::holds_alternative<NoMask>(c.attention.mask) ? 1.0 : static_cast<double>(c.meanfield.cursor_grid);
    const double cells =
        static_cast<double>(c.meanfield.grid) * std::max(1.0, static_cast<double>(c.meanfield.radial_grid)) * cursor;
    e.memory_key = "meanfield.grid";
    e.memory_bytes = kBaseBytes + kWriterBuffer + 8.0 * cells * (kStateCopies + 16.0);
    // Every field frame: the density on the grid and its marginals.
    e.disk_bytes = frames * 8.0 * (2.0 * cells + 4.0 * static_cast<double>(c.meanfield.grid) + 8.0);
    return e;
  }
  const double n = static_cast<double>(c.model.n), d = static_cast<double>(c.model.d);
  const double state = n * (d + 1.0) * 8.0;
  e.memory_key = "model.n";
  e.memory_bytes = kBaseBytes + kWriterBuffer + kStateCopies * state +
                   threads * kKernelBlockRows * std::min(n, 1e12) * 8.0 +
                   4.0 * n * (d + 1.0) * 8.0;  // the kernel's values and sums, masses
  // The Sinkhorn normalizer scales the whole n x n matrix of weights at once (attention.cpp).
  if (std::holds_alternative<Sinkhorn>(c.attention.normalizer)) {
    const double matrix = n * n * 8.0;
    e.memory_bytes += matrix;
    if (matrix > 0.5 * e.memory_bytes) {
      e.memory_key = "attention.normalizer";
      e.memory_detail = "\"sinkhorn\" keeps the whole n x n matrix of weights (model.n = " + std::to_string(c.model.n) +
                        ": " + bytes_text(matrix) + ")";
    }
  }
  // Per frame: directions and radii, three observables, times and steps of each element.
  e.disk_bytes = frames * (state + 3.0 * 8.0 + 5.0 * 16.0) + 2.0 * state + n * 8.0 + 65536.0;
  return e;
}

ResourceLimits resource_limits(const std::filesystem::path& output, double existing_bytes) {
  ResourceLimits l;
  const double pages = static_cast<double>(::sysconf(_SC_PHYS_PAGES)),
               page = static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  l.memory_bytes = pages > 0 && page > 0 ? pages * page : INFINITY;
  l.memory_source = "physical memory";
  if (const double cg = cgroup_limit(); cg < l.memory_bytes) {
    l.memory_bytes = cg;
    l.memory_source = "the cgroup memory limit";
  }
  struct rlimit r {};
  if (::getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY &&
      static_cast<double>(r.rlim_cur) < l.memory_bytes) {
    l.memory_bytes = static_cast<double>(r.rlim_cur);
    l.memory_source = "the address-space limit (ulimit -v)";
  }
  std::filesystem::path dir = output.parent_path();
  if (dir.empty()) dir = ".";
  struct statvfs fs {};
  l.disk_free_bytes = INFINITY;
  if (::statvfs(dir.c_str(), &fs) == 0) {
    l.disk_free_bytes = static_cast<double>(fs.f_bavail) * static_cast<double>(fs.f_frsize) + existing_bytes;
    l.disk_source = "free on " + dir.string() + (existing_bytes > 0 ? " (with the file's own)" : "");
  }
  if (::getrlimit(RLIMIT_FSIZE, &r) == 0 && r.rlim_cur != RLIM_INFINITY &&
      static_cast<double>(r.rlim_cur) < l.disk_free_bytes) {
    l.disk_free_bytes = static_cast<double>(r.rlim_cur);
    l.disk_source = "allowed by the file-size limit (ulimit -f)";
  }
  return l;
}

void check_resources(const RunConfig& config, const std::filesystem::path& output, bool disk, double existing_bytes) {
  const ResourceEstimate e = estimate_resources(config);
  const ResourceLimits l = resource_limits(output, existing_bytes);
  if (e.memory_bytes > l.memory_bytes)
    throw InputError(e.memory_key, "the run needs about " + bytes_text(e.memory_bytes) + " of memory" +
                                       (e.memory_detail.empty() ? "" : " (" + e.memory_detail + ")") +
                                       ", more than the " + bytes_text(l.memory_bytes) + " of " + l.memory_source +
                                       "; make it smaller, or pass --no-size-check to run anyway");
  if (disk && e.disk_bytes > l.disk_free_bytes)
    throw InputError(e.disk_key,
                     "the run file would grow to about " + bytes_text(e.disk_bytes) + ", more than the " +
                         bytes_text(l.disk_free_bytes) + " " + l.disk_source +
                         (existing_bytes > 0 ? "; make room, or pass --no-size-check to resume anyway"
                                             : "; write fewer frames, or pass --no-size-check to run anyway"));
}

std::optional<std::string> memory_shortfall(double bytes) {
  const ResourceLimits l = resource_limits(".");
  if (!(bytes > l.memory_bytes)) return std::nullopt;
  return "needs about " + bytes_text(bytes) + " of memory, more than the " + bytes_text(l.memory_bytes) + " of " +
         l.memory_source;
}

}  // namespace normdyn
