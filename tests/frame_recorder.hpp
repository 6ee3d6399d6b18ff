#pragma once
#include "normdyn/solvers/frame_recorder.hpp"

namespace normdyn::test {
using normdyn::FrameRecorder;
}  // namespace normdyn::test
