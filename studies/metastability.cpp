// Metastability (Post-LN with Q = K = V = I at large beta, "Dynamic metastability in the
// self-attention model", arXiv:2410.06833): the staircase of cluster counts on S^1 and S^2 over
// log-spaced times, the (beta, t) phase diagram of synchronized pairs from an in-process ensemble,
// and Peri-LN against Post-LN at equal depth (the secondary sources' "Peri-LN a particularly
// effective choice": it moves fast early yet collapses only polynomially).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "frame_statistics.hpp"
#include "normdyn/analysis/metastability.hpp"
#include "normdyn/experiment/ensemble.hpp"
#include "normdyn/sweep.hpp"
#include "reproduce_studies.hpp"

namespace normdyn::studies {

namespace {

std::string circle_toml(Index d, double beta, int seed, double t_end, int frames) {
  return "[model]\nscheme = \"post\"\nn = 32\nd = " + std::to_string(d) + "\nbeta = " + num(beta, 17) +
         "\n[init]\nkind = \"uniform\"\nseed = " + std::to_string(seed) +
         "\n[solver]\nmethod = \"dopri5\"\nrtol = 1e-8\natol = 1e-10\nthreads = 1\nt_end = " + num(t_end, 17) +
         "\n[output]\nlog_times = [0.1, " + num(t_end, 17) + ", " + std::to_string(frames) + "]\nobservables = false\n";
}

std::string list_text(const std::vector<double>& v) {
  std::string s;
  for (double x : v) s += (s.empty() ? "" : ", ") + num(x, 17);
  return s;
}

// The text as one shell line for printf (newlines as \n; the text has no quote, backslash or %).
std::string escaped_newlines(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  return out;
}

}  // namespace

void metastability(Builder& b) {
  const ReproduceOptions& o = b.options();

  // ---- The staircase: n = 32, beta = 60, uniform start (data/configs/staircase_circle.toml on S^1).
  const double beta = 60.0;
  const int frames = 201;
  for (const Index d : {Index(2), Index(3)}) {
    const double t_end = o.quick ? 1e3 : 1e4;
    const int seed = 4;
    FrameStatistics s(true, beta);
    const std::string sphere = d == 2 ? "S^1" : "S^2";
    b.study("metastability: staircase on " + sphere,
            [&] { run_in_memory(circle_toml(d, beta, seed, t_end, frames), s); });
    b.report().metastability["staircase"][d == 2 ? "s1" : "s2"] = {
        {"t", s.t}, {"cluster_count", s.cluster_count}, {"beta", beta}, {"n", 32}};
    std::vector<analysis::Plateau> plateaus;
    if (s.complete()) plateaus = analysis::find_plateaus(s.t, s.cluster_count, s.energy);
    bool descending = plateaus.size() >= 2;
    for (std::size_t i = 1; i < plateaus.size(); ++i)
      descending = descending && plateaus[i].count < plateaus[i - 1].count;
    const std::int64_t first = s.cluster_count.empty() ? 0 : s.cluster_count.front();
    const std::int64_t last = s.cluster_count.empty() ? 0 : s.cluster_count.back();
    std::string verdict = !s.complete() ? "fails" : descending ? "holds" : last > 1 ? "inconclusive" : "fails";
    std::string measured =
        !s.complete() ? "the run ended with status " + std::string(to_string(s.summary.status)) +
                            " at t = " + num(s.summary.t_reached)
                      : std::to_string(plateaus.size()) + " plateaus (count [t_start, t_end]): " +
                            (plateaus.empty() ? std::string("none") : analysis::staircase(plateaus)) + "; clusters " +
                            std::to_string(first) + " at t = 0.1, " + std::to_string(last) + " at t = " + num(t_end);
    if (verdict == "inconclusive") measured += "; several clusters remain: horizon too short for a staircase";
    b.row(
        {"meta-staircase-" + std::string(d == 2 ? "s1" : "s2"),
         "Metastability on " + sphere +
             " (Post-LN, Q = K = V = I, beta = 60, n = 32, uniform start): the cluster count "
             "falls as a staircase of plateaus on geometrically growing times (arXiv:2410.06833)",
         "normdyn run -o staircase.h5 --set model.scheme=post --set model.n=32 --set model.d=" + std::to_string(d) +
             " --set model.beta=60 --set init.kind=uniform --set init.seed=4 --set solver.method=dopri5 --set "
             "solver.rtol=1e-8 --set solver.atol=1e-10 --set solver.t_end=" +
             num(t_end) + " --set 'output.log_times=[0.1, " + num(t_end) +
             ", 201]', then normdyn analyze staircase.h5 (its "
             "plateaus; clusters: cosine > 1 - 1e-3)",
         measured, "several metastable plateaus with decreasing counts before synchronization",
         "at least 2 plateaus (energy flat to 1e-2, lasting a factor 2 in t), counts strictly decreasing; inconclusive "
         "if fewer and several clusters remain at the end",
         verdict});
  }

  // ---- The (beta, t) phase diagram of synchronized pairs, on S^1 (an in-process ensemble).
  const std::vector<double> betas =
      o.quick ? std::vector<double>{1, 4, 16, 64} : std::vector<double>{1, 2, 4, 8, 16, 32, 64};
  const int seeds = o.quick ? 3 : 8;
  const double t_phase = 1000.0;
  const std::string sweep_text =
      "[set]\n\"model.scheme\" = \"post\"\n\"model.n\" = 32\n\"model.d\" = 2\n\"init.kind\" = \"uniform\"\n"
      "\"solver.method\" = \"dopri5\"\n\"solver.t_end\" = 1000.0\n\"output.log_times\" = [0.1, 1000.0, "
      "61]\n\"output.observables\" = false\n"
      "[axes]\n\"model.beta\" = [" +
      list_text(betas) + "]\n\"init.seed\" = [" +
      [&] {
        std::string s;
        for (int i = 1; i <= seeds; ++i) s += (i > 1 ? ", " : "") + std::to_string(i);
        return s;
      }() +
      "]\n[ensemble]\nover = \"init.seed\"\nphase_axis = \"model.beta\"\npair_cosine = 0.999\n";
  EnsembleOutcome phase;
  b.study("metastability: (beta, t) phase diagram of synchronized pairs on S^1", [&] {
    const SweepSpec spec = parse_sweep(sweep_text, "reproduce_phase_diagram.toml");
    EnsembleOptions options;
    options.threads = o.threads;
    phase = run_ensemble(spec, options);
  });
  {
    const EnsembleResult& e = phase.result;
    const std::size_t nt = e.time.size();
    nlohmann::json rows = nlohmann::json::array();
    for (std::size_t g = 0; g < e.groups; ++g)
      rows.push_back(std::vector<double>(e.pair_fraction.begin() + std::ptrdiff_t(g * nt),
                                         e.pair_fraction.begin() + std::ptrdiff_t((g + 1) * nt)));
    b.report().metastability["phase_diagram"] = {
        {"beta", betas}, {"t", e.time}, {"pair_fraction", rows}, {"seeds", seeds}};
    std::vector<double> t_half, mean_pairs;  // t_1/2: first time half the pairs are synchronized (inf: never)
    std::string table;
    for (std::size_t g = 0; g < e.groups && g < betas.size(); ++g) {
      double th = std::numeric_limits<double>::infinity(), sum = 0.0;
      std::size_t m = 0;
      for (std::size_t i = 0; i < nt; ++i) {
        const double p = e.pair_fraction[g * nt + i];
        if (e.time[i] > 0.0) sum += p, ++m;  // the frames after t = 0 are log-spaced: their mean is the mean over ln t
        if (p >= 0.5 && !std::isfinite(th)) th = e.time[i];
      }
      sum /= double(std::max<std::size_t>(m, 1));
      t_half.push_back(th);
      mean_pairs.push_back(sum);
      table += (table.empty() ? "" : "; ") + std::string("beta ") + num(betas[g]) + ": mean over ln t " + num(sum, 3) +
               ", t_1/2 " + (std::isfinite(th) ? num(th, 3) : std::string("> ") + num(t_phase)) + ", pairs at T " +
               num(e.pair_fraction[g * nt + nt - 1], 3) + ", all synchronized at T in " +
               num(e.sync_probability[g * nt + nt - 1], 3) + " of the seeds";
    }
    // Beyond the beta of fastest pairing (below it attention is nearly uniform), pairing slows with beta.
    const std::size_t fastest =
        std::size_t(std::max_element(mean_pairs.begin(), mean_pairs.end()) - mean_pairs.begin());
    bool slows = fastest + 2 < mean_pairs.size();
    for (std::size_t g = fastest + 1; g < mean_pairs.size(); ++g) slows = slows && mean_pairs[g] < mean_pairs[g - 1];
    const bool ok = phase.status == RunStatus::ok && e.failed == 0 && mean_pairs.size() == betas.size();
    b.row(
        {"meta-phase-diagram",
         "Metastability on S^1 (Post-LN, Q = K = V = I, n = 32): synchronization of pairs slows down as beta grows "
         "once attention localizes (the (beta, t) phase diagram of synchronized pairs)",
         "printf '" + escaped_newlines(sweep_text) + "' > phase.toml && normdyn ensemble phase.toml -o phase.h5",
         ok ? "seed-averaged fraction of pairs with cosine > 0.999 (mean over the log-spaced frames, t in [0.1, "
              "1000]): " +
                  table
            : "the ensemble did not complete (" + phase.message + ", " + std::to_string(e.failed) + " members failed)",
         "slower synchronization at larger beta (metastable multi-cluster states)",
         "the mean pair fraction over ln t strictly decreasing in beta beyond its maximum (beta = " +
             (fastest < betas.size() ? num(betas[fastest]) : std::string("?")) + "), over at least 3 values of beta",
         !ok     ? "fails"
         : slows ? "holds"
                 : "fails"});
  }

  // ---- Peri-LN against Post-LN at equal depth: discrete networks (h = 1), Q = K = V = I, n = 32, beta = 4,
  // uniform unit-norm start; on S^2 (where clusters form) and at d = 64 (Theorem 4.2's regime, where
  // |A_j(0)| is small).
  const double beta_eq = 4.0;
  const int depth = o.quick ? 300 : 1000;
  for (const Index d : {Index(3), Index(64)}) {
    FrameStatistics post(true, beta_eq), peri(true, beta_eq);
    auto network = [&](const char* scheme) {
      return "[model]\nscheme = \"" + std::string(scheme) + "\"\nn = 32\nd = " + std::to_string(d) +
             "\nbeta = " + num(beta_eq) +
             "\n[init]\nkind = \"uniform\"\nseed = 1\n[solver]\nmethod = \"discrete\"\ndt = 1.0\nthreads = 1\nt_end "
             "= " +
             std::to_string(depth) + "\n[output]\nsamples = " + std::to_string(depth + 1) + "\nobservables = false\n";
    };
    b.study("metastability: Peri-LN against Post-LN at equal depth (d = " + std::to_string(d) + ")", [&] {
      run_in_memory(network("post"), post);
      run_in_memory(network("peri"), peri);
    });
    const bool complete = post.complete() && peri.complete();
    b.report().metastability["peri_vs_post"]["d" + std::to_string(d)] = {
        {"post", post.one_minus_cos}, {"peri", peri.one_minus_cos}, {"beta", beta_eq}, {"n", 32}};
    std::string table;
    if (complete)
      for (int L : {10, 30, 100, 300, 1000}) {
        if (L > depth) break;
        table += (table.empty() ? "" : "; ") + std::string("L = ") + std::to_string(L) + ": 1 - mean cos Post " +
                 num(post.one_minus_cos[L], 3) + " / Peri " + num(peri.one_minus_cos[L], 3) + ", clusters " +
                 std::to_string(post.cluster_count[L]) + " / " + std::to_string(peri.cluster_count[L]);
      }
    // The first layer's angle is the initial angular speed the theorems speak of; over layers 1..5
    // Peri-LN slows down as its radius grows (speed 1/(r |A|) times the tangential part of A).
    const double a_post = complete ? post.angle[1] : NAN, a_peri = complete ? peri.angle[1] : NAN;
    const double m_post = complete ? window_mean(post.angle, 1, 5) : NAN,
                 m_peri = complete ? window_mean(peri.angle, 1, 5) : NAN;
    // The first layer at which 1 - mean cosine falls below a tenth of its start: the depth of collapse.
    auto collapse_depth = [&](const FrameStatistics& s) {
      for (std::size_t i = 0; i < s.one_minus_cos.size(); ++i)
        if (s.one_minus_cos[i] < 0.1 * s.one_minus_cos.front()) return std::to_string(i);
      return "> " + std::to_string(depth);
    };
    const bool faster_early = a_peri > a_post;
    const bool slower_collapse = complete && peri.one_minus_cos[depth] > post.one_minus_cos[depth];
    const std::string ds = std::to_string(d);
    b.row({"meta-peri-vs-post-d" + ds,
           "Peri-LN against Post-LN at equal depth, d = " + ds +
               " (secondary source: \"Peri-LN a particularly effective "
               "choice\": it moves fast early and collapses slowly)",
           "normdyn run with model.scheme = \"post\" and \"peri\", model.n = 32, model.d = " + ds +
               ", model.beta = 4, "
               "init.kind = \"uniform\", solver.method = \"discrete\", solver.dt = 1, solver.t_end = " +
               std::to_string(depth) + ", output.samples = " + std::to_string(depth + 1),
           complete ? "angle turned in layer 1 (mean over tokens): Post " + num(a_post, 3) + ", Peri " +
                          num(a_peri, 3) + "; mean over layers 1..5: Post " + num(m_post, 3) + ", Peri " +
                          num(m_peri, 3) + "; first layer with 1 - mean cos below a tenth of its start: Post " +
                          collapse_depth(post) + ", Peri " + collapse_depth(peri) + "; " + table
                    : "a run ended early (Post " + std::string(to_string(post.summary.status)) + ", Peri " +
                          std::string(to_string(peri.summary.status)) + ")",
           "Theorems 4.2/4.3 (continuous time): Peri-LN moves at unit speed early and collapses polynomially; Post-LN "
           "moves at speed |A| early and collapses exponentially",
           "Peri-LN's angle in layer 1 > Post-LN's, and its 1 - mean cosine at depth " + std::to_string(depth) +
               " > Post-LN's",
           !complete                         ? "fails"
           : faster_early && slower_collapse ? "holds"
                                             : "differs"});
  }
}

}  // namespace normdyn::studies
