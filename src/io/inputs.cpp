#include "normdyn/io/inputs.hpp"

#include <cmath>

#include "io/feedforward_weights.hpp"
#include "io/h5.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/given.hpp"
#include "normdyn/resources.hpp"

namespace normdyn {
namespace {

std::string shape_text(const std::vector<std::uint64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

h5::File open_input(const std::filesystem::path& path, const std::string& key) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(status)) throw InputError(key, path.string() + ": no such file");
  // A FIFO would block the open; a device would be read without end.
  if (!std::filesystem::is_regular_file(status)) throw InputError(key, path.string() + ": not a regular file");
  if (!h5::File::is_hdf5(path)) throw InputError(key, path.string() + ": not an HDF5 file");
  return h5::File::open(path, h5::OpenMode::read_only);
}

// Frame `frame` (negative: from the end) of a dataset [frames, inner...] or the whole of [inner...].
std::vector<double> read_frame(const h5::Dataset& ds, std::size_t inner_rank, std::int64_t frame,
                               const std::string& key) {
  const auto shape = ds.shape();
  if (shape.size() == inner_rank) return ds.read_doubles();
  const auto frames = static_cast<std::int64_t>(shape.front());
  const std::int64_t index = frame < 0 ? frames + frame : frame;
  if (index < 0 || index >= frames)
    throw InputError("init.frame", "frame " + std::to_string(frame) + " out of range for " + ds.path() + " (" +
                                       std::to_string(frames) + " frames)");
  (void)key;
  return ds.read_frames(static_cast<std::uint64_t>(index), 1);
}

}  // namespace

Tokens read_initial_tokens(const InitConfig& init, Index n, Index d) {
  h5::File file = open_input(init.file, "init.file");
  if (!file.contains(init.dataset))
    throw InputError("init.dataset", init.file.string() + " has no dataset " + init.dataset);
  const h5::Dataset directions = file.open_dataset(init.dataset);
  const auto shape = directions.shape();
  const bool ok2 =
      shape.size() == 2 && shape[0] == static_cast<std::uint64_t>(n) && shape[1] == static_cast<std::uint64_t>(d);
  const bool ok3 =
      shape.size() == 3 && shape[1] == static_cast<std::uint64_t>(n) && shape[2] == static_cast<std::uint64_t>(d);
  if (!ok2 && !ok3)
    throw InputError("init.dataset", init.dataset + " has shape " + shape_text(shape) + ", expected [" +
                                         std::to_string(n) + ", " + std::to_string(d) + "] or [frames, " +
                                         std::to_string(n) + ", " + std::to_string(d) + "] (model.n, model.d)");
  const std::vector<double> values = read_frame(directions, 2, init.frame, "init.dataset");
  Tokens t{RowMatrix(n, d), Vector::Constant(n, init.r0)};
  std::copy(values.begin(), values.end(), t.theta.data());
  for (Index j = 0; j < n; ++j) {
    const double norm = t.theta.row(j).norm();
    if (!(norm > 0.0) || !std::isfinite(norm))
      throw InputError("init.dataset",
                       "token " + std::to_string(j) + " of " + init.dataset + " has norm " + std::to_string(norm));
    t.theta.row(j) /= norm;
  }

  std::string radius_path = init.radius_dataset;
  if (radius_path.empty() && init.dataset == "/particles/tokens/direction/value" &&
      file.contains("/particles/tokens/radius/value"))
    radius_path = "/particles/tokens/radius/value";
  if (!radius_path.empty()) {
    if (!file.contains(radius_path))
      throw InputError("init.radius_dataset", init.file.string() + " has no dataset " + radius_path);
    const h5::Dataset radii = file.open_dataset(radius_path);
    const auto rs = radii.shape();
    const bool r1 = rs.size() == 1 && rs[0] == static_cast<std::uint64_t>(n);
    const bool r2 = rs.size() == 2 && rs[1] == static_cast<std::uint64_t>(n);
    if (!r1 && !r2)
      throw InputError("init.radius_dataset", radius_path + " has shape " + shape_text(rs) + ", expected [" +
                                                  std::to_string(n) + "] or [frames, " + std::to_string(n) + "]");
    const std::vector<double> r = read_frame(radii, 1, init.frame, "init.radius_dataset");
    for (Index j = 0; j < n; ++j) {
      if (!(r[static_cast<std::size_t>(j)] > 0.0) || !std::isfinite(r[static_cast<std::size_t>(j)]))
        throw InputError("init.radius_dataset", "radius of token " + std::to_string(j) + " is not positive");
      t.r(j) = r[static_cast<std::size_t>(j)];
    }
  }
  return t;
}

