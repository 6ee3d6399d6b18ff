#include "normdyn/attention_spec.hpp"

namespace normdyn {

std::string AttentionSpec::breaking_setting(bool Traits::*trait) const {
  std::string out;
  for_each_attention_list([&](const AttentionListInfo& list, auto member) {
    const auto& chosen = this->*member;
    if (out.empty() && !(alternative_traits(chosen).*trait))
      out = describe_alternative("attention." + std::string(list.name), "attention", chosen);
  });
  return out;
}

std::string describe(const AttentionSpec& spec) {
  std::string out;
  for_each_attention_list([&](const AttentionListInfo& list, auto member) {
    const auto& chosen = spec.*member;
    if (is_first_alternative(chosen)) return;
    out += (out.empty() ? "" : ", ") + describe_alternative("attention." + std::string(list.name), "attention", chosen);
  });
  return out;
}

}  // namespace normdyn
