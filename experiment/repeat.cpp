// A run repeated from its run file (`normdyn run --from FILE`): the stored configuration with the
// arrays the file holds instead of what the text can only name.
#include <Eigen/Core>

#include "normdyn/experiment/experiment.hpp"
#include "normdyn/given.hpp"

namespace normdyn {

RunConfig repeated_config(const RunConfig& stored, const std::string& text, const std::optional<FeedForward>& weights,
                          const std::string& source, const std::vector<std::string>& sets) {
  RunConfig c = parse_config(text, source, sets);
  // The given matrices and tokens, where the keys on top still ask for them.
  if (c.model.qkv == QkvKind::given && stored.model.given_qkv && c.model.d == stored.model.d &&
      c.model.heads == stored.model.heads)
    give_qkv_values(c, given_qkv_values(stored.model), "--from");
  if (c.init.kind == InitKind::given && stored.init.given_tokens && c.model.n == stored.model.n &&
      c.model.d == stored.model.d) {
    const RowMatrix& rows = stored.init.given_tokens->rows;
    give_tokens(c, std::span<const double>(rows.data(), static_cast<std::size_t>(rows.size())), rows.rows(),
                rows.cols(), "--from");
  }
  // The feed-forward weights as run, not as feedforward.file holds them now.
  if (c.feedforward.weights == FeedForwardWeights::file && weights && weights->a.cols() == c.model.d) {
    c.feedforward.weights = FeedForwardWeights::inline_values;
    c.feedforward.a.assign(weights->a.data(), weights->a.data() + weights->a.size());
    c.feedforward.omega.assign(weights->omega.data(), weights->omega.data() + weights->omega.size());
    c.feedforward.file.clear();
  }
  // The terms given with the run (recorded without their code): make_terms asks for them by name.
  for (const UserTermSpec& t : stored.terms)
    if (t.kind != "library") c.terms.push_back(t);
  return c;
}

}  // namespace normdyn
