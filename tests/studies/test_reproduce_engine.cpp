// The theorem rows of `normdyn reproduce` catch a wrong engine: each mutant below (defined here,
// handed to the rows as ReproduceOptions::engine, so the library is built once) makes at least one
// row that holds on the library's engine stop holding. The mutants are the mistakes the rows exist
// for: nGPT's alpha ignored, a speed factor that forgets the radius, a radial rate twice too fast,
// and a Post-LN rate 9 % too fast (which the asymptotic rows alone must not let pass); for the models
// beyond the paper, softmax in place of Sinkhorn or of the uniform normalizer, a causal softmax
// normalized as USA, ALiBi dropped, the causal mask dropped, a head sum divided by H and a wrong
// activation; for the noisy models, a noise too strong or dropped and tree increments ignored.
#define BOOST_TEST_MODULE studies_reproduce_engine
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <map>
#include <memory>
#include <set>

#include "../../studies/renyi_centres.hpp"
#include "normdyn/dynamics.hpp"
#include "normdyn/init.hpp"
#include "normdyn/studies/engine.hpp"
#include "normdyn/studies/reproduce.hpp"

using namespace normdyn;
using namespace normdyn::studies;

namespace {

// AttentionDynamics with its velocity changed after the fact by `mutate(layout, x, dxdt)`.
class MutatedDynamics final : public OdeSystem {
 public:
  using Mutation = std::function<void(const StateLayout&, const double* x, double* dxdt)>;
  MutatedDynamics(const DynamicsSpec& spec, QkvSource qkv, Index n, Index d, Mutation m)
      : inner_(spec, std::move(qkv), n, d), layout_{n, d}, mutate_(std::move(m)) {}
  std::size_t size() const override { return inner_.size(); }
  void rhs(const double* x, double* dxdt, double t) override {
    inner_.rhs(x, dxdt, t);
    mutate_(layout_, x, dxdt);
  }
  std::vector<double> breakpoints(double t0, double t1) const override { return inner_.breakpoints(t0, t1); }
  void enter_piece(double t0, double t1) override { inner_.enter_piece(t0, t1); }
  double retract(double* x) const override { return inner_.retract(x); }
  // With noise, the mutation applies to a step's increment (linear mutations scale drift and noise alike).
  bool noisy() const override { return inner_.noisy(); }
  void increment(const double* x, double t, double h, const NoiseStep& step, double* dx) override {
    inner_.increment(x, t, h, step, dx);
    mutate_(layout_, x, dx);
  }

