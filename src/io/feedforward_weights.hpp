#pragma once
// The feed-forward weights a [M, d] and omega [M] of an HDF5 group: a feedforward.file, or the
// /parameters/feedforward group where a run file keeps the weights it ran with.
#include <functional>
#include <string>

#include "io/h5.hpp"
#include "normdyn/terms/feedforward.hpp"

namespace normdyn {

// `problem(text)` throws the caller's error (an input error, or a damaged run file); it must not return.
FeedForward read_feedforward_weights(const h5::Group& group, Index d, const Activation& activation,
                                     const std::function<void(const std::string&)>& problem);

}  // namespace normdyn
