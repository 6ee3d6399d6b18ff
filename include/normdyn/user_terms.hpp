#pragma once
// The user's terms of a run (terms/user.hpp) as the configuration holds them: given with the run
// (Python's terms=[...]: a Python callable or a compiled callback) or named by the configuration
// ([[terms]] library = "x.so", symbol = "f": loaded with dlopen). The run file records each term
// (/parameters/terms/<name>: kind, params, digest, the source of a Python callable); a run read
// back from its file holds the recorded terms without their callbacks, which a resume or a repeat
// must supply again (bind_user_terms), matched by name.
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "normdyn/terms/user.hpp"

namespace normdyn {

struct UserTermSpec {
  std::string name;
  std::string kind = "compiled";  // "python", "compiled" or "library"
  std::string params = "{}";      // the parameters as a JSON object (recorded; a library term gets the numbers)
  std::vector<std::pair<std::string, double>> numbers;  // [[terms]]: params, passed to the callback as `user`
  std::string digest;             // of the source text (python), of the library file (library); may be empty
  std::string source;             // a Python callable's source text, when inspect had it
  std::filesystem::path library;  // library: the shared object, and the symbol in it
  std::string symbol;
  bool rows = false;  // row i of the output depends on token i only
  // The callback; empty for a term read back from a run file (and for [[terms]] before loading).
  std::shared_ptr<const UserCallback> callback;
  // Set when the term was supplied again or loaded and its digest differs from the recorded one.
  std::string warning;
};

// The terms of the block output for the user's terms of a configuration: library terms are loaded
// (dlopen; InputError naming [[terms]] when the file or symbol is missing), the others must have a
// callback ("this run used the term 'x'; pass terms=[...]").
std::vector<UserTerm> make_user_terms(std::vector<UserTermSpec>& specs);

// Supplies the callbacks of `supplied` to the terms of the same name in `recorded` (a configuration
// read back from a run file), which keep their order. Refuses (InputError "terms") a supplied term
// the run did not use and a recorded one not supplied (library terms need nothing: they are
// loaded). A digest that differs sets the term's `warning`.
void bind_user_terms(std::vector<UserTermSpec>& recorded, const std::vector<UserTermSpec>& supplied);

// Why the terms of a configuration may not be those its run used: a supplied term whose digest differs
// (its `warning`), a [[terms]] library whose file changed since its digest was recorded. One line each.
std::vector<std::string> user_term_warnings(const std::vector<UserTermSpec>& specs);

// The digest of a file's bytes (FNV-1a, 16 hexadecimal digits); empty if it cannot be read.
std::string file_digest(const std::filesystem::path& path);

// The parameters of a term as a JSON object text, from its numbers.
std::string params_json(const std::vector<std::pair<std::string, double>>& numbers);

}  // namespace normdyn