 private:
  AttentionDynamics inner_;
  StateLayout layout_;
  Mutation mutate_;
};

// An engine whose velocity `mutation(scheme)` changes (no change where it returns nothing).
Engine mutant(std::string name, std::function<MutatedDynamics::Mutation(const Scheme&)> mutation) {
  return {std::move(name),
          [mutation](const DynamicsSpec& spec, QkvSource qkv, Index n, Index d) -> std::unique_ptr<OdeSystem> {
            MutatedDynamics::Mutation m = mutation(spec.scheme);
            if (!m) return std::make_unique<AttentionDynamics>(spec, std::move(qkv), n, d);
            return std::make_unique<MutatedDynamics>(spec, std::move(qkv), n, d, std::move(m));
          }};
}

// An engine that integrates `change(spec)` in place of the configured dynamics.
Engine spec_changed(std::string name, std::function<void(DynamicsSpec&)> change) {
  return {std::move(name),
          [change](const DynamicsSpec& spec, QkvSource qkv, Index n, Index d) -> std::unique_ptr<OdeSystem> {
            DynamicsSpec wrong = spec;
            change(wrong);
            return std::make_unique<AttentionDynamics>(wrong, std::move(qkv), n, d);
          }};
}

// nGPT integrated with alpha = 1 whatever the configuration says (the schedule's decay kept).
Engine alpha_ignored() {
  return spec_changed("alpha ignored", [](DynamicsSpec& s) {
    if (auto* g = std::get_if<NGPT>(&s.scheme)) g->alpha = 1.0;
  });
}

// Every token's direction moves r_j times too fast (Pre-LN's 1/r forgotten, and its kin's).
Engine speed_without_radius() {
  return mutant("speed factor without 1/r", [](const Scheme&) -> MutatedDynamics::Mutation {
    return [](const StateLayout& l, const double* x, double* dxdt) {
      auto dtheta = l.theta(dxdt);
      const auto r = l.r(x);
      for (Index j = 0; j < l.n; ++j) dtheta.row(j) *= r(j);
    };
  });
}

// dr/dt twice the scheme's.
Engine radial_rate_doubled() {
  return mutant("radial rate doubled", [](const Scheme&) -> MutatedDynamics::Mutation {
    return [](const StateLayout& l, const double*, double* dxdt) { l.r(dxdt) *= 2.0; };
  });
}

// Post-LN's directions 9 % too fast (the other schemes untouched).
Engine post_ln_rate_9_percent() {
  return mutant("Post-LN rate +9%", [](const Scheme& s) -> MutatedDynamics::Mutation {
    if (!std::holds_alternative<PostLN>(s)) return {};
    return [](const StateLayout& l, const double*, double* dxdt) { l.theta(dxdt) *= 1.09; };
  });
}

// The noise 10 % stronger than configured.
Engine noise_too_strong() {
  return spec_changed("noise sigma +10%", [](DynamicsSpec& s) {
    std::visit(
        [](auto& k) {
          if constexpr (requires { k.sigma; }) k.sigma *= 1.1;
        },
        s.noise.kind);
  });
}

// The noise dropped: the drift alone, whatever noise the row configures.
Engine noise_dropped() {
  return spec_changed("noise dropped", [](DynamicsSpec& s) {
    std::visit(
        [](auto& k) {
          if constexpr (requires { k.sigma; }) k.sigma = 0.0;
        },
        s.noise.kind);
  });
}

// Tree increments ignored: every run draws the counter streams, so that runs at h and h/2 follow
// unrelated paths.
Engine tree_ignored() {
  return spec_changed("tree increments ignored",
                      [](DynamicsSpec& s) { s.noise.increment_draws = NoiseIncrements::counter; });
}

// Softmax and the uniform normalizer swapped.
Engine normalizers_swapped() {
  return spec_changed("softmax and uniform swapped", [](DynamicsSpec& s) {
    if (std::holds_alternative<Softmax>(s.attention.normalizer))
      s.attention.normalizer = Uniform{};
    else if (std::holds_alternative<Uniform>(s.attention.normalizer))
      s.attention.normalizer = Softmax{};
  });
}

using Verdicts = std::map<std::string, std::string>;

// The groups cheap enough for the default suite (the initial slopes from the engine's velocity; the
// particles against the reduced ODE up to t = 8), and every group that integrates the engine.
const std::vector<std::string> kCheap = {"theorem-4.1-slopes", "theorem-4.1-particles"};
std::vector<std::string> engine_groups() {
  std::vector<std::string> out;
  for (const auto& g : reproduction_groups())
    if (g.uses_engine) out.push_back(g.key);
  return out;
}

Verdicts run(const Engine& engine, const std::vector<std::string>& groups, bool quick) {
  ReproduceOptions o;
  o.quick = quick;
  o.threads = 1;
  o.engine = engine;
  o.only = groups;
  const auto start = std::chrono::steady_clock::now();
  const Reproduction r = reproduce(o);
  BOOST_TEST_MESSAGE(engine.name << ": " << r.rows.size() << " rows in "
                                 << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
                                 << " s");
  for (const auto& t : r.timings) BOOST_TEST_MESSAGE("  " << t.name << ": " << t.seconds << " s");
  Verdicts v;
  for (const auto& row : r.rows) {
    v[row.id] = row.verdict;
    BOOST_TEST_MESSAGE("  " << row.id << ": " << row.verdict << "  (" << row.measured << ")");
  }
  return v;
}

// The library's verdicts, computed once per set of groups; none of its rows fails.
const Verdicts& reference(const std::vector<std::string>& groups, bool quick) {
  static std::map<std::pair<std::vector<std::string>, bool>, Verdicts> cache;
  auto it = cache.find({groups, quick});
  if (it == cache.end()) {
    it = cache.emplace(std::pair{groups, quick}, run(library_engine(), groups, quick)).first;
    for (const auto& [id, verdict] : it->second) BOOST_TEST(verdict != "fails", "the library's engine fails " << id);
  }
  return it->second;
}

// The rows that hold on the library's engine and not on the mutant's.
std::set<std::string> caught(const Engine& wrong, const std::vector<std::string>& groups, bool quick = true) {
  const Verdicts& good = reference(groups, quick);
  const Verdicts bad = run(wrong, groups, quick);
  std::set<std::string> out;
  std::string list;
  for (const auto& [id, verdict] : good)
    if (verdict == "holds" && bad.count(id) && bad.at(id) != "holds") {
      out.insert(id);
      list += " " + id + " (" + bad.at(id) + ")";
    }
  BOOST_TEST_MESSAGE(wrong.name << " caught by " << out.size() << " rows:" << list);
  return out;
}

}  // namespace

