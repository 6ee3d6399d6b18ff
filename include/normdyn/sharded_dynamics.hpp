#pragma once
// One run shared by several processes (`mpirun -n P normdyn run`): the tokens are split into P
// contiguous ranges of the attention kernel's row blocks, and process p evaluates the right-hand side
// of its own rows only (its rows of the attention against all n keys, the O(n² d / P) share of the
// work), then the ranges are exchanged so that every process holds the whole derivative. A row's
// derivative has the same bits as in one process (attention.hpp), so a sharded run, noisy or not,
// is the one-process run bit for bit.
//
// Every process therefore holds the whole state and runs the same integrator on it, with the same
// numbers: the step-size controller sees the same error norm everywhere and every process takes
// the same steps, with no further communication. The integrator's own work (O(n d) per stage) is
// repeated on every process; the attention (O(n² d)) is not.
//
// The exchange is an interface so that this library does not depend on MPI: the application
// implements it over MPI_COMM_WORLD (app/mpi.hpp).
#include <span>
#include <string>
#include <vector>

#include "normdyn/dynamics.hpp"
#include "normdyn/ode_system.hpp"

namespace normdyn {

class RowExchange {
 public:
  virtual ~RowExchange() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In place: before the call process r has filled data[displs[r], displs[r] + counts[r]); after
  // it every process holds every block. Collective: every process calls it with the same counts.
  virtual void allgather(double* data, std::span<const int> counts, std::span<const int> displs) = 0;
  // Collective: the `message` of the lowest-ranked process whose message is not empty, on every
  // process (empty when none has one). A user's term that failed on one process ends the step on all
  // of them, instead of leaving the others waiting in the next exchange.
  virtual std::string first_failure(const std::string& message) = 0;
};

// Rows [begin, end) of one process.
struct RowRange {
  Index begin = 0;
  Index end = 0;
  Index size() const { return end - begin; }
};

// The rows of process `rank` of `ranks` among n: contiguous ranges of whole units of `unit` rows (the
// last unit may be shorter), the first processes one unit more than the others when they do not
// divide evenly; single rows when there are fewer units than processes (a process may own none when
// ranks > n).
RowRange row_share(Index n, int ranks, int rank, Index unit = 1);

class ShardedDynamics final : public OdeSystem {
 public:
  // Keeps references to both: they must outlive this object.
  ShardedDynamics(AttentionDynamics& dynamics, RowExchange& exchange);

  std::size_t size() const override { return dynamics_.size(); }
  // Own rows, then the exchange: a collective call.
  void rhs(const double* x, double* dxdt, double t) override;
  std::vector<double> breakpoints(double t0, double t1) const override { return dynamics_.breakpoints(t0, t1); }
  void enter_piece(double t_begin, double t_end) override { dynamics_.enter_piece(t_begin, t_end); }
  double retract(double* x) const override { return dynamics_.retract(x); }
  // The noise of a row is drawn from its token's number, so each process draws its own rows.
  bool noisy() const override { return dynamics_.noisy(); }
  void increment(const double* x, double t, double h, const NoiseStep& step, double* dx) override;

  RowRange rows() const { return rows_; }

 private:
  // Every process's rows of a state-shaped vector (θ rows, then radii) to every process.
  void gather(double* rows);
  // Own rows through `evaluate`; with the user's terms, whether one failed on any process is
  // agreed first (TermFailure on every process, with the failing process's message).
  template <class Evaluate>
  void own_rows(Evaluate evaluate);

  AttentionDynamics& dynamics_;
  RowExchange& exchange_;
  RowRange rows_;
  bool user_terms_ = false;  // terms that may fail (the agreement costs one reduction per evaluation)
  std::vector<int> theta_counts_, theta_displs_, r_counts_, r_displs_;
};

}  // namespace normdyn
