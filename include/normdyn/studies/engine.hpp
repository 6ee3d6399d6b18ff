#pragma once
// The particle dynamics that the theorem rows of `normdyn reproduce` measure (spec section 2): a
// function building, for a scheme and β (DynamicsSpec), attention matrices and n tokens in R^d, the
// OdeSystem the rows integrate. The library's engine builds AttentionDynamics; the reproduction can
// be handed another one, so that a test can check that the rows fail for a deliberately wrong
// engine (a scheme parameter ignored, a wrong speed factor or radial rate, a rate a few percent off)
// without building the library twice.
//
// Contract: the system's state is packed as StateLayout{n, d} (the directions row by row, then the
// radii); breakpoints, enter_piece and retract behave as AttentionDynamics' do.
#include <functional>
#include <memory>
#include <string>

#include "normdyn/dynamics.hpp"

namespace normdyn::studies {

struct Engine {
  std::string name;  // shown in the report ("normdyn" for the library's)
  std::function<std::unique_ptr<OdeSystem>(const DynamicsSpec& spec, QkvSource qkv, Index n, Index d)> particles;
};

// AttentionDynamics, the dynamics of `normdyn run`.
Engine library_engine();

}  // namespace normdyn::studies