// Each mutant against the cheap groups: the rows named here (all of which hold on the library's
// engine) stop holding.
void expect_caught(const Engine& wrong, const std::set<std::string>& expected) {
  const std::set<std::string> rows = caught(wrong, kCheap);
  for (const std::string& id : expected) BOOST_TEST(rows.count(id) == 1u, wrong.name << " not caught by " << id);
}

BOOST_AUTO_TEST_CASE(alpha_ignored_is_caught) {
  // The initial slope 2 alpha/sqrt(e^2beta + n - 1) and the flow of the reduced ODE with alpha != 1.
  expect_caught(alpha_ignored(),
                {"4.1-slope-ngpt-alpha0.5-n16-beta1-r2", "4.1-slope-ngpt-alpha2-decay0.5-n16-beta1-r2",
                 "4.1-particles-ngpt-alpha0.5-n8-beta1-r2", "4.1-particles-ngpt-alpha2-decay0.5-n8-beta1-r2"});
}

BOOST_AUTO_TEST_CASE(speed_without_radius_is_caught) {
  // The slopes at r0 = 2 (Pre-LN's 2/(r0 (e^beta + n - 1))), and the radius schemes' flows at r0 = 1
  // (where the radii grow away from 1).
  expect_caught(speed_without_radius(),
                {"4.1-slope-pre-n16-beta1-r2", "4.1-slope-peri-n16-beta1-r2", "4.1-slope-post-n16-beta1-r2",
                 "4.1-particles-pre", "4.1-particles-peri", "4.1-particles-mix"});
}

BOOST_AUTO_TEST_CASE(radial_rate_doubled_is_caught) {
  // The radii against the reduced ODE's (the slopes at t = 0 do not see dr/dt).
  expect_caught(radial_rate_doubled(), {"4.1-particles-pre", "4.1-particles-peri", "4.1-particles-mix",
                                        "4.1-particles-pre-n8-beta1-r2", "4.1-particles-peri-n8-beta1-r2"});
}

BOOST_AUTO_TEST_CASE(post_ln_rate_9_percent_is_caught) {
  expect_caught(post_ln_rate_9_percent(), {"4.1-slope-post", "4.1-slope-post-n16-beta1-r2", "4.1-particles-post"});
}