std::vector<double> read_initial_density(const InitConfig& init) {
  h5::File file = open_input(init.file, "init.file");
  if (!file.contains(init.dataset))
    throw InputError("init.dataset", init.file.string() + " has no dataset " + init.dataset);
  const h5::Dataset ds = file.open_dataset(init.dataset);
  const auto shape = ds.shape();
  if (shape.empty() || shape.size() > 2 || shape.back() < 1)
    throw InputError("init.dataset", init.dataset + " has shape " + shape_text(shape) +
                                         ", expected [cells] or [frames, cells] (a density on equal cells of the "
                                         "circle; for a run with a radius use /fields/angular_density/value)");
  std::vector<double> values = read_frame(ds, 1, init.frame, "init.dataset");
  double total = 0.0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i]) || values[i] < 0.0)
      throw InputError("init.dataset", "value " + std::to_string(i) + " of " + init.dataset +
                                           " is negative or not finite (" + std::to_string(values[i]) + ")");
    total += values[i];
  }
  if (!(total > 0.0)) throw InputError("init.dataset", init.dataset + " has no mass (every value is 0)");
  return values;
}

std::vector<AttentionMatrices> read_attention_matrices(const std::filesystem::path& path, Index d, Index heads) {
  h5::File file = open_input(path, "model.qkv_file");
  std::vector<std::vector<double>> data(3);
  std::uint64_t layers = 0;
  const char* names[3] = {"Q", "K", "V"};
  const auto ud = static_cast<std::uint64_t>(d), uh = static_cast<std::uint64_t>(heads);
  // One head: [d, d] or [layers, d, d]; H > 1 heads: [H, d, d] or [layers, H, d, d].
  const std::string expected = heads == 1
                                   ? "[" + std::to_string(d) + ", " + std::to_string(d) + "] or [layers, " +
                                         std::to_string(d) + ", " + std::to_string(d) + "] (model.d)"
                                   : "[" + std::to_string(heads) + ", " + std::to_string(d) + ", " + std::to_string(d) +
                                         "] or [layers, " + std::to_string(heads) + ", " + std::to_string(d) + ", " +
                                         std::to_string(d) + "] (model.heads, model.d)";
  for (int m = 0; m < 3; ++m) {
    if (!file.contains(names[m])) throw InputError("model.qkv_file", path.string() + " has no dataset " + names[m]);
    const h5::Dataset ds = file.open_dataset(names[m]);
    const auto s = ds.shape();
    std::uint64_t l = 0;
    const bool square = s.size() >= 2 && s[s.size() - 2] == ud && s[s.size() - 1] == ud;
    if (heads == 1 && square && s.size() == 2)
      l = 1;
    else if (heads == 1 && square && s.size() == 3 && s[0] >= 1)
      l = s[0];
    else if (heads > 1 && square && s.size() == 3 && s[0] == uh)
      l = 1;
    else if (heads > 1 && square && s.size() == 4 && s[0] >= 1 && s[1] == uh)
      l = s[0];
    else
      throw InputError("model.qkv_file",
                       std::string(names[m]) + " has shape " + shape_text(s) + ", expected " + expected);
    if (m > 0 && l != layers) throw InputError("model.qkv_file", "Q, K and V must have the same number of layers");
    layers = l;
    data[static_cast<std::size_t>(m)] = ds.read_doubles();
    for (double v : data[static_cast<std::size_t>(m)])
      if (!std::isfinite(v)) throw InputError("model.qkv_file", std::string(names[m]) + " has non-finite entries");
  }
  std::vector<AttentionMatrices> out(layers);
  const auto dd = static_cast<std::size_t>(d * d);
  for (std::uint64_t l = 0; l < layers; ++l) {
    out[l].other_heads.resize(static_cast<std::size_t>(heads - 1));
    for (std::uint64_t h = 0; h < uh; ++h) {
      AttentionMatrices& a = h == 0 ? out[l] : out[l].other_heads[h - 1];
      a.identity = false;
      RowMatrix* targets[3] = {&a.Q, &a.K, &a.V};
      for (int m = 0; m < 3; ++m) {
        targets[m]->resize(d, d);
        std::copy_n(data[static_cast<std::size_t>(m)].begin() + static_cast<std::ptrdiff_t>((l * uh + h) * dd), dd,
                    targets[m]->data());
      }
    }
  }
  return out;
}

