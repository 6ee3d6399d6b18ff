#pragma once
// The studies of `normdyn reproduce`, in the report's order. A study is one function that measures
// a statement of the paper and adds its rows (and what it leaves unmeasured) to the Builder; adding
// one is its file plus a declaration and an entry here. The studies marked as using the engine
// integrate every particle system through Builder::engine(), so that a test can hand them a wrong
// engine and see their rows fail.
#include <string_view>

#include "reproduce_support.hpp"

namespace normdyn::studies {

void theorem_4_1_slopes(Builder& b);        // theorem_4_1.cpp
void theorem_4_1_laws(Builder& b);          // theorem_4_1.cpp
void theorem_4_1_decay(Builder& b);         // theorem_4_1.cpp
void theorem_4_1_particles(Builder& b);     // theorem_4_1.cpp
void time_change(Builder& b);               // time_change.cpp
void theorem_3_1(Builder& b);               // theorem_3_1.cpp
void energy_monotonicity(Builder& b);       // energy.cpp
void theorem_4_3(Builder& b);               // theorem_4_3.cpp
void theorem_4_2(Builder& b);               // reproduce.cpp
void random_weights(Builder& b);            // random_weights.cpp
void metastability(Builder& b);             // metastability.cpp
void continuum_depth(Builder& b);           // continuum.cpp
void continuum_mean_field(Builder& b);      // continuum.cpp
void continuum_grid(Builder& b);            // continuum.cpp
void attention_models(Builder& b);          // attention_models.cpp
void long_context(Builder& b);              // long_context.cpp
void noise(Builder& b);                     // noise.cpp
void noise_strong_order(Builder& b);        // noise_strong.cpp
void noise_pitchfork(Builder& b);           // noise_pitchfork.cpp
void terms(Builder& b);                     // terms.cpp
void renyi(Builder& b);                     // renyi.cpp
void lost_in_the_middle(Builder& b);        // lost_in_the_middle.cpp
void causal_atlas(Builder& b);              // causal_atlas.cpp
void usa_circle_negative_beta(Builder& b);  // usa_circle.cpp
void multihead(Builder& b);                 // multihead.cpp
void perceptron_localization(Builder& b);   // perceptron_localization.cpp

// A group of rows: its key (ReproduceOptions::only), whether its rows integrate the engine
// (ReproduceOptions::engine), and its function.
struct StudyEntry {
  std::string_view key;
  bool uses_engine;
  void (*run)(Builder&);
};

inline constexpr StudyEntry kReproductionStudies[] = {
    {"theorem-4.1-slopes", true, theorem_4_1_slopes},
    {"theorem-4.1-laws", false, theorem_4_1_laws},
    {"theorem-4.1-decay", true, theorem_4_1_decay},
    {"theorem-4.1-particles", true, theorem_4_1_particles},
    {"time-change", true, time_change},
    {"theorem-3.1", true, theorem_3_1},
    {"energy", true, energy_monotonicity},
    {"theorem-4.3", true, theorem_4_3},
    {"theorem-4.2", false, theorem_4_2},
    {"random-weights", false, random_weights},
    {"metastability", false, metastability},
    {"continuum-depth", true, continuum_depth},
    {"continuum-mean-field", false, continuum_mean_field},
    {"continuum-grid", false, continuum_grid},
    {"attention-models", true, attention_models},
    {"long-context", true, long_context},
    {"noise", true, noise},
    {"noise-strong-order", true, noise_strong_order},
    {"noise-pitchfork", true, noise_pitchfork},
    {"terms", true, terms},
    {"renyi", true, renyi},
    {"lost-in-the-middle", true, lost_in_the_middle},
    {"causal-atlas", true, causal_atlas},
    {"usa-circle-negative-beta", true, usa_circle_negative_beta},
    {"multihead", true, multihead},
    {"perceptron-localization", true, perceptron_localization},
};

}  // namespace normdyn::studies