// The models beyond the paper's attention: every row holds on the library's engine, and a wrong
// Post-LN rate fails the equiangular flows and their rates.
BOOST_AUTO_TEST_CASE(attention_models_hold_and_catch_a_wrong_rate) {
  const std::vector<std::string> group{"attention-models"};
  const Verdicts& good = reference(group, true);
  BOOST_TEST(good.size() == 14u);
  for (const auto& [id, verdict] : good) BOOST_TEST(verdict == "holds", id << ": " << verdict);
  const std::set<std::string> rows = caught(post_ln_rate_9_percent(), group);
  for (const char* id : {"attention-equiangular-softmax-rho0", "attention-equiangular-softmax-rho0.3",
                         "attention-equiangular-uniform-rho0", "attention-equiangular-softmax-rate",
                         "attention-equiangular-uniform-rate"})
    BOOST_TEST(rows.count(id) == 1u, id);
}

// Softmax in place of Sinkhorn (its weights are positive too, so the hemisphere argument holds for it).
Engine sinkhorn_as_softmax() {
  return spec_changed("softmax for Sinkhorn", [](DynamicsSpec& s) {
    if (std::holds_alternative<Sinkhorn>(s.attention.normalizer)) s.attention.normalizer = Softmax{};
  });
}

// A causal softmax normalized as USA (the weights still positive: the tokens still converge to x_1(0)).
Engine causal_wrong_normalizer() {
  return spec_changed("causal mask with the uniform normalizer", [](DynamicsSpec& s) {
    if (std::holds_alternative<CausalMask>(s.attention.mask)) s.attention.normalizer = Uniform{};
  });
}

Engine alibi_dropped() {
  return spec_changed("ALiBi dropped", [](DynamicsSpec& s) { s.attention.bias = NoBias{}; });
}

// The head sum divided by the number of heads (a gradient flow of E still, at a third of the speed).
Engine head_sum_over_heads() {
  return {"head sum / H", [](const DynamicsSpec& spec, QkvSource qkv, Index n, Index d) -> std::unique_ptr<OdeSystem> {
            const double heads = double(qkv.at(0.0).heads());
            if (heads == 1.0) return std::make_unique<AttentionDynamics>(spec, std::move(qkv), n, d);
            return std::make_unique<MutatedDynamics>(spec, std::move(qkv), n, d,
                                                     [heads](const StateLayout& l, const double*, double* dxdt) {
                                                       l.theta(dxdt) /= heads;
                                                       l.r(dxdt) /= heads;
                                                     });
          }};
}

// The rows that must stop holding for each wrong attention model, and that each holds on the library's.
BOOST_AUTO_TEST_CASE(attention_models_catch_wrong_normalizers_biases_and_head_sums) {
  const std::vector<std::string> group{"attention-models"};
  const std::vector<std::pair<Engine, std::vector<std::string>>> cases = {
      {sinkhorn_as_softmax(),
       {"attention-sinkhorn-hemisphere-seed1", "attention-sinkhorn-hemisphere-seed2",
        "attention-sinkhorn-doubly-stochastic"}},
      {causal_wrong_normalizer(),
       {"attention-causal-v-identity-seed1", "attention-causal-v-identity-seed2",
        "attention-causal-alibi-v-identity-seed1", "attention-causal-alibi-v-identity-seed2"}},
      {alibi_dropped(), {"attention-causal-alibi-v-identity-seed1", "attention-causal-alibi-v-identity-seed2"}},
      {head_sum_over_heads(), {"attention-heads3-uniform-energy"}},
  };
  for (const auto& [engine, expected] : cases) {
    const std::set<std::string> rows = caught(engine, group);
    for (const std::string& id : expected) BOOST_TEST(rows.count(id) == 1u, engine.name << " not caught by " << id);
  }
}

// One Pre-LN layer at long context: every row holds on the library's engine, and a doubled radial
// rate (which the rows read back as the attention output's component along the token) fails the
// closed form at finite n.
BOOST_AUTO_TEST_CASE(long_context_rows_hold_and_catch_a_doubled_radial_rate) {
  const std::vector<std::string> group{"long-context"};
  const Verdicts& good = reference(group, true);
  BOOST_TEST(good.size() == 14u);
  for (const auto& [id, verdict] : good) BOOST_TEST(verdict == "holds", id << ": " << verdict);
  const std::set<std::string> rows = caught(radial_rate_doubled(), group);
  for (const char* id : {"long-context-finite-n-rho0.5", "long-context-finite-n-rho0.2",
                         "long-context-attention-rho0.5-critical", "long-context-layer-rho0.2-sub"})
    BOOST_TEST(rows.count(id) == 1u, id);
}