bool score_bias_to_read(const RunConfig& config) {
  const auto* chosen = std::get_if<MatrixBias>(&config.attention.bias);
  return chosen && !chosen->values;
}

void read_score_bias(RunConfig& config) {
  if (!score_bias_to_read(config)) return;
  const std::string file = std::get<MatrixBias>(config.attention.bias).file;
  if (file.empty())
    throw InputError("attention.bias",
                     "\"matrix\" needs the matrix: attention.bias_file (an HDF5 file with the "
                     "dataset bias [n, n]) or, from Python, normdyn.run(..., score_bias=B)");
  const h5::File h5 = open_input(file, "attention.bias_file");
  if (!h5.contains("bias")) throw InputError("attention.bias_file", file + " has no dataset bias");
  const h5::Dataset ds = h5.open_dataset("bias");
  const auto shape = ds.shape();
  if (shape.size() != 2)
    throw InputError("attention.bias_file", file + ": bias has shape " + shape_text(shape) + ", expected [n, n]");
  const std::string digest = std::get<MatrixBias>(config.attention.bias).digest;
  give_score_bias(config, ds.read_doubles(), static_cast<Index>(shape[0]), static_cast<Index>(shape[1]),
                  "attention.bias_file");
  // A resolved configuration names the matrix it ran with: the file must still hold it.
  if (!digest.empty() && digest != std::get<MatrixBias>(config.attention.bias).digest)
    throw InputError("attention.bias_file",
                     file + " no longer holds the matrix of attention.bias_digest = \"" + digest + "\"");
}

std::optional<FeedForward> read_feedforward(const RunConfig& config) {
  const FeedForwardConfig& f = config.feedforward;
  if (!f.active()) return std::nullopt;
  const Index d = config.model.d;
  FeedForward term;
  term.activation = f.activation;
  if (f.weights == FeedForwardWeights::inline_values) {
    const auto m = static_cast<Index>(f.omega.size());
    term.a = Eigen::Map<const RowMatrix>(f.a.data(), m, d);
    term.omega = Eigen::Map<const Vector>(f.omega.data(), m);
    return term;
  }
  const h5::File file = open_input(f.file, "feedforward.file");
  return read_feedforward_weights(file, d, f.activation, [&](const std::string& problem) {
    throw InputError("feedforward.file", f.file.string() + ": " + problem);
  });
}

FeedForward read_feedforward_weights(const h5::Group& group, Index d, const Activation& activation,
                                     const std::function<void(const std::string&)>& problem) {
  for (const char* name : {"a", "omega"})
    if (!group.contains(name)) problem(std::string("has no dataset ") + name);
  const h5::Dataset a = group.open_dataset("a"), omega = group.open_dataset("omega");
  const auto sa = a.shape(), so = omega.shape();
  if (so.size() != 1 || so[0] < 1) problem("omega has shape " + shape_text(so) + ", expected [M]");
  if (sa.size() != 2 || sa[0] != so[0] || sa[1] != static_cast<std::uint64_t>(d))
    problem("a has shape " + shape_text(sa) + ", expected [" + std::to_string(so[0]) + ", " + std::to_string(d) +
            "] ([M, model.d], M from omega)");
  // The weights are read whole and copied once into the term: refused by their size before that.
  if (const auto shortfall = memory_shortfall(2.0 * 8.0 * static_cast<double>(so[0]) * static_cast<double>(d + 1)))
    problem("a [M, d] = " + shape_text(sa) + " " + *shortfall);
  const std::vector<double> av = a.read_doubles(), ov = omega.read_doubles();
  for (const auto* values : {&av, &ov})
    for (double v : *values)
      if (!std::isfinite(v)) problem("has non-finite weights");
  const auto m = static_cast<Index>(so[0]);
  FeedForward term;
  term.activation = activation;
  term.a = Eigen::Map<const RowMatrix>(av.data(), m, d);
  term.omega = Eigen::Map<const Vector>(ov.data(), m);
  return term;
}

}  // namespace normdyn
