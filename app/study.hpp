#pragma once
// `normdyn study theorem-4.2`: max_j |A_j(0)| over a grid of (n, d) from uniform starts, against
// sqrt(log n / n) + log n / d, with the mean angular speed of every scheme at t = 0 (Post- and
// Pre-LN barely move, Peri-LN and nGPT move at unit speed).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "normdyn/studies/attention.hpp"
#include "normdyn/studies/equiangular.hpp"
#include "normdyn/studies/symmetric.hpp"
#include "normdyn/tokens.hpp"

namespace normdyn::app {

using studies::AttentionStudyRequest;
using studies::AttentionStudyRow;

// Prints the table (and writes JSON); exit code 1 if the largest ratio exceeds the constant.
int attention_study_command(const AttentionStudyRequest& request);

// `normdyn study symmetric`: the reduced ODE of the symmetric start for every scheme; prints a table
// (γ, 1 − γ, r at the end; the initial slope against Theorem 4.1) and writes the JSON if asked.
int symmetric_study_command(const studies::SymmetricStudyRequest& request,
                            const std::optional<std::filesystem::path>& json, bool force);

// `normdyn study equiangular`: rho(t) of the particles against the closed form; prints a table of
// ten times and the rates, writes the JSON if asked. Exit code 1 if the particles leave the closed
// form by more than 1e-8.
int equiangular_study_command(const studies::EquiangularStudyRequest& request,
                              const std::optional<std::filesystem::path>& json, bool force);

}  // namespace normdyn::app