// The stochastic flows: every row holds on the library's engine (the weak-order fits may be
// inconclusive only if their Monte Carlo error grows), a noise 10 % too strong fails the Brownian
// rows and the antipodal exponent of two tokens under common noise, and a dropped noise fails the
// rows of every noisy law.
BOOST_AUTO_TEST_CASE(noise_rows_hold_and_catch_a_wrong_sigma) {
  const std::vector<std::string> group{"noise"};
  const Verdicts& good = reference(group, true);
  BOOST_TEST(good.size() == 10u);
  for (const auto& [id, verdict] : good)
    if (id != "noise-value-depth-limit") BOOST_TEST(verdict == "holds", id << ": " << verdict);
  const std::set<std::string> rows = caught(noise_too_strong(), group);
  for (const char* id : {"noise-brownian-sphere-heun", "noise-brownian-sphere-em", "noise-common-antipodal-exponent"})
    BOOST_TEST(rows.count(id) == 1u, id);
  // Without the noise every row of a noisy law stops holding, the drift-only ones aside.
  const std::set<std::string> silent = caught(noise_dropped(), group);
  for (const char* id :
       {"noise-brownian-sphere-heun", "noise-brownian-sphere-em", "noise-kuramoto-kappa1", "noise-kuramoto-kappa4",
        "noise-common-antipodal-exponent", "noise-common-two-token-transition"})
    BOOST_TEST(silent.count(id) == 1u, id);
}

// The weak-order rows compare runs at h and h/2 on the same paths: without the tree the differences
// drown in the Monte Carlo error of f. (A second run of the whole noise group: in the slow part.)
BOOST_AUTO_TEST_CASE(weak_order_rows_catch_ignored_tree_increments, *boost::unit_test::disabled()) {
  const std::vector<std::string> group{"noise"};
  const std::set<std::string> untreed = caught(tree_ignored(), group);
  for (const char* id : {"noise-weak-order-heun", "noise-weak-order-em"}) BOOST_TEST(untreed.count(id) == 1u, id);
}

// Strong orders: the Heun rows hold on the library's engine (the Euler-Maruyama rows may be
// inconclusive at the quick sizes, never fail); without the tree the coarse runs follow other paths
// than the reference, and no error falls with h.
BOOST_AUTO_TEST_CASE(strong_order_rows_hold_and_catch_ignored_tree_increments) {
  const std::vector<std::string> group{"noise-strong-order"};
  const Verdicts& good = reference(group, true);
  BOOST_TEST(good.size() == 4u);
  for (const char* id : {"noise-strong-order-heun", "noise-strong-order-heun-circle"})
    BOOST_TEST(good.at(id) == "holds", id);
  const std::set<std::string> rows = caught(tree_ignored(), group);
  for (const char* id : {"noise-strong-order-heun", "noise-strong-order-heun-circle"})
    BOOST_TEST(rows.count(id) == 1u, id);
}

