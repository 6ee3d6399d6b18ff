#include "normdyn/attention_spec.hpp"

#include <sstream>
#include <vector>

namespace normdyn {
namespace {

std::string mask_setting(const AttentionSpec& s) {
  return "attention.mask = \"" + std::string(alternative_key(s.mask)) + "\"";
}
std::string bias_setting(const AttentionSpec& s) {
  std::ostringstream out;
  out << "attention.alibi = " << std::get<Alibi>(s.bias).lambda;
  return out.str();
}
std::string positions_setting(const AttentionSpec& s) {
  std::ostringstream out;
  out << "attention.rope = true, attention.rope_base = " << std::get<Rope>(s.positions).base;
  return out.str();
}
std::string normalizer_setting(const AttentionSpec& s) {
  std::string out = "attention.normalizer = \"" + std::string(alternative_key(s.normalizer)) + "\"";
  if (const auto* z = std::get_if<Sinkhorn>(&s.normalizer); z && z->tol != Sinkhorn{}.tol) {
    std::ostringstream tol;
    tol << ", attention.sinkhorn_tol = " << z->tol;
    out += tol.str();
  }
  return out;
}

}  // namespace

std::string AttentionSpec::breaking_setting(bool Traits::*trait) const {
  if (!(alternative_traits(mask).*trait)) return mask_setting(*this);
  if (!(alternative_traits(bias).*trait)) return bias_setting(*this);
  if (!(alternative_traits(positions).*trait)) return positions_setting(*this);
  if (!(alternative_traits(normalizer).*trait)) return normalizer_setting(*this);
  return {};
}

std::string describe(const AttentionSpec& spec) {
  std::vector<std::string> parts;
  if (!std::holds_alternative<NoMask>(spec.mask)) parts.push_back(mask_setting(spec));
  if (!std::holds_alternative<NoBias>(spec.bias)) parts.push_back(bias_setting(spec));
  if (!std::holds_alternative<NoPositions>(spec.positions)) parts.push_back(positions_setting(spec));
  if (!std::holds_alternative<Softmax>(spec.normalizer)) parts.push_back(normalizer_setting(spec));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

}  // namespace normdyn
