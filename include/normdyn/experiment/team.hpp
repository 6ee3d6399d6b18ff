#pragma once
// MPI, wrapped once: every MPI call of normdyn is made in experiment/team_mpi.cpp, a module
// (libnormdyn_mpi.so) that Team loads, and no MPI type crosses this header.
//
// normdyn is built with MPI (CMake option NORMDYN_MPI, default ON) but loads and initializes it
// only when an MPI launcher started the process (mpirun / mpiexec set OMPI_COMM_WORLD_SIZE,
// PMIX_RANK or PMI_RANK): a plain `normdyn run` never loads Open MPI's libraries, starts as fast as
// without it and prints nothing extra. NORMDYN_MPI=0 in the environment keeps MPI off even under a
// launcher (the sweep sets it for the runs it starts as child processes).
//
// Waiting. Open MPI's blocking calls spin on a core. The sweep's manager and workers mostly wait
// while their child processes compute, and an ensemble's exchanging thread shares its core with a
// worker, so they poll (try_receive) and sleep between polls instead, and sends return at once: a
// blocking send of a message above the shared-memory eager limit (4 KiB, an ensemble member's
// record) spins until the peer's next poll, and took a quarter of the core of the process sending
// records under `mpirun -n 2 normdyn ensemble`.
#include <cstdint>
#include <list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "normdyn/sharded_dynamics.hpp"

namespace normdyn {

namespace mpi_module {
struct Api;
}

// Thrown on the processes of a team that agreed to stop because another one failed during set-up:
// that process reports the error, these exit with its code in silence.
struct PeerFailure {
  int exit_code;
};

// The processes of one launch (MPI_COMM_WORLD), or this process alone.
class Team final : public RowExchange {
 public:
  // Initializes MPI (thread level "funneled": only the main thread calls MPI) when launched by an
  // MPI launcher. Throws InputError when launched with several processes by a build without MPI, or
  // when the MPI module cannot be loaded.
  Team(int& argc, char**& argv);
  ~Team() override;  // MPI_Finalize
  Team(const Team&) = delete;
  Team& operator=(const Team&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  bool is_root() const { return rank_ == 0; }
  // Processes of this team on this machine (1 without MPI).
  int local_size() const { return local_size_; }
  // The cores this process may use: those of its CPU affinity (a launcher's binding, taskset,
  // cgroups), and at most its share of the machine among the team's processes on it.
  int cores() const;
  // Threads for each process's attention kernel when none are configured: cores().
  int default_threads() const { return cores(); }

  // ---- Collectives: every process calls them in the same order.
  void allgather(double* data, std::span<const int> counts, std::span<const int> displs) override;
  // The lowest failing rank's message, which names that rank (one reduction, and a broadcast when
  // one failed).
  std::string first_failure(const std::string& message) override;
  int max(int value);
  // Whether every process passed the same value.
  bool same(std::uint64_t value);
  void broadcast(std::string& text, int root = 0);
  void broadcast(std::vector<double>& values, int root = 0);
  // The set-up barrier of a collective command (`run`, `sweep`): every process passes its exit code
  // (0: ready) and gets the largest, once. A process that fails before it calls agree() with its
  // error code (main does), so that nobody waits for it; the others then stop with PeerFailure.
  // After a 0 the processes are engaged in collectives, and a failure of one must end all (abort).
  // With `identity` (a hash of what every process must have been given alike, e.g. the command's
  // input and output), processes that passed different identities all agree on exit code 2 (bad
  // input) without engaging, and mismatched() says why. The same single collective either way.
  int agree(int exit_code, std::uint64_t identity = 0);
  // How many times agree() was called: a client running several collectives (the Python package's
  // ensembles) tells whether the current one reached it.
  int agreements() const { return agreements_; }
  // This process failed in the collective command that began when agree() had been called
  // `agreements_before` times. Engaged in it: prints the error with the rank and ends every process
  // (abort). Before its agreement: joins it with the exit code, so that nobody waits for this
  // process. Alone, or after an agreement that already failed: nothing.
  void fail_collective(int exit_code, const std::string& message, int agreements_before = 0);
  bool mismatched() const { return mismatched_; }
  bool engaged() const { return engaged_; }
  // Ends every process of the launch with this exit code (MPI_Abort).
  [[noreturn]] void abort(int exit_code);

  // ---- Point-to-point text messages (the sweep's manager and workers).
  struct Message {
    int source = -1;
    int tag = 0;
    std::string text;
  };
  // Returns at once: the text is copied and delivered while this process polls (try_receive) or
  // at the latest before MPI_Finalize. Messages to one process arrive in the order sent.
  void send(int destination, int tag, const std::string& text);
  // A message from any process with any tag, if one is waiting. Also completes the sends delivered.
  std::optional<Message> try_receive();

 private:
  // The sends not known to be delivered yet, and returns their count.
  std::size_t complete_sends();
  struct OutgoingMessage {
    void* request;
    std::string text;  // MPI reads it until the request completes: a list keeps it in place
  };
  std::list<OutgoingMessage> sends_;
  const mpi_module::Api* mpi_ = nullptr;  // the loaded MPI module, when active
  bool active_ = false;
  int agreements_ = 0;
  bool engaged_ = false;
  bool mismatched_ = false;
  int rank_ = 0;
  int size_ = 1;
  int local_size_ = 1;
};

// Whether this build has MPI (CMake option NORMDYN_MPI).
bool built_with_mpi();

}  // namespace normdyn
