// ---- Terms of the block output: the feed-forward term F(x) = Σ_m ω_m σ(<a_m, x>) a_m against closed
// forms, each integrated by the engine.
//
// * One perceptron (M = 1, no attention: V = 0), Post-LN: dθ/dt = P_θ F(θ) = σ(<a, θ>) P_θ a, so the
//   angle φ between θ and a solves φ' = −σ(|a| cos φ) |a| sin φ, the same scalar equation for every
//   token.
// * With the uniform normalizer (USA) and Q = K = V = I, Post-LN, the flow is the gradient flow of
//   L = E + 2 β n Σ_i Φ(θ_i), E = Σ_jk e^{β<θ_j, θ_k>}: ∂E/∂θ_i = 2 β n A_i, so
//   dL/dt = 2 β n Σ_i |P_θi U_i|² >= 0.
// * The discrete layer maps of both blocks (parallel x + a(x) + g(x), serial x + a(x) + g(x + a(x)))
//   tend to the ODE of U = A + F at first order in the step.
//
// The references are the rows' own: the activations (tanh, gelu = u Phi(u)) and the layer maps with
// the softmax attention are written out in row_reference.hpp and below, never the library's, so a
// wrong activation or layer map in the library cannot agree with itself.
#include <cmath>

#include "normdyn/init.hpp"
#include "normdyn/solvers/layer_maps.hpp"
#include "reproduce_studies.hpp"
#include "reproduce_support.hpp"
#include "row_reference.hpp"

