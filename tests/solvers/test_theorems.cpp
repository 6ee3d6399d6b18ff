// Facts of spec section 4 checked on integrated trajectories: tokens stay on the sphere, the
// LN-Scaling / Post-LN time change, the Corollary's radial lower bound, energy monotonicity along
// every scheme, and synchronization of Post-LN, nGPT and LN-Scaling (Theorem 3.1).
#define BOOST_TEST_MODULE theorems
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdio>

#include "normdyn/analysis/observables.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/init.hpp"
#include "normdyn/solvers/integrator.hpp"
#include "test_support.hpp"
#include "tolerances.hpp"

using namespace normdyn;
using normdyn::test::AllSchemes;

namespace {

struct Frames final : SampleObserver {
  StateLayout layout;
  std::vector<double> times;
  std::vector<Tokens> frames;
  std::optional<RunStatus> on_sample(std::size_t, double t, std::int64_t, std::span<const double> x,
                                     const CheckpointView&) override {
    times.push_back(t);
    frames.push_back(layout.unpack(x.data()));
    return std::nullopt;
  }
};

Frames run(const Scheme& scheme, double beta, const Tokens& start, const std::vector<double>& times,
           IntegratorOptions o = {}) {
  DynamicsSpec spec;
  spec.scheme = scheme;
  spec.beta = beta;
  AttentionDynamics dyn(spec, QkvSource::identity(), start.n(), start.d());
  std::vector<double> x0(dyn.layout().size());
  dyn.layout().pack(start, x0.data());
  Frames f;
  f.layout = dyn.layout();
  const auto r = integrate(dyn, x0, 0.0, times, o, f);
  BOOST_REQUIRE(r.status == RunStatus::ok);
  return f;
}

std::vector<double> linspace(double a, double b, int n) {
  std::vector<double> t;
  for (int i = 0; i < n; ++i) t.push_back(a + (b - a) * i / (n - 1));
  return t;
}

}  // namespace

// Issue 2's requirement: Post-LN, n = 64, d = 3, β = 4, t_end = 100, default tolerances.
BOOST_AUTO_TEST_CASE(every_stored_frame_is_on_the_sphere) {
  const Frames f = run(PostLN{}, 4.0, uniform_tokens(64, 3, 1.0, 1), linspace(0.0, 100.0, 201));
  double worst = 0.0;
  for (const Tokens& t : f.frames) worst = std::max(worst, (t.theta.rowwise().norm().array() - 1.0).abs().maxCoeff());
  std::printf("max | |theta_j| - 1 | over 201 frames: %.2e\n", worst);
  BOOST_TEST(worst <= test::kSphereNorm);
}

// Spec 4.2: LN-Scaling at t equals Post-LN at 2(sqrt(t + 1) − 1) from the same start.
BOOST_AUTO_TEST_CASE(ln_scaling_is_post_ln_after_a_time_change) {
  const Tokens start = uniform_tokens(24, 4, 1.0, 2);
  const std::vector<double> t_cod{0.0, 1.0, 3.0, 8.0, 15.0};
  std::vector<double> t_post;
  for (double t : t_cod) t_post.push_back(2.0 * (std::sqrt(t + 1.0) - 1.0));
  IntegratorOptions o;
  o.rtol = 1e-12;
  o.atol = 1e-14;
  const Frames cod = run(LNScaling{}, 2.0, start, t_cod, o);
  const Frames post = run(PostLN{}, 2.0, start, t_post, o);
  for (std::size_t i = 0; i < t_cod.size(); ++i) {
    const double diff = (cod.frames[i].theta - post.frames[i].theta).cwiseAbs().maxCoeff();
    std::printf("time change: cod t = %g vs post t = %.6f: max |difference| %.2e\n", t_cod[i], t_post[i], diff);
    BOOST_TEST(diff < test::kTimeChange);
  }
}

// Corollary of Theorem 3.1: if n <= e^β, <θ_j, A_j> >= (e^β − n + 1)/(n e^β) along the flow, so
// the radii of Pre-LN and Peri-LN grow at least at that rate (Peri: ρ = <θ, A>/|A| >= <θ, A>).
BOOST_AUTO_TEST_CASE(corollary_radial_lower_bound) {
  const double beta = 2.5;
  const Index n = 12;  // e^2.5 = 12.18
  const double bound = (std::exp(beta) - double(n) + 1.0) / (double(n) * std::exp(beta));
  for (const Scheme& scheme : {Scheme{PreLN{}}, Scheme{PeriLN{}}}) {
    for (std::uint64_t seed : {1u, 2u, 3u}) {
      const Tokens start = gaussian_tokens(n, 5, seed);
      const Frames f = run(scheme, beta, start, linspace(0.0, 30.0, 301));
      DynamicsSpec spec;
      spec.scheme = scheme;
      spec.beta = beta;
      AttentionDynamics dyn(spec, QkvSource::identity(), n, 5);
      double min_rate = 1e300;
      for (std::size_t i = 0; i < f.frames.size(); ++i) {
        RowMatrix dtheta(n, 5);
        Vector dr(n);
        dyn.velocity(f.frames[i].theta, f.frames[i].r, f.times[i], f.times[i], dtheta, dr);
        min_rate = std::min(min_rate, dr.minCoeff());
      }
      std::printf("corollary %-4s seed %d: min dr/dt = %.4f >= bound %.4f\n", std::string(scheme_key(scheme)).c_str(),
                  int(seed), min_rate, bound);
      BOOST_TEST(min_rate >= bound);
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(energy_is_non_decreasing_along_trajectories, S, AllSchemes) {
  const double beta = 3.0;
  const Frames f = run(S{}, beta, gaussian_tokens(20, 3, 4), linspace(0.0, 12.0, 121));
  double previous = 0.0;
  for (const Tokens& t : f.frames) {
    const double e = analysis::interaction_energy(t.theta, beta);
    BOOST_TEST(e >= previous * (1.0 - 1e-12));
    previous = e;
  }
}

// Theorem 3.1(a): Post-LN, nGPT and LN-Scaling synchronize from a uniform start.
BOOST_AUTO_TEST_CASE(post_ngpt_and_ln_scaling_synchronize) {
  for (auto [scheme, t_end] :
       {std::pair{Scheme{PostLN{}}, 60.0}, std::pair{Scheme{NGPT{}}, 60.0}, std::pair{Scheme{LNScaling{}}, 900.0}}) {
    const Frames f = run(scheme, 1.0, uniform_tokens(16, 3, 1.0, 5), {0.0, t_end});
    const double var = analysis::variance(f.frames.back().theta);
    std::printf("synchronization %-4s: Var(%g) = %.2e\n", std::string(scheme_key(scheme)).c_str(), t_end, var);
    BOOST_TEST(var < 1e-8);
  }
}
