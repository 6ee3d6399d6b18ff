#include "normdyn/user_terms.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "normdyn/errors.hpp"
#include "normdyn/io/text_file.hpp"
#include "normdyn/text_hash.hpp"
#include "toml_text.hpp"

namespace normdyn {
namespace {

// A loaded library and the parameter values its callback receives as `user`.
struct LoadedLibrary {
  void* handle = nullptr;
  std::vector<double> values;
  ~LoadedLibrary() {
    if (handle) ::dlclose(handle);
  }
};

std::shared_ptr<const UserCallback> load_library_term(UserTermSpec& spec) {
  const std::string where = "[[terms]] '" + spec.name + "'";
  std::filesystem::path path = spec.library;
  std::error_code ec;
  // A bare name that exists here is this folder's file, not one of the loader's search path.
  if (path.is_relative() && std::filesystem::exists(path, ec)) path = std::filesystem::absolute(path, ec);
  if (!std::filesystem::exists(path, ec))
    throw InputError("terms", where + ": library " + spec.library.string() + " does not exist");
  auto loaded = std::make_shared<LoadedLibrary>();
  ::dlerror();
  loaded->handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!loaded->handle) {
    const char* why = ::dlerror();
    throw InputError("terms",
                     where + ": cannot load " + spec.library.string() + " (" + (why ? why : "dlopen failed") + ")");
  }
  ::dlerror();
  void* symbol = ::dlsym(loaded->handle, spec.symbol.c_str());
  if (!symbol) throw InputError("terms", where + ": " + spec.library.string() + " has no symbol '" + spec.symbol + "'");
  for (const auto& [key, value] : spec.numbers) loaded->values.push_back(value);
  const std::string digest = file_digest(path);
  if (!spec.digest.empty() && digest != spec.digest)
    spec.warning = "the term '" + spec.name + "': " + spec.library.string() +
                   " differs from the library the run used (digest " + digest + ", recorded " + spec.digest + ")";
  spec.digest = digest;
  auto callback = std::make_shared<UserCallback>();
  callback->function = reinterpret_cast<UserCallback::Function>(symbol);
  callback->user = loaded->values.empty() ? nullptr : loaded->values.data();
  callback->owner = loaded;
  return callback;
}

}  // namespace

std::string file_digest(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};  // loading it says it does not exist
  // A regular file only, opened without blocking: a FIFO or /dev/zero named as the library would
  // otherwise hold or never end the read.
  const std::string bytes = InputFile(path, "terms.library", "library", kUnboundedInput).read_all();
  return hash_hex(fnv1a(bytes.data(), bytes.size(), kFnvOffset));
}

std::string params_json(const std::vector<std::pair<std::string, double>>& numbers) {
  std::string out = "{";
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    out += (i ? ", " : "") + toml_text::string_text(numbers[i].first) + ": ";
    out += std::isfinite(numbers[i].second) ? toml_text::float_text(numbers[i].second) : std::string("null");
  }
  return out + "}";
}

std::vector<std::string> user_term_warnings(const std::vector<UserTermSpec>& specs) {
  std::vector<std::string> out;
  for (const UserTermSpec& spec : specs) {
    if (!spec.warning.empty())
      out.push_back(spec.warning);
    else if (spec.kind == "library" && !spec.digest.empty()) {
      const std::string now = file_digest(spec.library);
      if (!now.empty() && now != spec.digest)
        out.push_back("the term '" + spec.name + "': " + spec.library.string() +
                      " differs from the library the run used (digest " + now + ", recorded " + spec.digest + ")");
    }
  }
  return out;
}

std::vector<UserTerm> make_user_terms(std::vector<UserTermSpec>& specs) {
  std::vector<UserTerm> terms;
  for (UserTermSpec& spec : specs) {
    if (!spec.callback && spec.kind == "library") spec.callback = load_library_term(spec);
    if (!spec.callback || !spec.callback->function)
      throw InputError("terms", "this run used the term '" + spec.name + "'; pass terms=[...] (a normdyn.Term named '" +
                                    spec.name + "')");
    terms.push_back(UserTerm{spec.name, spec.callback, spec.rows});
  }
  return terms;
}

void bind_user_terms(std::vector<UserTermSpec>& recorded, const std::vector<UserTermSpec>& supplied) {
  auto names = [&] {
    std::string out;
    for (const UserTermSpec& r : recorded) out += (out.empty() ? "'" : ", '") + r.name + "'";
    return out.empty() ? std::string("none") : out;
  };
  for (const UserTermSpec& s : supplied) {
    auto it = std::find_if(recorded.begin(), recorded.end(), [&](const UserTermSpec& r) { return r.name == s.name; });
    if (it == recorded.end())
      throw InputError("terms", "the run has no term '" + s.name + "' (its terms: " + names() + ")");
    if (it->kind == "library")
      throw InputError("terms", "the term '" + s.name +
                                    "' is the configuration's [[terms]] library; it is loaded again, "
                                    "not supplied");
    const std::string digest = it->digest;
    *it = s;
    if (!digest.empty() && !s.digest.empty() && digest != s.digest)
      it->warning = "the term '" + s.name + "' differs from the one the run used (digest " + s.digest + ", recorded " +
                    digest + ")";
  }
  for (const UserTermSpec& r : recorded)
    if (r.kind != "library" && !r.callback)
      throw InputError(
          "terms", "this run used the term '" + r.name + "'; pass terms=[...] (a normdyn.Term named '" + r.name + "')");
}

}  // namespace normdyn
