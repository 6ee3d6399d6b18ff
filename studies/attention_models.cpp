// ---- Attention beyond the paper's: models of the follow-up literature against their closed forms,
// each integrated by the engine.
//
// * The equiangular model (Post-LN, Q = K = V = I): n tokens with every pairwise cosine rho stay
//   equiangular, and rho solves
//     softmax:  rho' = 2 e^{beta rho} (1 - rho) ((n - 1) rho + 1) / (e^beta + (n - 1) e^{beta rho}),
//     uniform:  rho' = (2/n) e^{beta rho} (1 - rho) ((n - 1) rho + 1)   (USA),
//   so 1 - rho decays at the rates 2 and 2 e^beta.
// * Causal attention with V = I (Karagodin, Polyanskiy and Rigollet 2024, Theorem 4.1): the first token
//   does not move, and every token converges to its initial position.
// * Several heads with the uniform normalizer and V_h = Q_h^T K_h symmetric: the flow is the gradient
//   flow of E = sum_h sum_jk e^{beta <Q_h x_j, K_h x_k>} (dE/dt = 2 beta Z sum_j |P_j U_j|^2 with
//   the common normalizer Z = n), so E never decreases. With the softmax, each head's normalizer
//   differs by row and head and the argument fails: no row claims it.
// * Sinkhorn attention (Sander, Ablin, Blondel and Peyre 2022), V = I, Post-LN: tokens in an open
//   hemisphere {<w, x> > 0} stay there and collapse to one point. For the token i with the least
//   <w, x_i> = m > 0, d<w, x_i>/dt = speed * sum_j A_ij (<w, x_j> - <x_i, x_j> m) >= 0 for any
//   positive weights A_ij, so m never decreases (the hemisphere argument of Geshkovski, Letrouit,
//   Polyanskiy and Rigollet for the softmax needs nothing else).
//
// Since those statements hold for many wrong models (any positive weights pass the hemisphere
// argument, any positive causal weights converge to x_1(0), a head sum scaled by 1/H is still a
// gradient flow), each row also compares the engine's velocity along its trajectory with the model's
// formula evaluated in the row (row_reference.hpp: the weights written out, never the library's
// kernel), and the Sinkhorn weights read back from the engine are checked to be doubly stochastic.
#include <cmath>
#include <limits>

#include "normdyn/attention/normalizers/sinkhorn.hpp"
#include "normdyn/init.hpp"
#include "normdyn/studies/equiangular.hpp"
#include "reproduce_studies.hpp"
#include "reproduce_support.hpp"
#include "row_reference.hpp"

