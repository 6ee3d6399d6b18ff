#include "normdyn/density.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <numbers>
#include <numeric>

#include "normdyn/init.hpp"
#include "normdyn/random.hpp"

namespace normdyn {
namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;

// 8-point Gauss–Legendre rule on [-1, 1].
constexpr std::array<double, 4> kGaussNodes{0.1834346424956498, 0.5255324099163290, 0.7966664774136267,
                                            0.9602898564975363};
constexpr std::array<double, 4> kGaussWeights{0.3626837833783620, 0.3137066458778873, 0.2223810344533745,
                                              0.1012285362903763};

double sinc(double x) { return std::abs(x) < 1e-8 ? 1.0 - x * x / 6.0 : std::sin(x) / x; }

// ∫_a^b exp(κ (cos(φ − μ) − 1)) dφ by Gauss–Legendre on `pieces` equal sub-intervals.
double bump_integral(double a, double b, double mu, double kappa, int pieces) {
  const double w = (b - a) / pieces;
  double sum = 0.0;
  for (int p = 0; p < pieces; ++p) {
    const double mid = a + (p + 0.5) * w;
    for (std::size_t q = 0; q < kGaussNodes.size(); ++q)
      for (double sign : {-1.0, 1.0}) {
        const double phi = mid + sign * 0.5 * w * kGaussNodes[q];
        sum += kGaussWeights[q] * std::exp(kappa * (std::cos(phi - mu) - 1.0));
      }
  }
  return 0.5 * w * sum;
}

double log_bessel_i(double nu, double x) {
  const double direct = std::cyl_bessel_i(nu, x);
  if (std::isfinite(direct) && direct > 1e-280) return std::log(direct);
  // Small x relative to ν: the power series in log form, I_ν(x) = (x/2)^ν Σ_k (x²/4)^k / (k! Γ(ν+k+1)).
  double term = 1.0, sum = 1.0;
  for (int k = 0; k < 10000; ++k) {
    term *= 0.25 * x * x / ((k + 1.0) * (nu + k + 1.0));
    sum += term;
    if (term < 1e-17 * sum) break;
  }
  return nu * std::log(0.5 * x) - std::lgamma(nu + 1.0) + std::log(sum);
}

// Wood (1994): a von Mises–Fisher direction on S^{d-1} about the unit vector `mean`.
Eigen::RowVectorXd von_mises_direction(const Eigen::RowVectorXd& mean, double kappa, Random& rng) {
  const Index d = mean.size();
  const double dm1 = static_cast<double>(d - 1);
  const double b = dm1 / (2.0 * kappa + std::sqrt(4.0 * kappa * kappa + dm1 * dm1));  // stable form
  const double x0 = (1.0 - b) / (1.0 + b);
  const double c = kappa * x0 + dm1 * std::log(1.0 - x0 * x0);
  double w = 0.0;
  for (;;) {
    // Z ~ Beta((d−1)/2, (d−1)/2) is (1 + t)/2 for t the first coordinate of a uniform point of S^{d-1}.
    const double z = 0.5 * (1.0 + random_direction(d, rng)(0));
    w = (1.0 - (1.0 + b) * z) / (1.0 - (1.0 - b) * z);
    double u = 0.0;
    while (u <= 0.0) u = rng.uniform();
    if (kappa * w + dm1 * std::log(1.0 - x0 * w) - c >= std::log(u)) break;
  }
  Eigen::RowVectorXd v = random_direction(d, rng);
  v -= v.dot(mean) * mean;
  const double norm = v.norm();
  if (norm == 0.0) return mean;
  return w * mean + std::sqrt(std::max(0.0, 1.0 - w * w)) * (v / norm);
}

Eigen::RowVectorXd centre_vector(double angle, Index d) {
  Eigen::RowVectorXd c = Eigen::RowVectorXd::Zero(d);
  c(0) = std::cos(angle);
  c(1) = std::sin(angle);
  return c;
}

}  // namespace

Density Density::perturbed_uniform(std::int64_t mode, double amplitude) {
  Density d;
  d.kind = Kind::perturbed_uniform;
  d.mode = mode;
  d.amplitude = amplitude;
  return d;
}

