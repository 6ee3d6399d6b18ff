#include "normdyn/experiment/team.hpp"

#include <sched.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "normdyn/errors.hpp"

#if NORMDYN_WITH_MPI
#include <mpi.h>
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

#if !NORMDYN_WITH_MPI
// The process count a launcher announced, if it announced one.
int launcher_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name); v && *v) return std::atoi(v);
  return 1;
}
#endif

#if NORMDYN_WITH_MPI
void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw IoError(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
}
#endif

}  // namespace

bool built_with_mpi() { return NORMDYN_WITH_MPI != 0; }

Team::Team([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv) {
  if (!launched_by_mpi()) return;
#if NORMDYN_WITH_MPI
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  active_ = true;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  MPI_Comm local;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local), "MPI_Comm_split_type");
  check(MPI_Comm_size(local, &local_size_), "MPI_Comm_size");
  MPI_Comm_free(&local);
#else
  if (launcher_size() > 1)
    throw InputError("mpirun", "this normdyn was built without MPI (CMake option NORMDYN_MPI=OFF); run it without mpirun");
#endif
}

Team::~Team() {
#if NORMDYN_WITH_MPI
  if (active_) MPI_Finalize();
#endif
}

int Team::cores() const {
  int machine = static_cast<int>(std::thread::hardware_concurrency());
  cpu_set_t mask;
  CPU_ZERO(&mask);
  const int allowed = ::sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : machine;
  return std::max(1, std::min(allowed, std::max(1, machine / std::max(1, local_size_))));
}

void Team::allgather([[maybe_unused]] double* data, [[maybe_unused]] std::span<const int> counts,
                     [[maybe_unused]] std::span<const int> displs) {
  if (size_ == 1) return;
#if NORMDYN_WITH_MPI
  check(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, counts.data(), displs.data(), MPI_DOUBLE,
                       MPI_COMM_WORLD),
        "MPI_Allgatherv");
#endif
}

int Team::max(int value) {
  if (size_ == 1) return value;
  int out = value;
#if NORMDYN_WITH_MPI
  check(MPI_Allreduce(&value, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
#endif
  return out;
}

bool Team::same([[maybe_unused]] std::uint64_t value) {
  if (size_ == 1) return true;
#if NORMDYN_WITH_MPI
  unsigned long long v = value, lo = 0, hi = 0;
  check(MPI_Allreduce(&v, &lo, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  check(MPI_Allreduce(&v, &hi, 1, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return lo == hi;
#else
  return true;
#endif
}

void Team::broadcast([[maybe_unused]] std::string& text, [[maybe_unused]] int root) {
  if (size_ == 1) return;
#if NORMDYN_WITH_MPI
  unsigned long long length = text.size();
  check(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, root, MPI_COMM_WORLD), "MPI_Bcast");
  text.resize(length);
  if (length > 0)
    check(MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, root, MPI_COMM_WORLD), "MPI_Bcast");
#endif
}

void Team::broadcast([[maybe_unused]] std::vector<double>& values, [[maybe_unused]] int root) {
  if (size_ == 1) return;
#if NORMDYN_WITH_MPI
  unsigned long long length = values.size();
  check(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG_LONG, root, MPI_COMM_WORLD), "MPI_Bcast");
  values.resize(length);
  if (length > 0)
    check(MPI_Bcast(values.data(), static_cast<int>(length), MPI_DOUBLE, root, MPI_COMM_WORLD), "MPI_Bcast");
#endif
}

int Team::agree(int exit_code, [[maybe_unused]] std::uint64_t identity) {
  int agreed = exit_code;
#if NORMDYN_WITH_MPI
  if (size_ > 1) {
    // One reduction: the largest code, the largest identity and the largest complement (the
    // smallest identity): the identities agree when max == min.
    unsigned long long in[3] = {static_cast<unsigned long long>(std::max(0, exit_code)), identity, ~identity};
    unsigned long long out[3] = {0, 0, 0};
    check(MPI_Allreduce(in, out, 3, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    agreed = static_cast<int>(out[0]);
    mismatched_ = out[1] != ~out[2];
    if (agreed == 0 && mismatched_) agreed = static_cast<int>(ExitCode::bad_input);
  }
#endif
  agreed_ = true;
  engaged_ = agreed == 0;
  return agreed;
}

void Team::abort(int exit_code) {
#if NORMDYN_WITH_MPI
  if (active_) MPI_Abort(MPI_COMM_WORLD, exit_code);
#endif
  std::exit(exit_code);
}

void Team::send([[maybe_unused]] int destination, [[maybe_unused]] int tag, [[maybe_unused]] const std::string& text) {
#if NORMDYN_WITH_MPI
  if (active_) {
    check(MPI_Send(text.data(), static_cast<int>(text.size()), MPI_CHAR, destination, tag, MPI_COMM_WORLD), "MPI_Send");
    return;
  }
#endif
  throw std::logic_error("Team::send without MPI");
}

std::optional<Team::Message> Team::try_receive() {
#if NORMDYN_WITH_MPI
  if (!active_) return std::nullopt;
  int waiting = 0;
  MPI_Status status;
  check(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &waiting, &status), "MPI_Iprobe");
  if (!waiting) return std::nullopt;
  int count = 0;
  check(MPI_Get_count(&status, MPI_CHAR, &count), "MPI_Get_count");
  Message m;
  m.source = status.MPI_SOURCE;
  m.tag = status.MPI_TAG;
  m.text.resize(static_cast<std::size_t>(count));
  check(MPI_Recv(m.text.data(), count, MPI_CHAR, m.source, m.tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
  return m;
#else
  return std::nullopt;
#endif
}

}  // namespace normdyn