// The noisy pitchfork: every row holds on the library's engine; a noise 10 % too strong moves the
// ordered states' r (all but the most ordered one), and swapped normalizers move both sides at beta = 1 and 2.
// (Three runs of the group, some 25 s: in the slow part.)
BOOST_AUTO_TEST_CASE(pitchfork_rows_hold_and_catch_a_wrong_sigma_and_normalizer, *boost::unit_test::disabled()) {
  const std::vector<std::string> group{"noise-pitchfork"};
  const Verdicts& good = reference(group, true);
  BOOST_TEST(good.size() == 10u);
  for (const auto& [id, verdict] : good) BOOST_TEST(verdict == "holds", id << ": " << verdict);
  const std::set<std::string> strong = caught(noise_too_strong(), group);
  // (Not uniform-beta2-below: deep in the ordered phase, r = 0.952 moves by about 0.01 under it.)
  for (const char* id : {"noise-pitchfork-softmax-beta0-below", "noise-pitchfork-softmax-beta1-below",
                         "noise-pitchfork-softmax-beta2-below", "noise-pitchfork-uniform-beta1-below"})
    BOOST_TEST(strong.count(id) == 1u, id);
  const std::set<std::string> swapped = caught(normalizers_swapped(), group);
  for (const char* id : {"noise-pitchfork-softmax-beta1-below", "noise-pitchfork-softmax-beta2-below",
                         "noise-pitchfork-uniform-beta1-below", "noise-pitchfork-uniform-beta2-below",
                         "noise-pitchfork-softmax-beta2-above", "noise-pitchfork-uniform-beta2-above"})
    BOOST_TEST(swapped.count(id) == 1u, id);
}

// The feed-forward rows: every row holds on the library's engine, and a term integrated with the
// wrong activation (relu for tanh and gelu) fails the perceptron rows.
Engine activation_ignored() {
  return spec_changed("activation ignored", [](DynamicsSpec& s) {
    for (Term& t : s.terms.terms)
      if (auto* f = std::get_if<FeedForward>(&t)) f->activation = Relu{};
  });
}

// The term's velocity 1 % too large (with V = 0, an activation 1.01 sigma).
Engine activation_one_percent_large() {
  return {"activation +1%",
          [](const DynamicsSpec& spec, QkvSource qkv, Index n, Index d) -> std::unique_ptr<OdeSystem> {
            if (spec.terms.empty()) return std::make_unique<AttentionDynamics>(spec, std::move(qkv), n, d);
            return std::make_unique<MutatedDynamics>(
                spec, std::move(qkv), n, d,
                [](const StateLayout& l, const double*, double* dxdt) { l.theta(dxdt) *= 1.01; });
          }};
}

BOOST_AUTO_TEST_CASE(feedforward_rows_hold_and_catch_a_wrong_activation) {
  const std::vector<std::string> group{"terms"};
  const Verdicts& good = reference(group, true);
  BOOST_TEST(good.size() == 5u);
  for (const auto& [id, verdict] : good) BOOST_TEST(verdict == "holds", id << ": " << verdict);
  const std::set<std::string> rows = caught(activation_ignored(), group);
  for (const char* id : {"feedforward-perceptron-tanh", "feedforward-perceptron-gelu",
                         "feedforward-depth-limit-parallel", "feedforward-depth-limit-serial"})
    BOOST_TEST(rows.count(id) == 1u, id);
  const std::set<std::string> scaled = caught(activation_one_percent_large(), group);
  for (const char* id : {"feedforward-perceptron-tanh", "feedforward-perceptron-gelu"})
    BOOST_TEST(scaled.count(id) == 1u, id);
}

// The depth limit: the row's own network against the engine's ODE, so a Post-LN rate 9 % too fast fails
// the Post-LN row (and only the schemes that integrate Post-LN's rate).
BOOST_AUTO_TEST_CASE(depth_limit_rows_catch_a_wrong_rate) {
  const std::vector<std::string> group{"continuum-depth"};
  const Verdicts& good = reference(group, true);
  BOOST_TEST(good.size() == 6u);
  for (const auto& [id, verdict] : good) BOOST_TEST(verdict == "holds", id << ": " << verdict);
  const std::set<std::string> rows = caught(post_ln_rate_9_percent(), group);
  BOOST_TEST(rows.count("7-depth-post") == 1u);
}