Density Density::von_mises(std::vector<double> centers, std::vector<double> kappa, std::vector<double> weights) {
  assert(!centers.empty() && kappa.size() == centers.size() && weights.size() == centers.size());
  Density d;
  d.kind = Kind::von_mises;
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  for (double& w : weights) w /= total;
  d.centers = std::move(centers);
  d.kappa = std::move(kappa);
  d.weights = std::move(weights);
  return d;
}

Density Density::from_cells(std::vector<double> values) {
  Density d;
  d.kind = Kind::cells;
  const double h = kTwoPi / static_cast<double>(values.size());
  const double mass = std::accumulate(values.begin(), values.end(), 0.0) * h;
  for (double& v : values) v /= mass;
  d.cells = std::move(values);
  return d;
}

Density Density::from_config(const InitConfig& init) {
  switch (init.kind) {
    case InitKind::perturbed_uniform:
      return perturbed_uniform(init.mode, init.amplitude);
    case InitKind::von_mises: {
      std::vector<double> kappa = init.kappa;
      if (kappa.size() == 1) kappa.assign(init.centers.size(), kappa.front());
      std::vector<double> weights = init.weights;
      if (weights.empty()) weights.assign(init.centers.size(), 1.0);
      return von_mises(init.centers, kappa, weights);
    }
    default:
      return uniform();
  }
}

std::vector<double> cell_averages(const Density& density, std::int64_t M) {
  assert(M >= 1);
  const auto m = static_cast<std::size_t>(M);
  const double h = kTwoPi / static_cast<double>(M);
  std::vector<double> rho(m, 1.0 / kTwoPi);
  switch (density.kind) {
    case Density::Kind::uniform:
      break;
    case Density::Kind::perturbed_uniform: {
      // (1/h) ∫ cos(mφ) over the cell = cos(m φ_i) sinc(m h / 2).
      const double k = static_cast<double>(density.mode);
      const double factor = density.amplitude * sinc(0.5 * k * h);
      for (std::size_t i = 0; i < m; ++i) {
        const double centre = (static_cast<double>(i) + 0.5) * h;
        rho[i] = (1.0 + factor * std::cos(k * centre)) / kTwoPi;
      }
      break;
    }
    case Density::Kind::von_mises: {
      std::fill(rho.begin(), rho.end(), 0.0);
      std::vector<double> bump(m);
      for (std::size_t b = 0; b < density.centers.size(); ++b) {
        const double kappa = density.kappa[b];
        // Sub-cells of at most a quarter of the bump's width 1/sqrt(κ).
        const int pieces = std::max(1, static_cast<int>(std::ceil(4.0 * h * std::sqrt(kappa))));
        double total = 0.0;
        for (std::size_t i = 0; i < m; ++i) {
          bump[i] = bump_integral(static_cast<double>(i) * h, static_cast<double>(i + 1) * h, density.centers[b], kappa,
                                  pieces);
          total += bump[i];
        }
        // bump[i] / total is the cell's share of the bump's mass; per radian, divide by h.
        for (std::size_t i = 0; i < m; ++i) rho[i] += density.weights[b] * bump[i] / (total * h);
      }
      break;
    }
    case Density::Kind::cells: {
      // Conservative remap of a piecewise-constant density: differences of its CDF at the new edges.
      const std::size_t src = density.cells.size();
      const double hs = kTwoPi / static_cast<double>(src);
      std::vector<double> prefix(src + 1, 0.0);
      for (std::size_t k = 0; k < src; ++k) prefix[k + 1] = prefix[k] + density.cells[k] * hs;
      auto cdf = [&](std::size_t edge) {
        // Edge e of the new grid sits at e·M'/M source cells: compute with integers to land exactly.
        const auto num = static_cast<unsigned long long>(edge) * src;
        const std::size_t k = static_cast<std::size_t>(num / m);
        if (k >= src) return prefix[src];
        const double frac = static_cast<double>(num % m) / static_cast<double>(m);
        return prefix[k] + frac * density.cells[k] * hs;
      };
      double below = cdf(0);
      for (std::size_t i = 0; i < m; ++i) {
        const double above = cdf(i + 1);
        rho[i] = (above - below) / h;
        below = above;
      }
      break;
    }
  }
  return rho;
}

double log_von_mises_normalizer(double kappa, Index d) {
  const double nu = 0.5 * static_cast<double>(d) - 1.0;
  return std::lgamma(0.5 * static_cast<double>(d)) + nu * std::log(2.0 / kappa) + log_bessel_i(nu, kappa);
}

