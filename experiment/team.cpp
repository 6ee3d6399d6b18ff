#include "normdyn/experiment/team.hpp"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "normdyn/errors.hpp"

#include "mpi_module.hpp"

#if NORMDYN_WITH_MPI
#include <dlfcn.h>

#include <filesystem>
#include <vector>
#endif

namespace normdyn {
namespace {

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v && *v;
}

// Started by an MPI launcher (Open MPI's mpirun, a PMIx or PMI launcher such as MPICH's hydra or
// Slurm's srun --mpi=pmix), and not told to keep MPI off.
bool launched_by_mpi() {
  if (const char* off = std::getenv("NORMDYN_MPI"); off && std::string_view(off) == "0") return false;
  return env_set("OMPI_COMM_WORLD_SIZE") || env_set("PMIX_RANK") || env_set("PMI_RANK") || env_set("PMI_SIZE");
}

#if NORMDYN_WITH_MPI
// When Open MPI's launcher put every process on this machine, its own shared-memory transport (pml
// ob1 over btl vader) carries the messages whatever is chosen, and choosing it skips the probing of
// network transports (UCX) at MPI_Init: a fifth of a second of every launch, 0.46 s -> 0.24 s for
// `mpirun -n 2 normdyn --version`. A pml chosen in the environment (`mpirun --mca pml ...`,
// OMPI_MCA_pml) is kept.
void prefer_shared_memory_on_one_machine() {
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  if (size && local && *size && std::string_view(size) == local) ::setenv("OMPI_MCA_pml", "ob1", 0);
}
#else
// The process count a launcher announced, if it announced one.
int launcher_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name); v && *v) return std::atoi(v);
  return 1;
}
#endif

void check(const mpi_module::Api* mpi, int code, const char* call) {
  if (code == 0) return;
  char text[512] = {};
  mpi->error_string(code, text, sizeof text);
  throw IoError(std::string(call) + " failed: " + text);
}

#if NORMDYN_WITH_MPI

constexpr const char* kModuleName = "libnormdyn_mpi.so";

// The module lives in the library folder beside the program (bin/../lib, or the build tree's
// lib/), or where the installation put it (a C++ program linking normdyn's libraries, the Python
// package). NORMDYN_MPI_MODULE names it instead, for other layouts.
std::vector<std::filesystem::path> module_candidates() {
  if (const char* chosen = std::getenv("NORMDYN_MPI_MODULE"); chosen && *chosen) return {chosen};
  std::vector<std::filesystem::path> dirs;
  std::error_code ec;
  const auto program = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(program.parent_path());
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&module_candidates), &info) != 0 && info.dli_fname && info.dli_fname[0] == '/')
    dirs.push_back(std::filesystem::path(info.dli_fname).parent_path());
  std::vector<std::filesystem::path> out;
  auto add = [&out](const std::filesystem::path& p) {
    const auto normal = p.lexically_normal();
    if (std::find(out.begin(), out.end(), normal) == out.end()) out.push_back(normal);
  };
  for (const auto& dir : dirs) {
    add(dir / ".." / "lib" / kModuleName);
    add(dir / kModuleName);
  }
  add(NORMDYN_MPI_MODULE_INSTALLED);
  return out;
}

const mpi_module::Api* load_module() {
  std::string looked;
  for (const auto& path : module_candidates()) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      looked += (looked.empty() ? "" : ", ") + path.string();
      continue;
    }
    // Global: Open MPI's own components, which it loads itself, resolve against its libraries.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!handle) throw InputError("mpirun", std::string("cannot load normdyn's MPI module: ") + ::dlerror());
    using Entry = const mpi_module::Api* (*)();
    auto entry = reinterpret_cast<Entry>(::dlsym(handle, "normdyn_mpi_module"));
    const mpi_module::Api* api = entry ? entry() : nullptr;
    if (!api || api->abi_version != mpi_module::kAbiVersion)
      throw InputError("mpirun", path.string() + " is the MPI module of another normdyn build; reinstall normdyn");
    return api;
  }
  throw InputError("mpirun", std::string("normdyn's MPI module ") + kModuleName + " is missing (looked for " + looked +
                                 "); reinstall normdyn");
}
#endif

}  // namespace

bool built_with_mpi() { return NORMDYN_WITH_MPI != 0; }

