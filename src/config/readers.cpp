// Names of the enumerations, the did-you-mean suggestion, and the typed readers and bounds that
// every key of the table uses.
#include "config/config_internal.hpp"

namespace normdyn::config_internal {

std::string type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date or time";
  }
}

double read_float(const toml::node& n, const std::string& key) {
  double v = 0.0;
  if (const auto* f = n.as_floating_point())
    v = f->get();
  else if (const auto* i = n.as_integer())
    v = static_cast<double>(i->get());
  else
    throw InputError(key, "expected a number, got " + type_name(n));
  if (!std::isfinite(v)) throw InputError(key, "must be finite, got " + format_number(v));
  return v;
}

std::int64_t read_int(const toml::node& n, const std::string& key) {
  if (const auto* i = n.as_integer()) return i->get();
  throw InputError(key, "expected an integer, got " + type_name(n));
}

std::string read_string(const toml::node& n, const std::string& key) {
  if (const auto* s = n.as_string()) return s->get();
  throw InputError(key, "expected a string, got " + type_name(n));
}

bool read_bool(const toml::node& n, const std::string& key) {
  if (const auto* b = n.as_boolean()) return b->get();
  throw InputError(key, "expected true or false, got " + type_name(n));
}

std::vector<double> read_float_array(const toml::node& n, const std::string& key) {
  const auto* a = n.as_array();
  if (!a) throw InputError(key, "expected an array of numbers, got " + type_name(n));
  std::vector<double> out;
  for (std::size_t i = 0; i < a->size(); ++i)
    out.push_back(read_float(*a->get(i), key + "[" + std::to_string(i) + "]"));
  return out;
}

// The error of a word that is none of a key's choices: the choices, and the nearest one if any.
[[noreturn]] void unknown_choice(const std::string& key, std::string_view what, const std::string& word,
                                 const std::vector<std::string>& names) {
  std::string msg = "unknown " + std::string(what) + " " + in_quotes(word) + "; valid: " + join(names);
  if (auto guess = did_you_mean(word, names)) msg += " (did you mean " + in_quotes(*guess) + "?)";
  throw InputError(key, msg);
}

Scheme read_scheme(const toml::node& n, const std::string& key) {
  const std::string word = read_string(n, key);
  if (auto s = make_scheme(word)) return *s;
  std::vector<std::string> names;
  for (auto k : scheme_keys()) names.emplace_back(k);
  unknown_choice(key, "scheme", word, names);
}

void require(bool ok, const std::string& key, const std::string& problem) {
  if (!ok) throw InputError(key, problem);
}

Bounds at_least(double x) {
  Bounds b;
  b.lower = x;
  return b;
}
Bounds above(double x) {
  Bounds b = at_least(x);
  b.lower_inclusive = false;
  return b;
}
Bounds in_range(double lo, bool lo_inclusive, double hi, bool hi_inclusive, std::string note, std::string upper_text) {
  Bounds b;
  b.lower = lo;
  b.upper = hi;
  b.lower_inclusive = lo_inclusive;
  b.upper_inclusive = hi_inclusive;
  b.note = std::move(note);
  b.upper_text = std::move(upper_text);
  return b;
}

Rules not_empty() {
  Rules r;
  r.non_empty = true;
  return r;
}
Rules every_entry(Bounds b, bool non_empty, bool scalar_as_array) {
  Rules r;
  r.non_empty = non_empty;
  r.entries = std::move(b);
  r.scalar_as_array = scalar_as_array;
  return r;
}

// A parameter's value read as its type asks (ParamSpec::member's index: real, integer, bool, string).
ParamValue read_parameter(const toml::node& n, const std::string& key, std::size_t type) {
  switch (type) {
    case 0:
      return read_float(n, key);
    case 1:
      return read_int(n, key);
    case 2:
      return read_bool(n, key);
    default:
      return read_string(n, key);
  }
}

ConfigScalar scalar_of_parameter(const ParamValue& v) {
  return std::visit([](const auto& x) { return ConfigScalar(x); }, v);
}

}  // namespace normdyn::config_internal

namespace normdyn {

std::string_view to_string(QkvKind k) { return enum_name(k); }
std::string_view to_string(FeedForwardWeights w) { return enum_name(w); }
std::string_view to_string(InitKind k) { return enum_name(k); }
std::string_view to_string(ModelKind k) { return enum_name(k); }
std::string_view to_string(Sampling k) { return enum_name(k); }
std::string_view to_string(Limiter k) { return enum_name(k); }
std::string_view to_string(MeanFieldMethod k) { return enum_name(k); }

bool is_density_kind(InitKind k) {
  return k == InitKind::uniform || k == InitKind::perturbed_uniform || k == InitKind::von_mises;
}

std::vector<double> OutputConfig::sample_times(double t_end, double t_start) const {
  if (!samples) return times;
  const auto count = *samples;
  std::vector<double> out(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i)
    out[static_cast<std::size_t>(i)] =
        t_start + (t_end - t_start) * static_cast<double>(i) / static_cast<double>(count - 1);
  out.back() = t_end;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Did you mean
std::optional<std::string> did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  auto distance = [](std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      std::size_t diagonal = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t above = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0u : 1u)});
        diagonal = above;
      }
    }
    return row[b.size()];
  };
  std::optional<std::string> best;
  std::size_t best_distance = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t dist = distance(word, c);
    if (dist < best_distance) {
      best_distance = dist;
      best = c;
    }
  }
  return best;
}

}  // namespace normdyn
