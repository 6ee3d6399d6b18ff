#include "commands.hpp"

#include <iomanip>

#include "normdyn/config.hpp"
#include "normdyn/schemes.hpp"
#include "normdyn/steppers.hpp"

namespace normdyn::app {

int list_schemes(std::ostream& out) {
  out << "Normalized attention dynamics: d theta_j/dt = P_theta_j A_j / s_j,  d r_j/dt = rho_j\n\n";
  for_each_scheme([&](auto s) {
    using S = decltype(s);
    out << std::left << std::setw(6) << S::key << S::title << "\n";
    out << "      speed s_j       = " << S::speed_formula << "\n";
    out << "      radial rate     = " << S::radial_formula << "\n";
    out << "      layer map       = " << S::layer_formula << "\n";
    for (const auto& p : S::params)
      out << "      model." << p.key << " (default " << s.*(p.member) << "): " << p.doc << "\n";
    out << "\n";
  });
  return 0;
}

int print_config_reference(std::ostream& out) {
  auto cell = [](std::string text) {
    for (std::size_t i = text.find('|'); i != std::string::npos; i = text.find('|', i + 2)) text.replace(i, 1, "\\|");
    return text;
  };
  out << "| key | type | default | meaning |\n|---|---|---|---|\n";
  for (const auto& k : config_reference())
    out << "| `" << k.key << "` | " << k.type << " | " << (k.default_value.empty() ? "" : "`" + k.default_value + "`")
        << " | " << cell(k.doc) << " |\n";
  out << "\n| `solver.method` | kind | order | dense output | description |\n|---|---|---|---|---|\n";
  for (const MethodInfo& m : kMethods)
    out << "| `" << m.name << "` | " << to_string(m.control) << " | "
        << (m.order == 0 ? std::string("variable") : std::to_string(m.order)) << " | " << (m.dense_output ? "yes" : "no")
        << " | " << cell(std::string(m.description)) << " |\n";
  return 0;
}

}  // namespace normdyn::app
