#include "normdyn/analyze/theory.hpp"

namespace normdyn {
namespace {

std::string parameter_name(std::string_view law) {
  if (law == "exponential") return "lambda";
  if (law == "power") return "p";
  if (law == "stretched_exponential") return "kappa";
  return "";
}

std::string law_formula(std::string_view law) {
  if (law == "exponential") return "1 - gamma(t) ~ C exp(-lambda t)";
  if (law == "power") return "1 - gamma(t) ~ C t^(-p)";
  if (law == "stretched_exponential") return "1 - gamma(t) ~ C exp(-kappa sqrt(t))";
  return "";
}

}  // namespace

std::vector<TheoryStatement> theory_statements(const Scheme& scheme) {
  std::vector<TheoryStatement> out;
  const bool radius = scheme_has_radius(scheme);
  const std::string speed(std::visit([](const auto& s) { return std::string(s.speed_formula); }, scheme));
  const std::optional<SchemeTheory> theory = scheme_theory(scheme);

  out.push_back(
      {"Theorem 3.1",
       radius ? "from Gaussian tokens, either every token synchronizes (all theta_j converge to one point) "
                "or some radius stalls (liminf dr_j/dt = 0)"
              : "for almost every uniform start, every token synchronizes (all theta_j converge to one point)",
       "",
       "",
       0.0,
       {"Q = K = V = I", "d >= 2", radius ? "Gaussian start x_j ~ N(0, I_d)" : "uniform start on the sphere"}});
  if (theory && theory->radial_alignment_bound)
    out.push_back({"Corollary of Theorem 3.1",
                   "if n <= e^beta, <theta_j, A_j> >= (e^beta - n + 1) / (n e^beta) > 0 along the flow: no radius "
                   "stalls and every token synchronizes",
                   "",
                   "",
                   0.0,
                   {"Q = K = V = I", "n <= e^beta"}});
  if (theory) {
    std::vector<std::string> symmetric{"d >= n", "theta_j(0) orthonormal", "equal radii r_j(0) = r0", "Q = K = V = I"};
    out.push_back(
        {"Theorem 4.1",
         "all pairwise cosines stay equal to gamma(t), with d gamma/dt(0) = (1/s_j + 1/s_k) / (e^beta + n - 1), "
         "s = " +
             speed + " at the start",
         "", "", 0.0, symmetric});
    const std::string law(theory->symmetric_law);
    if (!law.empty())
      out.push_back({"Theorem 4.1", law_formula(law) + " as t -> infinity", law, parameter_name(law),
                     theory->symmetric_parameter, symmetric});
    else
      out.push_back({"Theorem 4.1",
                     "1 - gamma(t) ~ C exp(-2 T(t)) with the clock T(t) = int_0^t dt / s (none of the named laws for "
                     "these parameters)",
                     "", "", 0.0, symmetric});
  }
  std::vector<std::string> consensus{
      "V = I", "|Q^T K| <= 1", "every pairwise cosine >= 1 - delta at the start, delta < 1 / (100 n^2 max(beta, 1)^2)"};
  out.push_back({"Theorem 4.3",
                 "near consensus dVar/dt = -Theta(Var / scale(t)), scale(t) = the speed factor s = " + speed +
                     " with <theta_j, A_j> = |A_j| = 1",
                 "", "", 0.0, consensus});
  if (theory && theory->radial_growth)
    out.push_back({"Theorem 4.3", "near consensus the radii grow at least like (1 - delta) t", "", "", 0.0, consensus});
  return out;
}

}  // namespace normdyn
