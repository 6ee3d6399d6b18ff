#pragma once
// The interface between Team (team.cpp) and the MPI module (team_mpi.cpp, built as
// libnormdyn_mpi.so and loaded with dlopen only when an MPI launcher started the process): plain C
// types, so that neither MPI's headers nor its libraries reach anything else. A process that is not
// launched by MPI never loads Open MPI (whose libraries were an eighth of a small run's time).
//
// Every function returns MPI's error code (0: success); error_string turns one into text.
#include <cstdint>

namespace normdyn::mpi_module {

// Raised when the table changes, so that a module from another build is refused.
inline constexpr int kAbiVersion = 2;

struct Api {
  int abi_version;
  // MPI_Init_thread (funneled) on MPI_COMM_WORLD: rank, size and the processes on this machine.
  int (*init)(int* argc, char*** argv, int* rank, int* size, int* local_size);
  void (*finalize)();
  void (*error_string)(int code, char* text, int capacity);
  // In place over MPI_COMM_WORLD: data holds every process's block at displs (counts doubles each).
  int (*allgather_doubles)(double* data, const int* counts, const int* displs);
  int (*max_int)(int value, int* out);
  // Element-wise maximum (minimum when `minimum`) of `count` unsigned 64-bit values.
  int (*reduce_u64)(const std::uint64_t* in, std::uint64_t* out, int count, int minimum);
  // Bytes from `root`: the length first, then the bytes (into `resize(length)`'s buffer).
  int (*broadcast_length)(std::uint64_t* length, int root);
  int (*broadcast_bytes)(void* data, std::uint64_t bytes, int root);
  void (*abort)(int exit_code);
  // A send that returns at once (MPI_Isend): `data` must stay as it is until test() reports it done,
  // which also frees the request.
  int (*isend)(int destination, int tag, const char* data, int bytes, void** request);
  int (*test)(void* request, int* done);
  // Whether a message waits: its source, tag and size, without receiving it.
  int (*probe)(int* waiting, int* source, int* tag, int* bytes);
  int (*receive)(int source, int tag, char* data, int bytes);
};

}  // namespace normdyn::mpi_module

// The module's one exported symbol.
extern "C" const normdyn::mpi_module::Api* normdyn_mpi_module();