namespace normdyn::studies {
namespace {

// The angle of every token against the scalar equation integrated by RK4 with steps of 1e-4 (error
// ~1e-14); the particles run at rtol 1e-11.
constexpr double kAngleTolerance = 1e-8;
// Round-off and the integrator's error (rtol 1e-11) leave L's increments above this relative size.
constexpr double kLyapunovTolerance = 1e-9;
// The observed order of the layer maps within this of 1.
constexpr double kDepthOrderTolerance = 0.2;

// φ(t) of φ' = −σ(|a| cos φ) |a| sin φ by RK4 with steps of 1e-4, at `times`.
std::vector<double> perceptron_angle(double (*sigma)(double), double norm, double phi0,
                                     const std::vector<double>& times) {
  const auto f = [&](double phi) { return -sigma(norm * std::cos(phi)) * norm * std::sin(phi); };
  std::vector<double> out{phi0};
  double phi = phi0, t = times.front();
  for (std::size_t k = 1; k < times.size(); ++k) {
    const auto steps = static_cast<int>(std::ceil((times[k] - t) / 1e-4));
    const double h = (times[k] - t) / steps;
    for (int s = 0; s < steps; ++s) {
      const double k1 = f(phi), k2 = f(phi + 0.5 * h * k1), k3 = f(phi + 0.5 * h * k2), k4 = f(phi + h * k3);
      phi += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
    }
    t = times[k];
    out.push_back(phi);
  }
  return out;
}

FeedForward perceptron(const Eigen::RowVectorXd& a, const Activation& act) {
  FeedForward f;
  f.a = a;
  f.omega = Vector::Ones(1);
  f.activation = act;
  return f;
}

// The Pre-LN network with a feed-forward term, Q = K = V = I, written in the row: x_j = r_j θ_j and, per
// layer of step h, parallel x_j <- x_j + h (A_j(Θ) + F(θ_j)), serial x_j <- x_j + h A_j(Θ) and then
// x_j <- x_j + h F(θ_j') at the directions θ' that the attention sublayer left.
Tokens feedforward_network(Tokens x, const RowMatrix& a, const Vector& omega, double beta, double h, int layers,
                           bool serial) {
  const reference::Head head = reference::identity_head(x.d(), beta, reference::Weights::softmax);
  const auto perceptrons = [&](const RowMatrix& theta) {
    RowMatrix f = RowMatrix::Zero(theta.rows(), theta.cols());
    for (Index j = 0; j < theta.rows(); ++j)
      for (Index m = 0; m < a.rows(); ++m)
        f.row(j) += omega(m) * reference::gelu_activation(theta.row(j).dot(a.row(m))) * a.row(m);
    return f;
  };
  const auto step = [&](const RowMatrix& u) {
    for (Index j = 0; j < x.n(); ++j) {
      const Eigen::RowVectorXd y = x.r(j) * x.theta.row(j) + h * u.row(j);
      x.r(j) = y.norm();
      x.theta.row(j) = y / x.r(j);
    }
  };
  for (int l = 0; l < layers; ++l) {
    const RowMatrix attention = reference::output(head, x.theta);
    if (!serial) {
      step(attention + perceptrons(x.theta));
      continue;
    }
    step(attention);
    step(perceptrons(x.theta));
  }
  return x;
}

double tokens_distance(const Tokens& p, const Tokens& q) { return (p.theta - q.theta).norm() + (p.r - q.r).norm(); }

// The library's layer maps against the row's after 200 layers: round-off.
constexpr double kLayerMapTolerance = 1e-10;

}  // namespace

void terms(Builder& b) {
  const Engine& engine = b.engine();
  const ReproduceOptions& o = b.options();

  b.study("one perceptron on the sphere", [&] {
    const Index n = 6, d = 3;
    const std::vector<double> times = linear_times(6.0, 60);
    Eigen::RowVectorXd a(3);
    a << 1.2, -0.4, 0.9;
    for (const Activation& act : {Activation{Tanh{}}, Activation{Gelu{}}}) {
      DynamicsSpec spec = dynamics_spec(PostLN{}, 1.0, o.threads);
      spec.terms.terms.emplace_back(perceptron(a, act));
      AttentionMatrices none;
      none.identity = false;
      none.Q = none.K = RowMatrix::Identity(d, d);
      none.V = RowMatrix::Zero(d, d);
      const Tokens start = uniform_tokens(n, d, 1.0, 5);
      const ParticleRun run = run_particles(engine, spec, QkvSource::layers({none}), start, times, 1e-11, 1e-13);
      const bool complete = run.status == RunStatus::ok && run.frames.size() == times.size();
      double worst = 0.0;
      if (complete)
        for (Index j = 0; j < n; ++j) {
          const double phi0 = std::acos(std::clamp(start.theta.row(j).dot(a) / a.norm(), -1.0, 1.0));
          const std::vector<double> phi = perceptron_angle(
              std::holds_alternative<Tanh>(act) ? reference::tanh_activation : reference::gelu_activation, a.norm(),
              phi0, times);
          for (std::size_t k = 0; k < times.size(); ++k) {
            const double measured = std::acos(std::clamp(run.frames[k].theta.row(j).dot(a) / a.norm(), -1.0, 1.0));
            worst = std::max(worst, std::abs(measured - phi[k]));
          }
        }
      const std::string key(alternative_key(act));
      b.row(
          {"feedforward-perceptron-" + key,
           "One perceptron (" + key +
               ", M = 1, no attention), Post-LN: the angle phi between each token and a solves "
               "phi' = -sigma(|a| cos phi) |a| sin phi (sigma written in the row: tanh, or u Phi(u) for gelu)",
           "normdyn run with model.scheme = \"post\", model.n = 6, model.d = 3, model.qkv = \"file\" holding Q = K = I "
           "and V = 0, feedforward.weights = \"inline\", feedforward.a = [1.2, -0.4, 0.9], feedforward.omega = [1], "
           "feedforward.activation = \"" +
               key + "\", init.seed = 5, solver.t_end = 6, solver.rtol = 1e-11",
           complete ? "max |phi - phi_ODE| = " + num(worst, 3) + " over the 6 tokens and 61 times"
                    : "the run ended with status " + std::string(to_string(run.status)),
           "0", "<= " + num(kAngleTolerance), complete && worst <= kAngleTolerance ? "holds" : "fails"});
    }
  });

  b.study("feed-forward term with USA: Lyapunov function", [&] {
    const Index n = 8, d = 3;
    const double beta = 1.0;
    const std::vector<double> times = linear_times(10.0, 100);
    DynamicsSpec spec = dynamics_spec(PostLN{}, beta, o.threads);
    spec.attention.normalizer = Uniform{};
    FeedForward f;
    f.a = RowMatrix(3, d);
    f.a << 1.0, 0.5, -0.3, -0.8, 0.9, 0.2, 0.1, -0.6, 1.1;
    f.omega = Vector(3);
    f.omega << 0.7, -0.5, 1.2;
    f.activation = Tanh{};
    spec.terms.terms.emplace_back(f);
    const ParticleRun run =
        run_particles(engine, spec, QkvSource::identity(), uniform_tokens(n, d, 1.0, 8), times, 1e-11, 1e-13);
    const bool complete = run.status == RunStatus::ok && run.frames.size() == times.size();
    const auto lyapunov = [&](const RowMatrix& theta) {
      return (beta * theta * theta.transpose()).array().exp().sum() + 2.0 * beta * double(n) * f.potential(theta);
    };
    double worst = -std::numeric_limits<double>::infinity(), first = 0.0, last = 0.0;
    if (complete) {
      double previous = first = lyapunov(run.frames.front().theta);
      for (std::size_t k = 1; k < run.frames.size(); ++k) {
        const double l = lyapunov(run.frames[k].theta);
        worst = std::max(worst, (previous - l) / std::abs(previous));
        previous = l;
      }
      last = previous;
    }
    b.row({"feedforward-uniform-lyapunov",
           "Feed-forward term (tanh, M = 3) with the uniform normalizer (USA), Q = K = V = I, Post-LN: "
           "L = E + 2 beta n sum_i Phi(theta_i) is non-decreasing (a gradient flow)",
           "normdyn run with model.scheme = \"post\", model.n = 8, model.d = 3, model.beta = 1, attention.normalizer = "
           "\"uniform\", feedforward.weights = \"inline\" (a and omega in the row's source), feedforward.activation = "
           "\"tanh\", init.seed = 8, solver.t_end = 10",
           complete ? "largest relative decrease of L between frames: " + num(worst, 3) + "; L went from " +
                          num(first, 6) + " to " + num(last, 6)
                    : "the run ended with status " + std::string(to_string(run.status)),
           "<= 0 (non-decreasing)", "largest relative decrease <= " + num(kLyapunovTolerance),
           complete && worst <= kLyapunovTolerance ? "holds" : "fails"});
  });

  b.study("layer maps with a feed-forward term", [&] {
    const Index n = 8, d = 3;
    const double depth = 2.0;
    const std::vector<double> times{0.0, depth};
    for (const TermsBlock block : {TermsBlock::parallel, TermsBlock::serial}) {
      DynamicsSpec spec = dynamics_spec(PreLN{}, 1.0, o.threads);
      FeedForward f;
      f.a = RowMatrix(2, d);
      f.a << 0.9, -0.2, 0.4, -0.3, 0.8, 0.5;
      f.omega = Vector(2);
      f.omega << 1.0, -0.7;
      f.activation = Gelu{};
      spec.terms.terms.emplace_back(f);
      spec.terms.block = block;
      const bool serial = block == TermsBlock::serial;
      const Tokens start = uniform_tokens(n, d, 1.0, 3);
      const ParticleRun exact = run_particles(engine, spec, QkvSource::identity(), start, times, 1e-12, 1e-14);
      // The row's network against the engine's ODE (the order), and the library's network against the row's.
      std::vector<double> errors;
      double maps = 0.0;
      for (const double h : {0.02, 0.01}) {
        const Tokens mine = feedforward_network(start, f.a, f.omega, spec.beta, h, int(std::lround(depth / h)), serial);
        AttentionDynamics library(spec, QkvSource::identity(), n, d);
        const StateLayout layout{n, d};
        std::vector<double> x0(layout.size());
        layout.pack(start, x0.data());
        FrameRecorder net;
        net.layout = layout;
        run_layers(library, x0, 0.0, h, times, 0, net);
        if (exact.status == RunStatus::ok && exact.frames.size() == times.size() && net.frames.size() == times.size()) {
          errors.push_back(tokens_distance(mine, exact.frames.back()));
          maps = std::max(maps, tokens_distance(mine, net.frames.back()));
        }
      }
      const bool complete = errors.size() == 2;
      const double order = complete ? std::log2(errors[0] / errors[1]) : std::numeric_limits<double>::quiet_NaN();
      const std::string name = serial ? "serial" : "parallel";
      b.row({"feedforward-depth-limit-" + name,
             "The " + name +
                 " layer maps with a feed-forward term (Pre-LN, gelu, M = 2) tend to the ODE of U = A + F "
                 "at first order in the layer step (the maps written in the row: " +
                 (serial ? std::string("x <- x + h A(LN X), then x <- x + h F(LN x)")
                         : std::string("x <- x + h (A(LN X) + F(LN x))")) +
                 "), and the library's discrete solver computes the same maps",
             "normdyn run with model.scheme = \"pre\", model.n = 8, model.d = 3, model.beta = 1, solver.method = "
             "\"discrete\", solver.dt = 0.02 and 0.01, feedforward.block = \"" +
                 name + "\", against the ODE at solver.rtol = 1e-12, t = 2",
             complete ? "the row's network against the engine's ODE: errors " + num(errors[0], 3) + " and " +
                            num(errors[1], 3) + ": order " + num(order, 4) +
                            "; the library's network against the row's: " + num(maps, 3)
                      : "a run ended early",
             "1 and 0", "|order - 1| <= " + num(kDepthOrderTolerance) + ", maps within " + num(kLayerMapTolerance),
             complete && std::abs(order - 1.0) <= kDepthOrderTolerance && maps <= kLayerMapTolerance ? "holds"
                                                                                                     : "fails"});
    }
  });
}

}  // namespace normdyn::studies
