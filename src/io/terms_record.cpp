#include "io/terms_record.hpp"

#include <algorithm>
#include <string>

namespace normdyn {

void write_terms_record(h5::Group& parameters, const RunConfig& config) {
  if (config.terms.empty()) return;
  h5::Group all = parameters.create_group("terms");
  for (std::size_t k = 0; k < config.terms.size(); ++k) {
    const UserTermSpec& t = config.terms[k];
    std::string name = std::to_string(k);
    name.insert(0, name.size() < 3 ? 3 - name.size() : 0, '0');  // 000, 001, ...: sorted as added
    h5::Group g = all.create_group(name);
    g.set_attribute("name", t.name);
    g.set_attribute("kind", t.kind);
    g.set_attribute("params", t.params);
    g.set_attribute("digest", t.digest);
    g.set_attribute("rows", static_cast<std::int64_t>(t.rows));
    if (t.kind == "library") {
      g.set_attribute("library", t.library.string());
      g.set_attribute("symbol", t.symbol);
    }
    if (!t.source.empty()) g.create_string_dataset("source", t.source);
  }
}

void read_terms_record(const h5::Group& parameters, RunConfig& config) {
  if (!parameters.contains("terms")) return;
  const h5::Group all = parameters.open_group("terms");
  std::vector<std::string> names = all.member_names();
  std::sort(names.begin(), names.end());
  for (const std::string& member : names) {
    const h5::Group g = all.open_group(member);
    UserTermSpec t;
    t.kind = g.attribute_string("kind").value_or("compiled");
    if (t.kind == "library") continue;  // in the configuration's [[terms]]
    t.name = g.attribute_string("name").value_or(member);
    t.params = g.attribute_string("params").value_or("{}");
    t.digest = g.attribute_string("digest").value_or("");
    t.rows = g.attribute_int("rows").value_or(0) != 0;
    if (g.contains("source")) t.source = g.open_dataset("source").read_string();
    config.terms.push_back(std::move(t));
  }
}

}  // namespace normdyn
