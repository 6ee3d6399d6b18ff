#include "commands.hpp"

#include <iomanip>
#include <set>
#include <sstream>

#include "normdyn/config.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/io/run_file.hpp"
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
    for (std::size_t i = 0; i < S::params.size(); ++i)
      out << "      model." << S::params[i].key << " (" << S::params[i].type() << ", default "
          << parameter_text(parameter_value(s, i)) << "): " << S::params[i].doc << "\n";
    out << "\n";
  });
  return 0;
}

namespace {

// One list of alternatives: key, title, formula, parameters and the traits each one breaks.
template <class List>
void print_alternatives(std::ostream& out, const std::string& heading, const std::string& selector,
                        const std::string& table) {
  out << heading << " (" << selector << ")\n";
  for_each_alternative<List>([&](auto a) {
    using A = decltype(a);
    out << "  " << std::left << std::setw(16) << A::key << A::title << "\n";
    out << "  " << std::setw(16) << "" << A::formula << "\n";
    for (std::size_t i = 0; i < A::params.size(); ++i)
      out << "  " << std::setw(16) << "" << table << "." << A::params[i].key << " (" << A::params[i].type()
          << ", default " << parameter_text(parameter_value(a, i)) << "): " << A::params[i].doc << "\n";
    std::string broken;
    const Traits t = traits_of_alternative(a);
    for (const auto& [member, name] : kTraitNames)
      if (!(t.*member)) broken += (broken.empty() ? "" : ", ") + std::string(name);
    if (!broken.empty())
      out << "  " << std::setw(16) << ""
          << "not: " << broken << "\n";
  });
  out << "\n";
}

}  // namespace

int list_attention(std::ostream& out) {
  out << "Attention as a composition: A_i = sum_h factor_i sum_{j in keys(i)} m_j e^{s_ij - max_i} V_h x_j,\n"
         "s_ij = beta <R_{p_i} Q_h x_i, R_{p_j} K_h x_j> + b_ij; one choice from each list below, model.heads heads.\n"
         "\"not:\" names the traits an alternative breaks (the theorem checks, the symmetric kernel, the mean\n"
         "field and MPI sharding follow them).\n\n";
  for_each_attention_list([&](const AttentionListInfo& list, auto member) {
    using List = std::decay_t<decltype(AttentionSpec{}.*member)>;
    print_alternatives<List>(out, std::string(list.doc), "attention." + std::string(list.name), "attention");
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
        << (m.order == 0 ? std::string("variable") : std::to_string(m.order)) << " | "
        << (m.dense_output ? "yes" : "no") << " | " << cell(std::string(m.description)) << " |\n";
  return 0;
}

int print_config_template(std::ostream& out) {
  // Keys that apply to the defaults are set; the others (they apply only to other choices: another
  // scheme, initial condition, method or model kind) are written commented out, so that the file
  // runs as it is and every key is in it.
  std::set<std::string> applies;
  for (const auto& [key, value] : config_values(RunConfig{})) applies.insert(key);
  out << "# normdyn configuration: every key with its default. Keys that apply only to other choices\n"
         "# are commented out. Run it as it is: normdyn run THIS_FILE\n";
  std::string section;
  for (const auto& k : config_reference()) {
    const auto dot = k.key.find('.');
    const std::string s = k.key.substr(0, dot), name = k.key.substr(dot + 1);
    if (s != section) {
      out << "\n[" << s << "]\n";
      section = s;
    }
    std::istringstream doc(k.doc);
    out << "# " << name << " (" << k.type << "): ";
    // One comment line per sentence-sized piece, so that the template reads in a terminal.
    std::string word, line;
    while (doc >> word) {
      if (line.size() + word.size() > 90) {
        out << line << "\n#   ";
        line.clear();
      }
      line += (line.empty() ? "" : " ") + word;
    }
    out << line << "\n";
    const std::string value = k.default_value.empty() ? "\"\"" : k.default_value;
    out << (applies.count(k.key) ? "" : "# ") << name << " = " << value << "\n";
  }
  return 0;
}

int verify_runs(const std::vector<std::string>& files, std::ostream& out, std::ostream& err) {
  ExitCode worst = ExitCode::ok;
  for (const std::string& file : files) {
    try {
      if (const auto checked = verify_run_file(file, "runs"))
        out << file << ": " << *checked << " frames match their checksums\n";
      else
        out << file << ": not checked: written before normdyn stored frame checksums\n";
    } catch (const InputError& e) {
      err << "normdyn: error: " << e.what() << "\n";
      if (worst == ExitCode::ok) worst = ExitCode::bad_input;
    } catch (const IoError& e) {
      err << "normdyn: error: " << e.what() << "\n";
      worst = ExitCode::io_failure;
    }
  }
  return static_cast<int>(worst);
}

}  // namespace normdyn::app
