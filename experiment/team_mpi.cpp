// The MPI module: every MPI call of normdyn. Built as libnormdyn_mpi.so and loaded by Team
// (team.cpp) when an MPI launcher started the process.
#include <mpi.h>

#include <algorithm>
#include <cstring>

#include "mpi_module.hpp"

namespace {

using normdyn::mpi_module::Api;

int init(int* argc, char*** argv, int* rank, int* size, int* local_size) {
  int provided = 0;
  if (int e = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided)) return e;
  if (int e = MPI_Comm_rank(MPI_COMM_WORLD, rank)) return e;
  if (int e = MPI_Comm_size(MPI_COMM_WORLD, size)) return e;
  MPI_Comm local;
  if (int e = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local)) return e;
  const int e = MPI_Comm_size(local, local_size);
  MPI_Comm_free(&local);
  return e;
}

void finalize() { MPI_Finalize(); }

void error_string(int code, char* text, int capacity) {
  char buffer[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, buffer, &length) != MPI_SUCCESS) length = 0;
  const int n = std::max(0, std::min(length, capacity - 1));
  std::memcpy(text, buffer, static_cast<std::size_t>(n));
  text[n] = '\0';
}

int allgather_doubles(double* data, const int* counts, const int* displs) {
  return MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
}

int max_int(int value, int* out) { return MPI_Allreduce(&value, out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); }

int reduce_u64(const std::uint64_t* in, std::uint64_t* out, int count, int minimum) {
  return MPI_Allreduce(in, out, count, MPI_UINT64_T, minimum ? MPI_MIN : MPI_MAX, MPI_COMM_WORLD);
}

int broadcast_length(std::uint64_t* length, int root) {
  return MPI_Bcast(length, 1, MPI_UINT64_T, root, MPI_COMM_WORLD);
}

// In pieces of at most 2^30 bytes: MPI counts are ints.
int broadcast_bytes(void* data, std::uint64_t bytes, int root) {
  constexpr std::uint64_t kPiece = std::uint64_t{1} << 30;
  auto* p = static_cast<char*>(data);
  for (std::uint64_t done = 0; done < bytes; done += kPiece) {
    const int n = static_cast<int>(std::min(kPiece, bytes - done));
    if (int e = MPI_Bcast(p + done, n, MPI_BYTE, root, MPI_COMM_WORLD)) return e;
  }
  return MPI_SUCCESS;
}

void abort_all(int exit_code) { MPI_Abort(MPI_COMM_WORLD, exit_code); }

// The request lives on the heap so that no MPI type crosses the module's interface; test() frees it
// once the send completed.
int isend(int destination, int tag, const char* data, int bytes, void** request) {
  auto* r = new MPI_Request;
  if (int e = MPI_Isend(data, bytes, MPI_CHAR, destination, tag, MPI_COMM_WORLD, r)) {
    delete r;
    return e;
  }
  *request = r;
  return MPI_SUCCESS;
}

int test(void* request, int* done) {
  auto* r = static_cast<MPI_Request*>(request);
  const int e = MPI_Test(r, done, MPI_STATUS_IGNORE);
  if (e == MPI_SUCCESS && *done) delete r;
  return e;
}

int probe(int* waiting, int* source, int* tag, int* bytes) {
  MPI_Status status;
  if (int e = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, waiting, &status)) return e;
  if (!*waiting) return MPI_SUCCESS;
  *source = status.MPI_SOURCE;
  *tag = status.MPI_TAG;
  return MPI_Get_count(&status, MPI_CHAR, bytes);
}

int receive(int source, int tag, char* data, int bytes) {
  return MPI_Recv(data, bytes, MPI_CHAR, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

constexpr Api kApi{normdyn::mpi_module::kAbiVersion,
                   init,
                   finalize,
                   error_string,
                   allgather_doubles,
                   max_int,
                   reduce_u64,
                   broadcast_length,
                   broadcast_bytes,
                   abort_all,
                   isend,
                   test,
                   probe,
                   receive};

}  // namespace

extern "C" const Api* normdyn_mpi_module() { return &kApi; }
