#pragma once
// A term of the user's own, added to the block output like the built-in terms (terms.hpp):
//
//   U_i = A_i + F_i + f_i(t, θ, r),
//
// evaluated by a callback with the C signature
//
//   void f(double t, const double* theta, const double* r, double* out, int64_t n, int64_t d, void* user)
//
// (theta [n, d] and out [n, d] row-major, r [n]; `out` is zeroed by the caller and the term adds
// into it): a compiled function (a numba cfunc, a ctypes pointer, a scipy.LowLevelCallable, a
// symbol of a shared library named by [[terms]]) or the Python package's trampoline around a Python
// callable. It runs on the thread that evaluates the right-hand side. A term sees every token
// unless it declares `rows` (row i of its output depends on token i only), in which case it may be
// called on a block of tokens as the built-in terms are.
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "normdyn/alternatives.hpp"
#include "normdyn/ode_system.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn {

struct UserCallback {
  using Function = void (*)(double t, const double* theta, const double* r, double* out, std::int64_t n, std::int64_t d,
                            void* user);
  Function function = nullptr;
  void* user = nullptr;
  // For a callback that can fail otherwise than by NaN (a Python callable that raised or returned the
  // wrong shape): why its last call failed, or nullptr.
  const char* (*failure)(void* user) = nullptr;
  // Keeps alive what `function` and `user` point into (a Python object, a loaded library, the
  // parameter values).
  std::shared_ptr<const void> owner;
};

struct UserTerm {
  static constexpr std::string_view key = "user";
  static constexpr std::string_view title = "a term of the user's (Python or compiled)";
  static constexpr std::string_view formula = "f(t, theta, r) added to the block output";
  static constexpr std::array<ParamSpec<UserTerm>, 0> params{};

  std::string name;
  std::shared_ptr<const UserCallback> callback;
  bool rows = false;

  // out.row(i) += f_i(t, θ, r) for the rows given (every token unless `rows`; row i is token
  // first_token + i). Throws TermFailure naming the term, and the token where a value is not finite,
  // when the callback failed or returned a non-finite value.
  void add(double t, Eigen::Ref<const RowMatrix> theta, Eigen::Ref<const Vector> r, Eigen::Ref<RowMatrix> out,
           Index first_token) const {
    // One buffer per thread, kept between calls: a fresh [n, d] allocation per right-hand side pays
    // its page faults again on every call at large n.
    thread_local RowMatrix scratch;
    scratch.resize(theta.rows(), theta.cols());
    scratch.setZero();
    RowMatrix& block = scratch;
    RowMatrix copy;
    const double* x = theta.data();
    if (theta.outerStride() != theta.cols()) {
      copy = theta;
      x = copy.data();
    }
    callback->function(t, x, r.data(), block.data(), static_cast<std::int64_t>(theta.rows()),
                       static_cast<std::int64_t>(theta.cols()), callback->user);
    if (callback->failure)
      if (const char* why = callback->failure(callback->user))
        throw TermFailure("the term '" + name + "' failed at t = " + std::to_string(t) + ": " + why);
    if (!block.allFinite()) {
      Index i = 0, k = 0;
      for (i = 0; i < block.rows(); ++i) {
        for (k = 0; k < block.cols(); ++k)
          if (!std::isfinite(block(i, k))) break;
        if (k < block.cols()) break;
      }
      throw TermFailure("the term '" + name + "' returned a non-finite value (token " +
                        std::to_string(first_token + i) + ", column " + std::to_string(k) +
                        ") at t = " + std::to_string(t));
    }
    out += block;
  }
  double potential(Eigen::Ref<const RowMatrix>) const { return 0.0; }
  // Nothing is known of it: no energy, no symmetry of the tokens or of space, no mean field.
  Traits traits() const {
    Traits t;
    t.exchangeable = false;
    t.rotation_equivariant = false;
    t.has_energy = false;
    t.meanfield = false;
    return t;
  }
};

}  // namespace normdyn
