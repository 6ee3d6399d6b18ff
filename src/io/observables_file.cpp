#include "normdyn/io/observables_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <type_traits>

#include "io/h5.hpp"
#include "io/h5md.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/io/atomic_file.hpp"
#include "normdyn/io/file_lock.hpp"

namespace normdyn {
namespace {

constexpr const char* kGroup = "observables";

std::uint64_t product(const std::vector<std::uint64_t>& dims) {
  std::uint64_t p = 1;
  for (auto d : dims) p *= d;
  return p;
}

}  // namespace

struct ObservablesFile::Impl {
  std::filesystem::path path;
  h5::File file;
  std::map<std::string, h5::Dataset> open_value, open_time, open_step;  // series being appended to

  h5::Group group() { return file.require_group(kGroup); }

  void forget(const std::string& name) {
    open_value.erase(name);
    open_time.erase(name);
    open_step.erase(name);
  }

  template <class T>
  void write(const std::string& name, std::span<const double> time, std::span<const std::int64_t> step,
             std::span<const T> values, const std::vector<std::uint64_t>& inner_dims, const std::string& description,
             const std::vector<std::string>& axis_names, const std::string& unit) {
    const std::uint64_t frames = time.size();
    const std::string where = path.string() + ":/" + kGroup + "/" + name;
    if (step.size() != frames)
      throw IoError(where + ": " + std::to_string(step.size()) + " steps for " + std::to_string(frames) + " times");
    if (values.size() != frames * product(inner_dims))
      throw IoError(where + ": " + std::to_string(values.size()) + " values do not fill " + std::to_string(frames) +
                    " frames");
    forget(name);
    h5::Group obs = group();
    obs.remove(name);
    h5::Group g = obs.create_group(name);
    if (!description.empty()) g.set_attribute("description", description);
    const std::uint64_t per_frame = product(inner_dims);
    const h5::ChunkedLayout layout{inner_dims, h5md::chunk_frames(per_frame, per_frame > 1), per_frame > 1 ? 1 : 0};
    constexpr h5::ElementType type = std::is_same_v<T, double> ? h5::ElementType::f64 : h5::ElementType::i64;
    if (!axis_names.empty() && axis_names.size() != inner_dims.size())
      throw IoError(where + ": " + std::to_string(axis_names.size()) + " axis names for " +
                    std::to_string(inner_dims.size()) + " inner dimensions");
    std::vector<h5md::Axis> axes;
    for (std::size_t k = 0; k < inner_dims.size(); ++k)
      axes.push_back({axis_names.empty() ? "axis" + std::to_string(k + 1) : axis_names[k], nullptr});
    h5md::ElementDatasets e = h5md::create_element(g, "", type, layout, axes, unit);
    h5::Dataset& v = e.value;
    h5::Dataset& t = e.time;
    h5::Dataset& s = e.step;
    if (frames > 0) {
      v.append(values, frames);
      t.append(time, frames);
      s.append(step, frames);
    }
  }
};

ObservablesFile::ObservablesFile() : impl_(std::make_unique<Impl>()) {}
ObservablesFile::~ObservablesFile() = default;
ObservablesFile::ObservablesFile(ObservablesFile&&) noexcept = default;
ObservablesFile& ObservablesFile::operator=(ObservablesFile&&) noexcept = default;

ObservablesFile ObservablesFile::open(const std::filesystem::path& path, bool create) {
  ObservablesFile f;
  f.impl_->path = path;
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    f.impl_->file = h5::File::open(path, h5::OpenMode::read_write);
  } else {
    if (!create) throw IoError(path.string() + ": no such file");
    f.impl_->file = h5::File::create(path, h5::CreateMode::exclusive);
    h5md::write_header(f.impl_->file);
  }
  return f;
}

std::filesystem::path ObservablesFile::sibling_path(const std::filesystem::path& run_file) {
  std::filesystem::path p = run_file;
  if (p.extension() == ".h5") p.replace_extension();
  p += ".observables.h5";
  return p;
}

ObservablesFile ObservablesFile::open_for_run(const std::filesystem::path& run_file) {
  if (::access(run_file.c_str(), W_OK) == 0) {
    try {
      return open(run_file, false);
    } catch (const IoError&) {
      // e.g. locked by a process still writing it: fall through to the sibling file.
    }
  }
  const std::filesystem::path sibling = sibling_path(run_file);
  const bool fresh = !std::filesystem::exists(sibling);
  ObservablesFile f = open(sibling, true);
  if (fresh) f.impl_->group().set_attribute("run_file", run_file.filename().string());
  return f;
}

