#include "normdyn/studies/engine.hpp"

namespace normdyn::studies {

Engine library_engine() {
  return {"normdyn", [](const DynamicsSpec& spec, QkvSource qkv, Index n, Index d) -> std::unique_ptr<OdeSystem> {
            return std::make_unique<AttentionDynamics>(spec, std::move(qkv), n, d);
          }};
}

}  // namespace normdyn::studies