// Every engine group at full size (Theorem 4.1's particles down to 1 - gamma = 1e-11 included), on
// the library's engine and each mutant; CTest runs it as studies/test_reproduce_engine_all (label
// slow). The 9 % Post-LN rate must also fail the asymptotic row, not only the exact ones.
BOOST_AUTO_TEST_CASE(every_engine_row, *boost::unit_test::disabled()) {
  const auto groups = engine_groups();
  for (const Engine& e : {alpha_ignored(), speed_without_radius(), radial_rate_doubled(), post_ln_rate_9_percent()}) {
    const std::set<std::string> rows = caught(e, groups, false);
    BOOST_TEST(!rows.empty(), e.name);
    if (e.name == post_ln_rate_9_percent().name) BOOST_TEST(rows.count("4.1-decay-post-n8-beta1-r2") == 1u);
  }
}

// The attention of every run changed after the fact: a wrong mask, normalizer or bias handed to the
// rows of the follow-up models.
Engine attention_changed(std::string name, std::function<void(AttentionSpec&)> change) {
  return spec_changed(std::move(name), [change](DynamicsSpec& s) { change(s.attention); });
}

// Rényi parking under causal attention: every row holds on the library's engine; full attention in
// place of the causal mask moves the centres (Lemma 5.1) and the first tokens (the circle form).
BOOST_AUTO_TEST_CASE(renyi_rows_hold_and_catch_a_dropped_mask) {
  const std::vector<std::string> group{"renyi"};
  const Verdicts& good = reference(group, true);
  BOOST_TEST(good.size() == 4u);
  for (const auto& [id, verdict] : good) BOOST_TEST(verdict == "holds", id << ": " << verdict);
  const std::set<std::string> rows =
      caught(attention_changed("causal mask dropped", [](AttentionSpec& a) { a.mask = NoMask{}; }), group);
  for (const char* id : {"renyi-capture", "renyi-lemma-5.1", "renyi-dynamics"}) BOOST_TEST(rows.count(id) == 1u, id);
}

// The count of strong Rényi centres is the row's own: uniform tokens give pi/delta on average, tokens
// in a cap (a start the count row must not pass) far fewer.
BOOST_AUTO_TEST_CASE(renyi_centre_count_tells_a_clustered_start) {
  const double delta = 0.5;
  double uniform = 0.0, cap = 0.0;
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    uniform += double(strong_renyi_centres(uniform_tokens(200, 2, 1.0, seed).theta, delta).size()) / 200.0;
    cap += double(strong_renyi_centres(cap_tokens(200, 2, 1.0, 0.5, seed).theta, delta).size()) / 200.0;
  }
  // pi/delta (1 - (1 - delta/pi)^200) = 6.2832; the standard error of 200 seeds is about 0.1.
  BOOST_TEST(std::abs(uniform - 6.2832) < 0.4, uniform);
  BOOST_TEST(cap < 4.0, cap);
}

// The ALiBi-causal USA model: the dynamics rows hold on the library's engine (the retrieval rows may
// be inconclusive in the quick report, never fail), and each of a causal mask that lets a token see
// itself, the softmax in place of the uniform normalizer, and a dropped ALiBi bias fails them.
BOOST_AUTO_TEST_CASE(lost_in_the_middle_rows_catch_a_wrong_mask_normalizer_or_bias) {
  const std::vector<std::string> group{"lost-in-the-middle"};
  const Verdicts& good = reference(group, true);
  BOOST_TEST(good.size() == 7u);
  for (const char* id : {"lost-in-the-middle-dynamics", "lost-in-the-middle-first-tokens"})
    BOOST_TEST(good.at(id) == "holds", id);
  for (const auto& [id, verdict] : good) BOOST_TEST(verdict != "fails", id);
  BOOST_TEST(good.count("lost-in-the-middle-closed-form-t2-convergence") == 1u);
  const std::set<std::string> causal =
      caught(attention_changed("causal for strictly causal", [](AttentionSpec& a) { a.mask = CausalMask{}; }), group);
  const std::set<std::string> softmax =
      caught(attention_changed("softmax for uniform", [](AttentionSpec& a) { a.normalizer = Softmax{}; }), group);
  for (const char* id : {"lost-in-the-middle-dynamics", "lost-in-the-middle-first-tokens"}) {
    BOOST_TEST(causal.count(id) == 1u, id);
    BOOST_TEST(softmax.count(id) == 1u, id);
  }
  const std::set<std::string> alibi =
      caught(attention_changed("ALiBi dropped", [](AttentionSpec& a) { a.bias = NoBias{}; }), group);
  BOOST_TEST(alibi.count("lost-in-the-middle-dynamics") == 1u);
}

