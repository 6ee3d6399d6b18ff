// ---- Long context: one Pre-LN layer on n equiangular tokens with beta_n = gamma log n (Chen, Lin,
// Polyanskiy and Rigollet 2025, "Critical attention scaling in long-context transformers", the
// simplex case with Q = K = V = I).
//
// With unit tokens y_i, every pairwise cosine rho, the layer x_i <- alpha y_i + sum_j A_ij y_j
// (A the row softmax of beta <y_i, y_j>) keeps the tokens equiangular. Token i's own weight is
//   p = e^beta / (e^beta + (n - 1) e^{beta rho}) = 1 / (1 + (n - 1) n^{-gamma (1 - rho)}),
// and with S = sum_j y_j (<y_i, S> = s = 1 + (n - 1) rho, |S|^2 = n s) the output is
// c y_i + b S with b = (1 - p)/(n - 1), c = p - b + alpha, so the output cosine is exactly
//   (c^2 rho + 2 c b s + b^2 n s) / (c^2 + 2 c b s + b^2 n s)          at every finite n.
// As n -> infinity, p -> 0, 1/2 or 1 as gamma is below, at or above gamma_c = 1/(1 - rho), and the
// cosine tends to (1 + alpha)^2 rho / ((1 + alpha)^2 rho + (p + alpha)^2 (1 - rho)):
//   the attention alone (alpha = 0, the paper's figure):  1, 4 rho/(1 + 3 rho), rho;
//   the layer with its residual (alpha = 1, x <- x + A(LN(X)) with h = 1 from |x| = 1):
//                                          4 rho/(1 + 3 rho), 16 rho/(9 + 7 rho), rho.
// The distance to the limit falls like 1/n, except with the residual below gamma_c, where p itself
// is of order n^{-(1 - gamma/gamma_c)} and the distance falls at that rate.
//
// The engine's part: its Pre-LN velocity at radius 1 is dtheta/dt = P_theta A, dr/dt = <theta, A>,
// so A_i = dtheta_i/dt + (dr_i/dt) theta_i is the attention output of its kernel, from which the row
// forms both layers.
#include <algorithm>
#include <cmath>
#include <limits>

#include "normdyn/init.hpp"
#include "reproduce_studies.hpp"
#include "reproduce_support.hpp"

