#pragma once
// The studies of `normdyn reproduce`, in the report's order. A study is one function that measures
// a statement of the paper and adds its rows (and what it leaves unmeasured) to the Builder; adding
// one is its file plus a declaration and an entry here.
#include "reproduce_support.hpp"

namespace normdyn::studies {

void theorem_4_1(Builder& b);         // reproduce.cpp
void theorem_3_1(Builder& b);         // reproduce.cpp
void radial_lower_bound(Builder& b);  // reproduce.cpp
void theorem_4_3(Builder& b);         // reproduce.cpp
void theorem_4_2(Builder& b);         // reproduce.cpp
void random_weights(Builder& b);        // random_weights.cpp
void metastability(Builder& b);         // metastability.cpp
void continuum_depth(Builder& b);       // continuum.cpp
void continuum_mean_field(Builder& b);  // continuum.cpp
void continuum_grid(Builder& b);        // continuum.cpp

inline constexpr void (*kReproductionStudies[])(Builder&) = {
    theorem_4_1,    theorem_3_1,   radial_lower_bound, theorem_4_3,          theorem_4_2,
    random_weights, metastability, continuum_depth,    continuum_mean_field, continuum_grid,
};

}  // namespace normdyn::studies