// The groups of the follow-up literature: every row's verdict on the library's engine is not `fails`
// (the rows quoted from secondary sources may end `differs`), and each mutant makes the rows named
// fail outright.
void expect_failing(const Engine& wrong, const std::string& group, const std::set<std::string>& expected) {
  const Verdicts& good = reference({group}, true);
  const Verdicts bad = run(wrong, {group}, true);
  for (const std::string& id : expected) {
    BOOST_TEST(good.count(id) == 1u, id << " missing");
    BOOST_TEST((bad.count(id) && bad.at(id) == "fails"), wrong.name << " does not fail " << id);
  }
}

Engine mask_dropped() {
  return spec_changed("causal mask dropped", [](DynamicsSpec& s) { s.attention.mask = NoMask{}; });
}

Engine uniform_as_softmax() {
  return spec_changed("softmax for the uniform normalizer", [](DynamicsSpec& s) {
    if (std::holds_alternative<Uniform>(s.attention.normalizer)) s.attention.normalizer = Softmax{};
  });
}

BOOST_AUTO_TEST_CASE(causal_atlas_rows_catch_a_dropped_mask) {
  // The limits are a conjecture quoted from a secondary source: a seed may end `differs` (never `fails`,
  // which reference() checks); the first token's closed form is what the mutant breaks.
  const Verdicts& good = reference({"causal-atlas"}, true);
  BOOST_TEST(good.size() == 6u);
  std::set<std::string> all;
  for (const auto& [id, verdict] : good) all.insert(id);
  expect_failing(mask_dropped(), "causal-atlas", all);
}

BOOST_AUTO_TEST_CASE(usa_negative_beta_rows_catch_the_softmax) {
  const Verdicts& good = reference({"usa-circle-negative-beta"}, true);
  BOOST_TEST(good.size() == 2u);
  for (const auto& [id, verdict] : good) BOOST_TEST(verdict == "holds", id << ": " << verdict);
  expect_failing(uniform_as_softmax(), "usa-circle-negative-beta",
                 {"usa-circle-negative-beta-0.15", "usa-circle-negative-beta-0.05"});
}

BOOST_AUTO_TEST_CASE(multihead_rows_catch_a_wrong_head_sum_and_normalizer) {
  const Verdicts& good = reference({"multihead"}, true);
  BOOST_TEST(good.size() == 3u);
  for (const auto& [id, verdict] : good)
    if (id != "multihead-radial-shadow") BOOST_TEST(verdict == "holds", id << ": " << verdict);
  expect_failing(head_sum_over_heads(), "multihead",
                 {"multihead-aligned-energy-seed1", "multihead-aligned-energy-seed2"});
  expect_failing(uniform_as_softmax(), "multihead",
                 {"multihead-aligned-energy-seed1", "multihead-aligned-energy-seed2"});
}

BOOST_AUTO_TEST_CASE(perceptron_localization_rows_catch_a_wrong_activation) {
  const Verdicts& good = reference({"perceptron-localization"}, true);
  BOOST_TEST(good.size() == 2u);
  expect_failing(activation_one_percent_large(), "perceptron-localization",
                 {"perceptron-localization-relu-beta4", "perceptron-localization-tanh-beta4"});
  expect_failing(activation_ignored(), "perceptron-localization", {"perceptron-localization-tanh-beta4"});
}