double relative_density(const Density& density, const double* theta, Index d) {
  switch (density.kind) {
    case Density::Kind::uniform:
      return 1.0;
    case Density::Kind::perturbed_uniform:
      return 1.0 + density.amplitude * std::cos(static_cast<double>(density.mode) * std::atan2(theta[1], theta[0]));
    case Density::Kind::von_mises: {
      double f = 0.0;
      for (std::size_t b = 0; b < density.centers.size(); ++b) {
        const double dot = std::cos(density.centers[b]) * theta[0] + std::sin(density.centers[b]) * theta[1];
        f += density.weights[b] * std::exp(density.kappa[b] * dot - log_von_mises_normalizer(density.kappa[b], d));
      }
      return f;
    }
    case Density::Kind::cells: {
      double phi = std::atan2(theta[1], theta[0]);
      if (phi < 0.0) phi += kTwoPi;
      const std::size_t src = density.cells.size();
      const auto k = std::min(src - 1, static_cast<std::size_t>(phi / kTwoPi * static_cast<double>(src)));
      return kTwoPi * density.cells[k];
    }
  }
  return 1.0;
}

WeightedTokens density_tokens(const Density& density, Index n, Index d, Sampling sampling, double r0,
                              double radius_width, std::uint64_t seed) {
  assert(sampling != Sampling::grid || d == 2);
  WeightedTokens out{Tokens{RowMatrix(n, d), Vector::Constant(n, r0)}, Vector::Constant(n, 1.0 / double(n))};
  RowMatrix& theta = out.tokens.theta;
  switch (sampling) {
    case Sampling::sampled: {
      if (density.kind == Density::Kind::uniform) {
        theta = uniform_tokens(n, d, r0, seed).theta;
        break;
      }
      Random rng(seed, RandomStream::initial_density, 1);
      for (Index j = 0; j < n; ++j) {
        switch (density.kind) {
          case Density::Kind::von_mises: {
            const double u = rng.uniform();
            std::size_t b = 0;
            double cumulative = density.weights[0];
            while (u >= cumulative && b + 1 < density.weights.size()) cumulative += density.weights[++b];
            theta.row(j) = von_mises_direction(centre_vector(density.centers[b], d), density.kappa[b], rng);
            break;
          }
          default: {
            // Rejection from the uniform law; f is bounded by 1 + |a| (perturbed) or max cell · 2π.
            double bound = 1.0 + std::abs(density.amplitude);
            if (density.kind == Density::Kind::cells)
              bound = kTwoPi * *std::max_element(density.cells.begin(), density.cells.end());
            for (;;) {
              const Eigen::RowVectorXd v = random_direction(d, rng);
              if (rng.uniform() * bound < relative_density(density, v.data(), d)) {
                theta.row(j) = v;
                break;
              }
            }
          }
        }
      }
      break;
    }
    case Sampling::weighted: {
      Random rng(seed, RandomStream::initial_density, 2);
      for (Index j = 0; j < n; ++j) {
        theta.row(j) = random_direction(d, rng);
        out.masses(j) = relative_density(density, theta.row(j).data(), d);
      }
      out.masses /= out.masses.sum();
      break;
    }
    case Sampling::grid: {
      const std::vector<double> rho = cell_averages(density, n);
      const double h = kTwoPi / static_cast<double>(n);
      for (Index j = 0; j < n; ++j) {
        const double phi = (static_cast<double>(j) + 0.5) * h;
        theta(j, 0) = std::cos(phi);
        theta(j, 1) = std::sin(phi);
        out.masses(j) = rho[static_cast<std::size_t>(j)] * h;
      }
      out.masses /= out.masses.sum();
      break;
    }
  }
  if (radius_width > 0.0) {
    Random rng(seed, RandomStream::initial_density, 3);
    const double golden = 0.5 * (std::sqrt(5.0) - 1.0);
    for (Index j = 0; j < n; ++j) {
      const double u =
          sampling == Sampling::grid ? std::fmod((static_cast<double>(j) + 0.5) * golden, 1.0) : rng.uniform();
      out.tokens.r(j) = r0 + radius_width * (u - 0.5);
    }
  }
  return out;
}

}  // namespace normdyn