namespace normdyn::studies {
// Named, so that nothing here meets another study's helpers in a unity build.
namespace simplex_layer {

// The engine against the finite-n closed form: round-off of a d = 1024 kernel and Gram matrix.
constexpr double kLayerTolerance = 1e-11;
// The fitted exponent of the distance to the limit over the last factor of 4 in n, against its
// asymptotic value: at n = 256..1024 the slowest case (no residual, gamma = gamma_c/2, rho = 0.2)
// is at -0.90 on its way to -1.
constexpr double kExponentTolerance = 0.15;

struct Regime {
  const char* name;    // sub, critical, super
  double gamma_ratio;  // gamma / gamma_c
};
constexpr Regime kRegimes[] = {{"sub", 0.5}, {"critical", 1.0}, {"super", 2.0}};

double own_weight(double n, double rho, double gamma) {
  return 1.0 / (1.0 + (n - 1.0) * std::exp(-gamma * std::log(n) * (1.0 - rho)));
}

double finite_n_cosine(double n, double rho, double gamma, double alpha) {
  const double p = own_weight(n, rho, gamma), b = (1.0 - p) / (n - 1.0), c = p - b + alpha, s = 1.0 + (n - 1.0) * rho;
  const double common = 2.0 * c * b * s + b * b * n * s;
  return (c * c * rho + common) / (c * c + common);
}

double limit_cosine(double rho, double gamma_ratio, double alpha) {
  const double p = gamma_ratio < 1.0 ? 0.0 : gamma_ratio == 1.0 ? 0.5 : 1.0;
  const double u = (1.0 + alpha) * (1.0 + alpha) * rho, v = (p + alpha) * (p + alpha) * (1.0 - rho);
  return u / (u + v);
}

double limit_exponent(double gamma_ratio, double alpha) {
  return alpha > 0.0 && gamma_ratio < 1.0 ? -(1.0 - gamma_ratio) : -1.0;
}

std::string limit_text(const Regime& r, double alpha) {
  const bool sub = r.gamma_ratio < 1.0, critical = r.gamma_ratio == 1.0;
  if (alpha == 0.0) return sub ? "1" : critical ? "4 rho/(1 + 3 rho)" : "rho";
  return sub ? "4 rho/(1 + 3 rho)" : critical ? "16 rho/(9 + 7 rho)" : "rho";
}

// Largest |cos_ij - target| over the pairs i != j of the rows of z (normalized here).
double worst_pair(RowMatrix z, double target) {
  z.rowwise().normalize();
  const RowMatrix g = z * z.transpose();
  double worst = 0.0;
  for (Index i = 0; i < g.rows(); ++i)
    for (Index j = 0; j < g.cols(); ++j)
      if (const double e = std::abs(g(i, j) - target); i != j && !(e <= worst)) worst = e;  // NaN sticks
  return std::isfinite(worst) ? worst : std::numeric_limits<double>::infinity();
}

double mean_pair(RowMatrix z) {
  z.rowwise().normalize();
  return mean_cosine(z);
}

}  // namespace simplex_layer

void long_context(Builder& b) {
  const Engine& engine = b.engine();
  const ReproduceOptions& o = b.options();
  const std::vector<Index> sizes{64, 256, 1024};
  for (const double rho : {0.5, 0.2})
    b.study("long context, rho = " + num(rho, 2), [&] {
      const double gamma_c = 1.0 / (1.0 - rho);
      double worst_exact = 0.0;
      for (const simplex_layer::Regime& regime : simplex_layer::kRegimes) {
        const double gamma = regime.gamma_ratio * gamma_c;
        // Per alpha (0, 1): the engine's mean output cosine at each n.
        std::vector<double> measured[2];
        double worst[2] = {0.0, 0.0};
        for (const Index n : sizes) {
          const double nn = static_cast<double>(n);
          const Tokens start = equiangular_tokens(n, n, rho, 1.0, 1);
          const Tokens v = engine_velocity(engine, dynamics_spec(PreLN{}, gamma * std::log(nn), o.threads),
                                           QkvSource::identity(), start, 0.0);
          const RowMatrix attention = v.theta + v.r.asDiagonal() * start.theta;
          for (const int alpha : {0, 1}) {
            const RowMatrix out = attention + double(alpha) * start.theta;
            worst[alpha] = std::max(
                worst[alpha], simplex_layer::worst_pair(out, simplex_layer::finite_n_cosine(nn, rho, gamma, alpha)));
            measured[alpha].push_back(simplex_layer::mean_pair(out));
          }
        }
        for (const int alpha : {0, 1}) {
          worst_exact = std::max(worst_exact, worst[alpha]);
          const double limit = simplex_layer::limit_cosine(rho, regime.gamma_ratio, alpha),
                       expected = simplex_layer::limit_exponent(regime.gamma_ratio, alpha);
          std::vector<double> distance;
          for (const double c : measured[alpha]) distance.push_back(std::abs(c - limit));
          bool falling = true;
          for (std::size_t i = 1; i < distance.size(); ++i) falling = falling && distance[i] < distance[i - 1];
          const double exponent = std::log(distance.back() / distance[distance.size() - 2]) /
                                  std::log(double(sizes.back()) / double(sizes[sizes.size() - 2]));
          std::string seen;
          for (std::size_t i = 0; i < sizes.size(); ++i)
            seen +=
                (i ? ", " : "") + std::string("n = ") + std::to_string(sizes[i]) + ": " + num(measured[alpha][i], 8);
          const std::string what = alpha == 0 ? "the attention output alone" : "one Pre-LN layer x <- x + A(LN(X))";
          b.row({"long-context-" + std::string(alpha == 0 ? "attention" : "layer") + "-rho" + num(rho, 2) + "-" +
                     regime.name,
                 "Long context (Chen, Lin, Polyanskiy and Rigollet 2025, simplex case), " + what +
                     " with beta_n = gamma log n, gamma = " + num(regime.gamma_ratio, 2) +
                     " gamma_c (gamma_c = 1/(1 - rho)): the pairwise cosine of n equiangular tokens (rho = " +
                     num(rho, 2) + ") tends to " + simplex_layer::limit_text(regime, alpha) +
                     (alpha == 0 ? "" : " (the same computation with the residual)") +
                     ", the distance falling like n^" + num(expected, 2),
                 "normdyn run with model.scheme = \"pre\", model.n = model.d = 64, 256, 1024, model.beta = " +
                     num(gamma, 6) + " log n, init.kind = \"equiangular\", init.rho = " + num(rho, 2) +
                     ", solver.method = \"discrete\", solver.dt = 1, solver.t_end = 1" +
                     (alpha == 0 ? " (the row takes the layer's attention output A, before the residual)" : ""),
                 "mean pairwise cosine " + seen + "; distance to the limit falling by n^" + num(exponent, 3) +
                     " from n = 256 to 1024",
                 num(limit, 8) + ", n^" + num(expected, 2),
                 "the distance falls at every n, its exponent within " + num(simplex_layer::kExponentTolerance, 2) +
                     ", every cosine within " + num(simplex_layer::kLayerTolerance) + " of the finite-n closed form",
                 falling && std::abs(exponent - expected) <= simplex_layer::kExponentTolerance &&
                         worst[alpha] <= simplex_layer::kLayerTolerance
                     ? "holds"
                     : "fails"});
        }
      }
      b.row({"long-context-finite-n-rho" + num(rho, 2),
             "Long context, rho = " + num(rho, 2) +
                 ": at every n the engine's layer output (with and without the residual) "
                 "is equiangular with the cosine (c^2 rho + 2cbs + b^2 ns)/(c^2 + 2cbs + b^2 ns) of the closed form",
             "as the long-context-*-rho" + num(rho, 2) + "-* rows: n = 64, 256, 1024, gamma / gamma_c = 0.5, 1, 2",
             "largest |cos_ij - closed form| over every pair, n, gamma and residual: " + num(worst_exact, 3), "0",
             "<= " + num(simplex_layer::kLayerTolerance),
             worst_exact <= simplex_layer::kLayerTolerance ? "holds" : "fails"});
    });
}

}  // namespace normdyn::studies