Team::Team([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv) {
  if (!launched_by_mpi()) return;
#if NORMDYN_WITH_MPI
  prefer_shared_memory_on_one_machine();
  mpi_ = load_module();
  check(mpi_, mpi_->init(&argc, &argv, &rank_, &size_, &local_size_), "MPI_Init_thread");
  active_ = true;
#else
  if (launcher_size() > 1)
    throw InputError("mpirun",
                     "this normdyn was built without MPI (CMake option NORMDYN_MPI=OFF); run it without mpirun");
#endif
}

Team::~Team() {
  if (!active_) return;
  // Every message sent is received by its peer's protocol (the ensemble's and the sweep's ranks read
  // until their end message), so this ends; MPI_Finalize must not see a send in flight.
  try {
    while (complete_sends() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  } catch (...) {}
  mpi_->finalize();
}

int Team::cores() const {
  int machine = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t mask;
  CPU_ZERO(&mask);
  const int allowed = ::sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : machine;
  return std::max(1, std::min(allowed, std::max(1, machine / std::max(1, local_size_))));
}

void Team::allgather(double* data, std::span<const int> counts, std::span<const int> displs) {
  if (size_ == 1) return;
  check(mpi_, mpi_->allgather_doubles(data, counts.data(), displs.data()), "MPI_Allgatherv");
}

std::string Team::first_failure(const std::string& message) {
  if (size_ == 1) return message;
  // The lowest failing rank r is the one with the largest size − r.
  const int top = max(message.empty() ? 0 : size_ - rank_);
  if (top == 0) return {};
  const int root = size_ - top;
  std::string text = rank_ == root ? message + " (MPI rank " + std::to_string(root) + ")" : std::string();
  broadcast(text, root);
  return text;
}

int Team::max(int value) {
  if (size_ == 1) return value;
  int out = value;
  check(mpi_, mpi_->max_int(value, &out), "MPI_Allreduce");
  return out;
}

bool Team::same(std::uint64_t value) {
  if (size_ == 1) return true;
  std::uint64_t lo = 0, hi = 0;
  check(mpi_, mpi_->reduce_u64(&value, &lo, 1, 1), "MPI_Allreduce");
  check(mpi_, mpi_->reduce_u64(&value, &hi, 1, 0), "MPI_Allreduce");
  return lo == hi;
}

namespace {
template <class Buffer>
void broadcast_buffer(const mpi_module::Api* mpi, Buffer& buffer, int root) {
  std::uint64_t length = buffer.size();
  check(mpi, mpi->broadcast_length(&length, root), "MPI_Bcast");
  buffer.resize(length);
  if (length > 0) check(mpi, mpi->broadcast_bytes(buffer.data(), length * sizeof buffer[0], root), "MPI_Bcast");
}
}  // namespace

void Team::broadcast(std::string& text, int root) {
  if (size_ > 1) broadcast_buffer(mpi_, text, root);
}

void Team::broadcast(std::vector<double>& values, int root) {
  if (size_ > 1) broadcast_buffer(mpi_, values, root);
}

int Team::agree(int exit_code, std::uint64_t identity) {
  int agreed = exit_code;
  if (size_ > 1) {
    // One reduction: the largest code, the largest identity and the largest complement (the
    // smallest identity): the identities agree when max == min.
    const std::uint64_t in[3] = {static_cast<std::uint64_t>(std::max(0, exit_code)), identity, ~identity};
    std::uint64_t out[3] = {0, 0, 0};
    check(mpi_, mpi_->reduce_u64(in, out, 3, 0), "MPI_Allreduce");
    agreed = static_cast<int>(out[0]);
    mismatched_ = out[1] != ~out[2];
    if (agreed == 0 && mismatched_) agreed = static_cast<int>(ExitCode::bad_input);
  }
  ++agreements_;
  engaged_ = agreed == 0;
  return agreed;
}

void Team::fail_collective(int exit_code, const std::string& message, int agreements_before) {
  if (size_ <= 1) return;
  if (agreements_ == agreements_before) {
    agree(exit_code);
  } else if (engaged_) {
    std::fprintf(stderr, "normdyn: error (rank %d): %s\n", rank_, message.c_str());
    std::fflush(stderr);
    abort(exit_code);
  }
}

void Team::abort(int exit_code) {
  if (active_) mpi_->abort(exit_code);
  std::exit(exit_code);
}

void Team::send(int destination, int tag, const std::string& text) {
  if (!active_) throw std::logic_error("Team::send without MPI");
  auto& s = sends_.emplace_back(OutgoingMessage{nullptr, text});
  if (const int e = mpi_->isend(destination, tag, s.text.data(), static_cast<int>(s.text.size()), &s.request)) {
    sends_.pop_back();
    check(mpi_, e, "MPI_Isend");
  }
  complete_sends();
}

std::size_t Team::complete_sends() {
  for (auto it = sends_.begin(); it != sends_.end();) {
    int done = 0;
    check(mpi_, mpi_->test(it->request, &done), "MPI_Test");
    it = done ? sends_.erase(it) : std::next(it);
  }
  return sends_.size();
}

std::optional<Team::Message> Team::try_receive() {
  if (!active_) return std::nullopt;
  complete_sends();
  int waiting = 0;
  Message m;
  int bytes = 0;
  check(mpi_, mpi_->probe(&waiting, &m.source, &m.tag, &bytes), "MPI_Iprobe");
  if (!waiting) return std::nullopt;
  m.text.resize(static_cast<std::size_t>(bytes));
  check(mpi_, mpi_->receive(m.source, m.tag, m.text.data(), bytes), "MPI_Recv");
  return m;
}

}  // namespace normdyn
