// ---- Continuum limits (spec sections 3 and 5): discrete layers → the ODE at order 1, weighted
// particles → the mean-field equation in W1, and the grid order of the mean-field solver.
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "normdyn/analysis/circle_w1.hpp"
#include "normdyn/density.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/init.hpp"
#include "normdyn/solvers/frame_recorder.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "normdyn/solvers/layer_maps.hpp"
#include "normdyn/solvers/meanfield_circle.hpp"
#include "reproduce_studies.hpp"
#include "reproduce_support.hpp"
#include "row_reference.hpp"

namespace normdyn::studies {
namespace {

// Least-squares slope of ln y against ln x.
double loglog_slope(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> lx, ly;
  for (std::size_t i = 0; i < x.size(); ++i) lx.push_back(std::log(x[i])), ly.push_back(std::log(y[i]));
  return log_slope(lx, ly, -std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity());
}

std::string series(const std::vector<double>& x, const std::vector<double>& y, const char* xname, const char* yname) {
  std::string s;
  for (std::size_t i = 0; i < x.size(); ++i)
    s += (s.empty() ? "" : ", ") + std::string(xname) + " = " + num(x[i], 4) + ": " + yname + " " + num(y[i], 3);
  return s;
}

IntegratorOptions tight(double rtol) {
  IntegratorOptions o;
  o.rtol = rtol;
  o.atol = rtol * 1e-2;
  o.dt = 1e-3;
  return o;
}

// Three von Mises bumps on the circle: a smooth start far from the uniform stationary state.
Density bumps() { return Density::von_mises({0.3, 2.0, 4.1}, {8.0, 20.0, 5.0}, {0.5, 0.3, 0.2}); }
constexpr const char* kBumpsConfig =
    "init.kind = \"von_mises\", init.centers = [0.3, 2, 4.1], init.kappa = [8, 20, 5], init.weights = [0.5, 0.3, 0.2]";

// The angles of particles in d = 2 with their masses, as a measure on the circle.
analysis::CircleMeasure circle_measure(const Tokens& x, const Vector& masses) {
  analysis::CircleMeasure m;
  for (Index j = 0; j < x.n(); ++j) {
    m.atoms.push_back(std::atan2(x.theta(j, 1), x.theta(j, 0)));
    if (masses.size()) m.masses.push_back(masses(j));
  }
  return m;
}

MeanFieldSpec post_meanfield(double beta, std::int64_t grid) {
  MeanFieldSpec spec;
  spec.scheme = PostLN{};
  spec.beta = beta;
  spec.grid = grid;
  return spec;
}

// The L-layer network of the spec's layer maps (section 3), written in the row with the softmax
// attention A(Θ) of Q = K = V = I on the directions: per layer of step h from t,
//   post  θ <- LN(θ + h A)                 pre   x <- x + h A (x = r θ)
//   peri  x <- x + h A/|A|                 ngpt  θ <- LN(θ + h α_t (A/|A| - θ)),  α_t = α/(1 + t)^p
//   cod   θ <- LN(θ + h A/sqrt(t + 1))     mix   post while the layer's middle t + h/2 <= τ, then pre.
Tokens depth_network(const Scheme& scheme, Tokens x, double beta, double h, int layers) {
  const reference::Head head = reference::identity_head(x.d(), beta, reference::Weights::softmax);
  const std::string key(scheme_key(scheme));
  for (int l = 0; l < layers; ++l) {
    const double t = h * l;
    const RowMatrix a = reference::output(head, x.theta);
    bool radius = key == "pre" || key == "peri";
    if (const auto* mix = std::get_if<MixLN>(&scheme)) radius = t + 0.5 * h > mix->tau;
    for (Index j = 0; j < x.n(); ++j) {
      const Eigen::RowVectorXd aj = a.row(j), th = x.theta.row(j);
      Eigen::RowVectorXd y;
      if (key == "peri")
        y = x.r(j) * th + h * aj / aj.norm();
      else if (radius)
        y = x.r(j) * th + h * aj;
      else if (const auto* g = std::get_if<NGPT>(&scheme))
        y = th + h * g->alpha / std::pow(1.0 + t, g->alpha_decay) * (aj / aj.norm() - th);
      else if (key == "cod")
        y = th + h * aj / std::sqrt(t + 1.0);
      else
        y = th + h * aj;
      x.theta.row(j) = y / y.norm();
      if (radius) x.r(j) = y.norm();
    }
  }
  return x;
}

// The library's discrete solver against the row's network (round-off over 320 layers).
constexpr double kDepthMapTolerance = 1e-10;

}  // namespace

// Discrete layers of step h against the ODE at depth T, every scheme: the error should be O(h). The
// network is the row's own (depth_network), the ODE the engine's; the library's discrete solver is
// checked against the row's network.
void continuum_depth(Builder& b) {
  const ReproduceOptions& o = b.options();
  const Index n = o.quick ? 32 : 128, d = 3;
  const double beta = 2.0, depth = 2.0, tau = 1.0;
  const std::vector<int> layers{10, 20, 40, 80, 160, 320};
  const std::size_t fitted = 4;  // the finest steps: the coarsest ones are not yet asymptotic (nGPT)
  b.study("continuum: discrete layers against the ODE (n = " + std::to_string(n) + ", d = 3)", [&] {
    for_each_scheme([&](auto scheme) {
      Scheme s = scheme;
      if (auto* mix = std::get_if<MixLN>(&s)) mix->tau = tau;
      const std::string key(scheme_key(s));
      const DynamicsSpec spec = dynamics_spec(s, beta, 1);
      AttentionDynamics library(spec, QkvSource::identity(), n, d);
      // Radii spread over [0.8, 1.2] so that the radius schemes' speed factors differ between tokens.
      Tokens start = uniform_tokens(n, d, 1.0, 1);
      for (Index j = 0; j < n; ++j) start.r(j) = 0.8 + 0.4 * double(j) / double(n - 1);
      std::vector<double> x0(library.layout().size());
      library.layout().pack(start, x0.data());
      const std::vector<double> times{depth};
      const ParticleRun ode = run_particles(b.engine(), spec, QkvSource::identity(), start, {0.0, depth}, tight(1e-12));
      std::vector<double> steps, errors;
      double maps = 0.0;
      std::string problem =
          ode.status == RunStatus::ok && ode.frames.size() == 2 ? "" : "the ODE run ended with " + run_ending(ode);
      const auto distance = [&](const Tokens& p, const Tokens& q) {
        double err = 0.0;
        for (Index j = 0; j < n; ++j) err = std::max(err, (p.r(j) * p.theta.row(j) - q.r(j) * q.theta.row(j)).norm());
        return err;
      };
      for (int l : layers) {
        if (!problem.empty()) break;
        const double h = depth / l;
        FrameRecorder net;
        net.layout = library.layout();
        const IntegrationResult lr = run_layers(library, x0, 0.0, h, times, 0, net);
        if (lr.status != RunStatus::ok || net.frames.size() != 1) {
          problem = "the network with h = " + num(h) + " ended with status " + std::string(to_string(lr.status));
          break;
        }
        const Tokens mine = depth_network(s, start, beta, h, l);
        maps = std::max(maps, distance(net.frames.back(), mine));
        steps.push_back(h);
        errors.push_back(distance(mine, ode.frames.back()));
      }
      const double order = problem.empty()
                               ? loglog_slope(std::vector<double>(steps.end() - std::ptrdiff_t(fitted), steps.end()),
                                              std::vector<double>(errors.end() - std::ptrdiff_t(fitted), errors.end()))
                               : std::numeric_limits<double>::quiet_NaN();
      std::string hs;
      for (double h : steps) hs += (hs.empty() ? "" : ", ") + num(h, 4);
      b.row({"7-depth-" + key,
             "Continuum limit in depth, " + scheme_title(s) +
                 ": the L-layer network of step h = T/L (the layer maps of the spec, written in the row) tends to the "
                 "ODE at depth T, error O(h), and the library's discrete solver computes the same network",
             "normdyn run with model.scheme = \"" + key + "\"" + (key == "mix" ? ", model.tau = 1" : "") +
                 ", model.n = " + std::to_string(n) +
                 ", model.d = 3, model.beta = 2, init.kind = \"uniform\", init.seed = 1 (radii 0.8..1.2 in token "
                 "order), solver.t_end = 2, solver.method = \"discrete\", solver.dt = h (h = " +
                 hs + "), against solver.method = \"dopri5\", solver.rtol = 1e-12",
             problem.empty()
                 ? "max_j |x_j(network) - x_j(ODE)| at T = 2, the row's network against the engine's ODE: " +
                       series(steps, errors, "h", "error") + "; fitted order over the " + std::to_string(fitted) +
                       " finest h: " + num(order, 4) + "; the library's network against the row's: " + num(maps, 3)
                 : problem,
             "order 1 (the layer maps are explicit Euler steps of the flow up to O(h^2) per layer); the same maps",
             "|order - 1| < 0.1 (measured " + (problem.empty() ? num(std::abs(order - 1.0), 3) : "-") +
                 "), the library's network within " + num(kDepthMapTolerance) + " of the row's",
             problem.empty() && std::abs(order - 1.0) < 0.1 && maps <= kDepthMapTolerance ? "holds" : "fails"});
    });
  });
}

// Particles against the mean-field equation on the circle (Post-LN, Q = K = V = I): W1 at time t
// against n, for grid-weighted particles and for i.i.d. samples.
void continuum_mean_field(Builder& b) {
  const ReproduceOptions& o = b.options();
  const double beta = 4.0, t = 3.0;
  const std::int64_t grid = o.quick ? 2048 : 8192;
  const int top_grid = o.quick ? 9 : 12, top_sampled = o.quick ? 9 : 11;
  const int sample_seeds = o.quick ? 3 : 6;
  b.study("continuum: particles against the mean field (post, d = 2, W1)", [&] {
    const std::vector<double> times{t};
    MeanFieldCircle pde(post_meanfield(beta, grid));
    StateRecorder pde_end;
    const IntegrationResult pr =
        integrate(pde, pde.initial_state(cell_averages(bumps(), grid), 1.0, 0.0), 0.0, times, tight(1e-10), pde_end);
    if (pr.status != RunStatus::ok || pde_end.states.size() != 1) {
      b.row({"7-meanfield-w1", "Mean-field limit: particles tend to the mean-field equation in W1",
             "normdyn run with model.kind = \"meanfield\", meanfield.grid = " + std::to_string(grid),
             "the mean-field run ended with status " + std::string(to_string(pr.status)), "-", "the run completes",
             "fails"});
      return;
    }
    const analysis::CircleMeasure continuum{{}, {}, pde.angular_density(pde_end.states.back().data())};
    for (Sampling sampling : {Sampling::grid, Sampling::sampled}) {
      const bool on_grid = sampling == Sampling::grid;
      const int seeds = on_grid ? 1 : sample_seeds;
      const int top = on_grid ? top_grid : top_sampled;
      std::vector<double> sizes, distances;
      std::string problem;
      for (int p = 6; p <= top && problem.empty(); ++p) {
        const Index n = Index{1} << p;
        double mean_w1 = 0.0;
        for (int seed = 1; seed <= seeds && problem.empty(); ++seed) {
          const WeightedTokens start = density_tokens(bumps(), n, 2, sampling, 1.0, 0.0, std::uint64_t(seed));
          DynamicsSpec ds;
          ds.beta = beta;
          ds.masses = start.masses;
          ds.kernel.threads = o.threads;
          AttentionDynamics particles(ds, QkvSource::identity(), n, 2);
          std::vector<double> x0(particles.layout().size());
          particles.layout().pack(start.tokens, x0.data());
          FrameRecorder end;
          end.layout = particles.layout();
          const IntegrationResult r = integrate(particles, x0, 0.0, times, tight(1e-7), end);
          if (r.status != RunStatus::ok || end.frames.size() != 1) {
            problem = "n = " + std::to_string(n) + ", seed " + std::to_string(seed) + ": status " +
                      std::string(to_string(r.status));
            break;
          }
          mean_w1 += analysis::wasserstein1_circle(circle_measure(end.frames.back(), start.masses), continuum) / seeds;
        }
        if (!problem.empty()) break;
        sizes.push_back(double(n));
        distances.push_back(mean_w1);
      }
      const double rate = problem.empty() ? -loglog_slope(sizes, distances) : std::numeric_limits<double>::quiet_NaN();
      const double expected = on_grid ? 1.0 : 0.5;
      const double slack = on_grid ? 0.1 : 0.15;
      const std::string key(to_string(sampling));
      b.row({"7-meanfield-w1-" + key,
             std::string("Mean-field limit (Post-LN, d = 2, beta = 4): ") +
                 (on_grid ? "grid-weighted particles" : "i.i.d. samples") +
                 " of a density tend to the mean-field solution in W1 as n grows",
             "normdyn run with model.n = 2^6..2^" + std::to_string(top) + ", model.d = 2, model.beta = 4, " +
                 kBumpsConfig + ", init.sampling = \"" + key + "\"" +
                 (on_grid ? "" : ", init.seed = 1.." + std::to_string(seeds)) +
                 ", solver.t_end = 3, solver.rtol = 1e-7, against model.kind = \"meanfield\", meanfield.grid = " +
                 std::to_string(grid) +
                 ", solver.rtol = 1e-10; W1 on the circle at t = 3 (analysis::wasserstein1_circle)",
             problem.empty() ? std::string(on_grid ? "W1: " : "W1 (mean over " + std::to_string(seeds) + " seeds): ") +
                                   series(sizes, distances, "n", "W1") + "; fitted W1 ~ n^-" + num(rate, 4)
                             : problem,
             on_grid
                 ? "n^-1: W1 of the start is O(1/n) (cell-mass atoms) and the flow is W1-Lipschitz over [0, t] "
                   "(Dobrushin stability), so the rate at t is the start's"
                 : "n^-1/2: the Monte-Carlo rate of i.i.d. samples in W1 on the circle, kept by Dobrushin stability",
             "|rate - " + num(expected) + "| < " + num(slack) + " (measured " +
                 (problem.empty() ? num(std::abs(rate - expected), 3) : "-") + ")",
             problem.empty() && std::abs(rate - expected) < slack ? "holds" : "fails"});
    }
  });
}

// The mean-field solver's own convergence under grid refinement (Post-LN, smooth start).
void continuum_grid(Builder& b) {
  const ReproduceOptions& o = b.options();
  const double beta = 4.0, t = 2.0;
  const std::int64_t reference = o.quick ? 4096 : 16384, top = o.quick ? 512 : 2048;
  b.study("continuum: grid order of the mean-field solver (post)", [&] {
    const std::vector<double> times{t};
    const std::vector<double> start_rho_ref = cell_averages(Density::perturbed_uniform(2, 0.5), reference);
    MeanFieldCircle ref(post_meanfield(beta, reference));
    StateRecorder fine;
    const IntegrationResult rr =
        integrate(ref, ref.initial_state(start_rho_ref, 1.0, 0.0), 0.0, times, tight(1e-11), fine);
    std::vector<double> sizes, errors;
    std::string problem = rr.status == RunStatus::ok && fine.states.size() == 1
                              ? ""
                              : "the reference run ended with status " + std::string(to_string(rr.status));
    for (std::int64_t m = 64; m <= top && problem.empty(); m *= 2) {
      MeanFieldCircle s(post_meanfield(beta, m));
      StateRecorder x;
      const IntegrationResult r =
          integrate(s, s.initial_state(cell_averages(Density::perturbed_uniform(2, 0.5), m), 1.0, 0.0), 0.0, times,
                    tight(1e-11), x);
      if (r.status != RunStatus::ok || x.states.size() != 1) {
        problem = "M = " + std::to_string(m) + ": status " + std::string(to_string(r.status));
        break;
      }
      sizes.push_back(double(m));
      errors.push_back(restricted_l1_distance(fine.states.back(), s.angular_density(x.states.back().data())));
    }
    const double order = problem.empty() ? -loglog_slope(sizes, errors) : std::numeric_limits<double>::quiet_NaN();
    b.row({"7-meanfield-grid-post",
           "Mean-field solver (Post-LN, d = 2, beta = 4): convergence under grid refinement of the finite-volume "
           "scheme (van Leer limiter)",
           "normdyn run with model.kind = \"meanfield\", model.beta = 4, init.kind = \"perturbed_uniform\", init.mode "
           "= 2, "
           "init.amplitude = 0.5, solver.t_end = 2, solver.rtol = 1e-11, meanfield.grid = 64..." +
               std::to_string(top) + " against meanfield.grid = " + std::to_string(reference) +
               "; L1 of the cell averages at t = 2",
           problem.empty() ? "L1 error: " + series(sizes, errors, "M", "L1") + "; fitted order " + num(order, 4)
                           : problem,
           "order 2 (limited linear reconstruction; the solution stays smooth)",
           "|order - 2| < 0.2 (measured " + (problem.empty() ? num(std::abs(order - 2.0), 3) : "-") + ")",
           problem.empty() && std::abs(order - 2.0) < 0.2 ? "holds" : "fails"});
  });
}

}  // namespace normdyn::studies