void ObservablesFile::replace(const std::filesystem::path& path, const std::filesystem::path& run_file,
                              const std::function<void(ObservablesFile&)>& fill,
                              const std::function<void(const std::filesystem::path&)>& on_staging) {
  const WriterLock lock = WriterLock::acquire(path);
  replace_file_atomically(
      path,
      [&](const std::filesystem::path& staging) {
        ObservablesFile file = open(staging, true);
        fill(file);
        file.set_text(kGroup, "run_file", run_file.filename().string());
        file.close();
      },
      true, on_staging);
}

std::optional<std::filesystem::path> ObservablesFile::locate(const std::filesystem::path& run_file) {
  // `normdyn analyze` writes the sibling file; run files analyzed by earlier versions hold their
  // analysis themselves.
  const std::filesystem::path sibling = sibling_path(run_file);
  if (std::filesystem::exists(sibling)) return sibling;
  try {
    // A run file always has the per-frame observables of the run itself; it is the analysis'
    // file once an analysis wrote its report there.
    const h5::File f = h5::File::open(run_file, h5::OpenMode::read_only);
    if (f.contains("analysis")) return run_file;
  } catch (const IoError&) {
    // Being written (SWMR): it holds no analysis.
  }
  return std::nullopt;
}

void ObservablesFile::write_series(const std::string& name, std::span<const double> time,
                                   std::span<const std::int64_t> step, std::span<const double> values,
                                   const std::vector<std::uint64_t>& inner_dims, const std::string& description,
                                   const std::vector<std::string>& axis_names, const std::string& unit) {
  impl_->write(name, time, step, values, inner_dims, description, axis_names, unit);
}

void ObservablesFile::write_series(const std::string& name, std::span<const double> time,
                                   std::span<const std::int64_t> step, std::span<const std::int64_t> values,
                                   const std::vector<std::uint64_t>& inner_dims, const std::string& description,
                                   const std::vector<std::string>& axis_names, const std::string& unit) {
  impl_->write(name, time, step, values, inner_dims, description, axis_names, unit);
}

void ObservablesFile::append(const std::string& name, double time, std::int64_t step, std::span<const double> values,
                             const std::vector<std::uint64_t>& inner_dims, const std::string& description) {
  Impl& w = *impl_;
  if (!w.open_value.contains(name)) {
    h5::Group obs = w.group();
    if (!obs.contains(name)) write_series(name, {}, {}, std::span<const double>(), inner_dims, description);
    h5::Group g = obs.open_group(name);
    w.open_value[name] = g.open_dataset("value");
    w.open_time[name] = g.open_dataset("time");
    w.open_step[name] = g.open_dataset("step");
  }
  const double t[1] = {time};
  const std::int64_t s[1] = {step};
  w.open_value[name].append(values, 1);
  w.open_time[name].append(std::span<const double>(t));
  w.open_step[name].append(std::span<const std::int64_t>(s));
}

void ObservablesFile::set_series_attribute(const std::string& name, const std::string& key, const std::string& value) {
  impl_->group().open_group(name).set_attribute(key, value);
}

bool ObservablesFile::remove_series(const std::string& name) {
  impl_->forget(name);
  return impl_->group().remove(name);
}

std::vector<std::string> ObservablesFile::series_names() const {
  if (!impl_->file.contains(kGroup)) return {};
  return impl_->file.open_group(kGroup).member_names();
}

ObservableSeries ObservablesFile::read_series(const std::string& name) const {
  const h5::Group g = impl_->file.open_group(std::string(kGroup) + "/" + name);
  const h5::Dataset v = g.open_dataset("value");
  ObservableSeries s;
  s.shape = v.shape();
  s.integer = v.element_type() == h5::ElementType::i64;
  if (s.integer) {
    const auto ints = v.read_ints();
    s.values.assign(ints.begin(), ints.end());
  } else {
    s.values = v.read_doubles();
  }
  s.time = g.open_dataset("time").read_doubles();
  s.step = g.open_dataset("step").read_ints();
  s.description = g.attribute_string("description").value_or("");
  return s;
}

void ObservablesFile::set_text(const std::string& group, const std::string& key, const std::string& text) {
  impl_->file.require_group(group).set_attribute(key, text);
}

std::optional<std::string> ObservablesFile::text(const std::string& group, const std::string& key) const {
  if (!impl_->file.contains(group)) return std::nullopt;
  return impl_->file.open_group(group).attribute_string(key);
}

const std::filesystem::path& ObservablesFile::path() const { return impl_->path; }

void ObservablesFile::flush() { impl_->file.flush(); }

void ObservablesFile::close() {
  if (!impl_) return;
  impl_->open_value.clear();
  impl_->open_time.clear();
  impl_->open_step.clear();
  impl_->file.close();
}

}  // namespace normdyn