namespace normdyn::studies {
namespace {

// The equiangular mean cosine against the scalar equation integrated by RK4 with steps of 1e-4: a
// relative tolerance of 1e-11 on the particles leaves far less than this.
constexpr double kEquiangularTolerance = 1e-8;
// The asymptotic rate, fitted where 1 - rho lies in [1e-10, 1e-5]: there it is within 1e-4 of its limit.
constexpr double kRateTolerance = 1e-3;
// Causal convergence: every direction within this of x_1(0) at the horizon (the slowest pull, that of
// the second token, is e^{-t/2} near the end).
constexpr double kCausalTolerance = 1e-6;
// Round-off and the integrator's error (rtol 1e-11) leave E's increments above this relative size.
constexpr double kEnergyTolerance = 1e-9;
// The hemisphere's least <w, x_i> may fall by the integrator's error (rtol 1e-11) between frames.
constexpr double kHemisphereTolerance = 1e-10;
// Collapsed at the horizon: every token within this distance of the mean direction.
constexpr double kCollapseTolerance = 1e-6;
// The engine's velocity against the row's formula, relative to the largest speed: the Sinkhorn scaling
// stops at column sums within 1e-12 (attention.sinkhorn_tol), the softmax is exact to round-off.
constexpr double kVelocityTolerance = 1e-9;
// The head sum against the projected gradient of E by central differences (step 1e-6: truncation
// ~1e-12, cancellation ~1e-10 relative).
constexpr double kGradientTolerance = 1e-6;
// Row and column sums of the Sinkhorn weights read back from the engine (A = W X solved for W with
// X of condition number below 1e3): the normalizer's 1e-12 plus the read-back's round-off.
constexpr double kDoublyStochasticTolerance = 1e-10;

// The largest relative deviation of the engine's velocity from P_j ∇_j E / (2 beta n) over `frames`,
// E = sum_h sum_jk exp(beta <x_j, B_h x_k>) and its gradient by central differences in the ambient space.
double heads_gradient_deviation(const Engine& engine, const DynamicsSpec& spec, const QkvSource& qkv,
                                const std::vector<RowMatrix>& b_h, const std::vector<Tokens>& frames,
                                const std::vector<double>& times) {
  const auto energy = [&](const RowMatrix& x) {
    double e = 0.0;
    for (const RowMatrix& bh : b_h) e += (spec.beta * x * bh * x.transpose()).array().exp().sum();
    return e;
  };
  return reference::velocity_deviation(engine, spec, qkv, frames, times, 20, [&](const Tokens& f) {
    RowMatrix x = f.theta, gradient(x.rows(), x.cols());
    const double step = 1e-6;
    for (Index j = 0; j < x.rows(); ++j)
      for (Index c = 0; c < x.cols(); ++c) {
        const double keep = x(j, c);
        x(j, c) = keep + step;
        const double up = energy(x);
        x(j, c) = keep - step;
        gradient(j, c) = (up - energy(x)) / (2.0 * step);
        x(j, c) = keep;
      }
    return reference::tangential(f.theta, gradient / (2.0 * spec.beta * double(x.rows())));
  });
}

}  // namespace

void attention_models(Builder& b) {
  const Engine& engine = b.engine();
  const ReproduceOptions& o = b.options();
  const Index n = 8, d = 8;
  const double beta = 2.0;
  for (const bool softmax : {true, false})
    b.study(softmax ? "equiangular model, softmax" : "equiangular model, uniform normalizer (USA)", [&] {
      const std::string normalizer = softmax ? "softmax" : "uniform";
      const double t_end = softmax ? 14.0 : 2.0, rate = softmax ? 2.0 : 2.0 * std::exp(beta);
      const std::vector<double> times = linear_times(t_end, 140);
      DynamicsSpec spec = dynamics_spec(PostLN{}, beta, o.threads);
      if (!softmax) spec.attention.normalizer = Uniform{};
      for (const double rho0 : {0.0, 0.3}) {
        const ParticleRun run = run_particles(engine, spec, QkvSource::identity(),
                                              equiangular_tokens(n, d, rho0, 1.0, 1), times, 1e-12, 1e-14);
        const std::vector<double> theory = equiangular_theory(softmax, double(n), beta, rho0, times);
        const EquiangularMeasurement m = measure_equiangular(run.frames, times, theory);
        const double worst = m.max_deviation, spread = m.max_spread;
        const bool complete = run.status == RunStatus::ok && run.frames.size() == times.size();
        const std::string settings =
            "normdyn run with model.scheme = \"post\", model.n = 8, model.d = 8, model.beta = 2, "
            "attention.normalizer = \"" +
            normalizer + "\", init.kind = \"equiangular\", init.rho = " + num(rho0, 2) +
            ", solver.t_end = " + num(t_end, 3) + ", output.samples = 140, solver.rtol = 1e-12";
        const std::string tag = "attention-equiangular-" + normalizer + "-rho" + num(rho0, 2);
        b.row({tag,
               "Equiangular model (" + normalizer +
                   "): the mean cosine rho(t) of n = 8 tokens started with every "
                   "pairwise cosine " +
                   num(rho0, 2) + " solves " +
                   (softmax ? "rho' = 2 e^{beta rho}(1 - rho)((n-1)rho + 1)/(e^beta + (n-1)e^{beta rho})"
                            : "rho' = (2/n) e^{beta rho}(1 - rho)((n-1)rho + 1)") +
                   ", and the tokens stay equiangular",
               settings,
               complete ? "max |rho - rho_ODE| = " + num(worst, 3) + " over t in [0, " + num(t_end, 3) +
                              "]; largest spread of the pairwise cosines " + num(spread, 3)
                        : "the run ended with status " + std::string(to_string(run.status)),
               "0",
               "max |rho - rho_ODE| <= " + num(kEquiangularTolerance) + " and spread <= " + num(kEquiangularTolerance),
               complete && worst <= kEquiangularTolerance && spread <= kEquiangularTolerance ? "holds" : "fails"});
        if (rho0 != 0.0) continue;
        const double fitted = m.rate_fitted;
        b.row({"attention-equiangular-" + normalizer + "-rate",
               "Equiangular model (" + normalizer + "): 1 - rho decays exponentially at the rate " +
                   (softmax ? std::string("2") : std::string("2 e^beta")),
               settings,
               "fitted rate " + num(fitted, 8) + " over the " + std::to_string(m.rate_frames) +
                   " frames with 1 - rho in [1e-10, 1e-5]",
               num(rate, 8), "relative error <= " + num(kRateTolerance),
               std::isfinite(fitted) && std::abs(fitted / rate - 1.0) <= kRateTolerance ? "holds"
               : std::isfinite(fitted)                                                  ? "fails"
                                                                                        : "inconclusive"});
      }
    });

  b.study("several heads, uniform normalizer: energy", [&] {
    const Index tokens = 8, dim = 3, heads = 3;
    const std::vector<double> times = linear_times(20.0, 200);
    DynamicsSpec spec = dynamics_spec(PostLN{}, 1.0, o.threads);
    spec.attention.normalizer = Uniform{};
    // Q_h = I, K_h = V_h = B_h symmetric positive definite, one per head (seeds 11, 12, 13).
    AttentionMatrices m;
    std::vector<RowMatrix> b_h;
    for (Index h = 0; h < heads; ++h) {
      b_h.push_back(positive_definite_qk(dim, 11 + static_cast<std::uint64_t>(h)));
      AttentionMatrices& head = h == 0 ? m : m.other_heads.emplace_back();
      head.identity = false;
      head.Q = RowMatrix::Identity(dim, dim);
      head.K = head.V = b_h.back();
    }
    const auto energy = [&](const RowMatrix& theta) {
      double e = 0.0;
      for (const RowMatrix& bh : b_h) e += (theta * bh * theta.transpose()).array().exp().sum();
      return e;
    };
    const ParticleRun run =
        run_particles(engine, spec, QkvSource::layers({m}), uniform_tokens(tokens, dim, 1.0, 4), times, 1e-11, 1e-13);
    const bool complete = run.status == RunStatus::ok && run.frames.size() == times.size();
    double worst = -std::numeric_limits<double>::infinity(), rise = 0.0;
    if (complete) {
      double previous = energy(run.frames.front().theta);
      const double first = previous;
      for (std::size_t i = 1; i < run.frames.size(); ++i) {
        const double e = energy(run.frames[i].theta);
        worst = std::max(worst, (previous - e) / previous);
        previous = e;
      }
      rise = previous / first;
    }
    const double gradient = complete
                                ? heads_gradient_deviation(engine, spec, QkvSource::layers({m}), b_h, run.frames, times)
                                : std::numeric_limits<double>::quiet_NaN();
    b.row({"attention-heads3-uniform-energy",
           "Three heads, uniform normalizer (USA), Q_h = I, K_h = V_h = B_h symmetric positive definite: "
           "the flow is the gradient flow dx_j/dt = P_j grad_j E / (2 beta n) of "
           "E = sum_h sum_jk exp(beta <Q_h x_j, K_h x_k>), so E is non-decreasing (Post-LN, n = 8, d = 3, beta = 1)",
           "normdyn run with model.scheme = \"post\", model.n = 8, model.d = 3, model.beta = 1, model.heads = 3, "
           "attention.normalizer = \"uniform\", model.qkv = \"file\" holding Q_h = I, K_h = V_h = I + S_h/(2|S_h|) "
           "(S_h the symmetric part of a Gaussian matrix, seeds 11, 12, 13), init.seed = 4, solver.t_end = 20",
           complete ? "largest relative decrease of E between consecutive frames: " + num(worst, 3) +
                          "; E grew by a factor " + num(rise, 4) +
                          "; velocity against P_j grad_j E/(2 beta n) (gradient by central differences in "
                          "the row, every 20th frame): largest relative deviation " +
                          num(gradient, 3)
                    : "the run ended with status " + std::string(to_string(run.status)),
           "<= 0 (non-decreasing); deviation 0",
           "largest relative decrease <= " + num(kEnergyTolerance) + ", deviation <= " + num(kGradientTolerance),
           complete && worst <= kEnergyTolerance && gradient <= kGradientTolerance ? "holds" : "fails"});
  });

  b.study("Sinkhorn attention: hemisphere clustering", [&] {
    const Index tokens = 16, dim = 3;
    const double t_end = 40.0;
    const std::vector<double> times = linear_times(t_end, 80);
    DynamicsSpec spec = dynamics_spec(PostLN{}, 1.0, o.threads);
    spec.attention.normalizer = Sinkhorn{};
    for (const std::uint64_t seed : {1u, 2u}) {
      // Every pairwise cosine at least 0.5: the hemisphere about w = x_1(0) holds every token.
      const Tokens start = cap_tokens(tokens, dim, 1.0, 0.5, seed);
      const Eigen::RowVectorXd w = start.theta.row(0);
      const ParticleRun run = run_particles(engine, spec, QkvSource::identity(), start, times, 1e-11, 1e-13);
      const bool complete = run.status == RunStatus::ok && run.frames.size() == times.size();
      double least_start = 0.0, fall = -std::numeric_limits<double>::infinity(), spread = 0.0;
      if (complete) {
        least_start = (start.theta * w.transpose()).minCoeff();
        double previous = least_start;
        for (const Tokens& f : run.frames) {
          const double least = (f.theta * w.transpose()).minCoeff();
          fall = std::max(fall, previous - least);
          previous = least;
        }
        const Eigen::RowVectorXd mean = run.frames.back().theta.colwise().mean().normalized();
        spread = (run.frames.back().theta.rowwise() - mean).rowwise().norm().maxCoeff();
      }
      const reference::Head head = reference::identity_head(dim, 1.0, reference::Weights::sinkhorn);
      const double deviation =
          complete
              ? reference::velocity_deviation(
                    engine, spec, QkvSource::identity(), run.frames, times, 10,
                    [&](const Tokens& f) { return reference::tangential(f.theta, reference::output(head, f.theta)); })
              : std::numeric_limits<double>::quiet_NaN();
      b.row({"attention-sinkhorn-hemisphere-seed" + std::to_string(seed),
             "Sinkhorn attention (doubly stochastic weights), V = I: tokens in an open hemisphere about w collapse to "
             "one point, and min_i <w, x_i> never decreases (Post-LN, Q = K = V = I, n = 16, d = 3, beta = 1); the "
             "velocity is P_x of the doubly stochastic attention",
             "normdyn run with model.scheme = \"post\", model.n = 16, model.d = 3, model.beta = 1, "
             "attention.normalizer = \"sinkhorn\", init.kind = \"cap\", init.delta = 0.5, init.seed = " +
                 std::to_string(seed) + ", solver.t_end = 40, output.samples = 80, solver.rtol = 1e-11; w = x_1(0)",
             complete ? "min_i <w, x_i> went from " + num(least_start, 4) + " and fell by at most " + num(fall, 3) +
                            " between frames; at t = 40 every token within " + num(spread, 3) +
                            " of the mean direction; velocity against the row's Sinkhorn weights (every 10th frame): "
                            "largest relative deviation " +
                            num(deviation, 3)
                      : "the run ended with status " + std::string(to_string(run.status)),
             "0, 0 and 0",
             "fall <= " + num(kHemisphereTolerance) + ", collapse <= " + num(kCollapseTolerance) +
                 " at t = 40, velocity deviation <= " + num(kVelocityTolerance),
             complete && fall <= kHemisphereTolerance && spread <= kCollapseTolerance && deviation <= kVelocityTolerance
                 ? "holds"
                 : "fails"});
    }
  });

  b.study("Sinkhorn attention: doubly stochastic weights", [&] {
    // Pre-LN at radius 1 gives the attention output back, A_i = dθ_i/dt + (dr_i/dt) θ_i; with V = I and
    // n = d linearly independent tokens, A = W X determines the weights W.
    const Index tokens = 6;
    DynamicsSpec spec = dynamics_spec(PreLN{}, 1.0, o.threads);
    spec.attention.normalizer = Sinkhorn{};
    AttentionMatrices m = QkvSource::gaussian(tokens, 3).at(0.0);
    m.V = RowMatrix::Identity(tokens, tokens);
    const Tokens x = uniform_tokens(tokens, tokens, 1.0, 3);
    const Tokens v = engine_velocity(engine, spec, QkvSource::layers({m}), x, 0.0);
    RowMatrix a = v.theta;
    for (Index i = 0; i < tokens; ++i) a.row(i) += v.r(i) * x.theta.row(i);
    const Eigen::FullPivLU<Eigen::MatrixXd> lu(x.theta.transpose());
    const RowMatrix w = lu.solve(Eigen::MatrixXd(a.transpose())).transpose();
    const double rows = (w.rowwise().sum().array() - 1.0).abs().maxCoeff();
    const double columns = (w.colwise().sum().array() - 1.0).abs().maxCoeff();
    const reference::Head head{m.Q, m.K, m.V, 1.0, false, 0.0, reference::Weights::sinkhorn};
    const double off = (w - reference::weights(head, x.theta)).cwiseAbs().maxCoeff();
    const double condition = 1.0 / lu.rcond();
    const bool ok = std::isfinite(rows) && std::isfinite(columns) && rows <= kDoublyStochasticTolerance &&
                    columns <= kDoublyStochasticTolerance && off <= kDoublyStochasticTolerance;
    b.row({"attention-sinkhorn-doubly-stochastic",
           "Sinkhorn attention (Sander, Ablin, Blondel and Peyre 2022 [P, authors' code]): the weights are "
           "diag(u) e^{beta <Q x_i, K x_j>} diag(v) with every row and column summing to 1 (Gaussian Q, K, V = I, "
           "n = d = 6)",
           "normdyn run with model.scheme = \"pre\", model.n = 6, model.d = 6, model.beta = 1, attention.normalizer = "
           "\"sinkhorn\", model.qkv = \"file\" holding Q, K of model.qkv = \"gaussian\" with model.qkv_seed = 3 and V "
           "= I, "
           "init.seed = 3; the weights solved from the velocity at t = 0",
           "largest |row sum - 1| " + num(rows, 3) + ", |column sum - 1| " + num(columns, 3) +
               "; largest difference from the row's own Sinkhorn weights " + num(off, 3) +
               " (condition number of the "
               "tokens " +
               num(condition, 3) + ")",
           "0, 0 and 0",
           "each <= " + num(kDoublyStochasticTolerance) + " (attention.sinkhorn_tol = 1e-12 and the read-back)",
           ok ? "holds" : "fails"});
  });

  b.study("causal attention with V = I", [&] {
    const Index tokens = 6, dim = 3;
    const double t_end = 80.0;
    const std::vector<double> times = linear_times(t_end, 80);
    // Without and with ALiBi (slope 4: the farthest key's weight shrinks by e^{-10/3}); the theorem's
    // argument needs only positive weights bounded below, which the bias keeps.
    for (const double alibi : {0.0, 4.0})
      for (const std::uint64_t seed : {1u, 2u}) {
        DynamicsSpec spec = dynamics_spec(PostLN{}, 1.0, o.threads);
        spec.attention.mask = CausalMask{};
        if (alibi > 0.0) spec.attention.bias = Alibi{alibi};
        // Q, K Gaussian N(0, 1/d) from the seed's stream of attention matrices; V = I.
        AttentionMatrices m = QkvSource::gaussian(dim, seed).at(0.0);
        m.V = RowMatrix::Identity(dim, dim);
        const Tokens start = uniform_tokens(tokens, dim, 1.0, seed);
        const ParticleRun run = run_particles(engine, spec, QkvSource::layers({m}), start, times, 1e-11, 1e-13);
        const bool complete = run.status == RunStatus::ok && run.frames.size() == times.size();
        double first_moved = 0.0, distance = 0.0, deviation = std::numeric_limits<double>::quiet_NaN();
        if (complete) {
          for (const Tokens& f : run.frames)
            first_moved = std::max(first_moved, (f.theta.row(0) - start.theta.row(0)).norm());
          distance = (run.frames.back().theta.rowwise() - start.theta.row(0)).rowwise().norm().maxCoeff();
          const reference::Head head{m.Q, m.K, m.V, 1.0, true, alibi, reference::Weights::softmax};
          deviation = reference::velocity_deviation(
              engine, spec, QkvSource::layers({m}), run.frames, times, 4,
              [&](const Tokens& f) { return reference::tangential(f.theta, reference::output(head, f.theta)); });
        }
        const std::string with = alibi > 0.0 ? " and ALiBi b_ij = -4 |i - j|/n" : "";
        b.row(
            {std::string(alibi > 0.0 ? "attention-causal-alibi-v-identity-seed" : "attention-causal-v-identity-seed") +
                 std::to_string(seed),
             "Causal attention" + with + ", V = I (Karagodin, Polyanskiy and Rigollet 2024, Theorem 4.1 [P, abstract]" +
                 (alibi > 0.0 ? "; with the bias by the theorem's argument, which needs only positive weights" : "") +
                 "): the first token stays at x_1(0) and every token converges to it; the velocity is P_x of the "
                 "causal "
                 "softmax attention (Post-LN, Q and K Gaussian, n = 6, d = 3, beta = 1)",
             "normdyn run with model.scheme = \"post\", model.n = 6, model.d = 3, model.beta = 1, attention.mask = "
             "\"causal\", " +
                 std::string(alibi > 0.0 ? "attention.bias = \"alibi\", attention.alibi_slope = 4, " : "") +
                 "model.qkv = \"file\" holding Q, K of model.qkv = \"gaussian\" with model.qkv_seed = " +
                 std::to_string(seed) + " and V = I, init.kind = \"uniform\", init.seed = " + std::to_string(seed) +
                 ", solver.t_end = 80",
             complete ? "first token moved by at most " + num(first_moved, 3) + "; at t = 80 every token within " +
                            num(distance, 3) + " of x_1(0); velocity against the row's causal softmax" +
                            (alibi > 0.0 ? " with ALiBi" : "") + " (every 4th frame): largest relative deviation " +
                            num(deviation, 3)
                      : "the run ended with status " + std::string(to_string(run.status)),
             "0, 0 and 0",
             "first token unmoved (<= 1e-14), every token within " + num(kCausalTolerance) +
                 " at t = 80, velocity deviation <= " + num(kVelocityTolerance),
             complete && first_moved <= 1e-14 && distance <= kCausalTolerance && deviation <= kVelocityTolerance
                 ? "holds"
                 : "fails"});
      }
  });
}

}  // namespace normdyn::studies
