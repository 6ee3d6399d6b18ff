// The run file: what the writer writes, the reader reads back; refusal to overwrite; inputs read
// from HDF5 files with their shapes checked against the configuration.
#define BOOST_TEST_MODULE io
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <unistd.h>

#include "io/h5.hpp"
#include "normdyn/errors.hpp"
#include "normdyn/init.hpp"
#include "normdyn/io/inputs.hpp"
#include "normdyn/io/run_file.hpp"

using namespace normdyn;
namespace fs = std::filesystem;

namespace {
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("normdyn_io_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  static int& counter() {
    static int c = 0;
    return c;
  }
};

// Appends a frame with placeholder observables and a checkpoint at the frame itself.
void append(RunWriter& w, double t, std::int64_t step, const Tokens& tokens, std::size_t next_sample) {
  std::vector<double> x(static_cast<std::size_t>(tokens.n() * tokens.d() + tokens.n()));
  StateLayout{tokens.n(), tokens.d()}.pack(tokens, x.data());
  const std::vector<double> observables{1.0 + t, 2.0 + t, 3.0 + t};
  w.append_frame(t, step, tokens, observables, CheckpointView{t, 0.1, x, Counters{step, 0, 3 * step, 0.0}, next_sample},
                 0.5 * t);
}

RunSummary summary_with(RunStatus status) {
  RunSummary s;
  s.status = status;
  return s;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
}  // namespace

BOOST_AUTO_TEST_CASE(frames_round_trip) {
  TempDir dir;
  RunConfig c = parse_config("[model]\nn = 5\nd = 3\nscheme = \"pre\"\n", "t");
  c.output.path = dir.path / "run.h5";
  const Tokens a = uniform_tokens(5, 3, 1.5, 1), b = gaussian_tokens(5, 3, 2);
  {
    RunWriter w(c.output.path, c, Provenance{"normdyn run test", 2});
    append(w, 0.0, 0, a, 1);
    append(w, 0.5, 17, b, 2);
    RunSummary s;
    s.status = RunStatus::synchronized;
    s.t_reached = 0.5;
    s.frames = 2;
    s.accepted_steps = 17;
    s.rhs_evaluations = 120;
    w.finish(s);
  }
  const RunReader r(c.output.path);
  BOOST_TEST(r.frames() == 2u);
  BOOST_TEST(r.n() == 5);
  BOOST_TEST(r.d() == 3);
  BOOST_TEST(r.times() == (std::vector<double>{0.0, 0.5}));
  BOOST_TEST(r.times(1) == (std::vector<double>{0.0}));
  BOOST_TEST(r.times(0).empty());
  BOOST_CHECK_THROW(r.times(3), IoError);  // more than the complete frames
  BOOST_TEST(r.steps() == (std::vector<std::int64_t>{0, 17}));
  BOOST_TEST(bool(r.frame(0).theta == a.theta));
  BOOST_TEST(bool(r.frame(1).r == b.r));
  BOOST_TEST(to_toml(r.config()) == to_toml(c));
  const auto s = r.summary();
  BOOST_REQUIRE(s.has_value());
  BOOST_TEST(s->status == RunStatus::synchronized);
  BOOST_TEST(s->rhs_evaluations == 120);
  BOOST_TEST(r.observable("variance") == (std::vector<double>{2.0, 2.5}));
  const auto cp = r.checkpoint();
  BOOST_REQUIRE(cp.has_value());
  BOOST_TEST(cp->next_sample == 2u);
  BOOST_TEST(cp->counters.rhs_evaluations == 51);
  BOOST_TEST(cp->t == 0.5);

  // H5MD metadata.
  auto f = h5::File::open(c.output.path, h5::OpenMode::read_only);
  BOOST_TEST(f.open_group("h5md").attribute_ints("version") == (std::vector<std::int64_t>{1, 1}));
  BOOST_TEST(f.open_group("particles/tokens/box").attribute_int("dimension").value_or(0) == 3);
  BOOST_TEST(f.open_group("parameters/model").attribute_string("scheme").value_or("") == "pre");
  BOOST_TEST(f.open_group("parameters").attribute_int("threads").value_or(0) == 2);
}

BOOST_AUTO_TEST_CASE(existing_file_is_refused_unless_overwrite) {
  TempDir dir;
  RunConfig c;
  const fs::path p = dir.path / "run.h5";
  { std::ofstream(p) << "precious"; }
  BOOST_TEST(error_of([&] { RunWriter w(p, c, {}); }).find("exists; pass --force") != std::string::npos);
  std::ifstream in(p);
  std::string content;
  in >> content;
  BOOST_TEST(content == "precious");
  RunFileOptions overwrite;
  overwrite.overwrite = true;
  RunWriter w(p, c, {}, overwrite);
  w.finish(summary_with(RunStatus::ok));
  BOOST_TEST(h5::File::is_hdf5(p));
}

// A run that ends before its first flush is built under a staging name and published whole at
// the end; one destroyed unfinished before then leaves nothing (none of it was durable). A staging
// file left by a killed run is replaced.
BOOST_AUTO_TEST_CASE(a_file_appears_under_its_name_only_once_valid) {
  TempDir dir;
  const RunConfig c =
      parse_config("[model]\nn = 4\nd = 3\n[output]\nflush_frames = 1000\nflush_seconds = 1000.0\n", "t");
  const Tokens a = uniform_tokens(4, 3, 1.0, 1);
  const fs::path p = dir.path / "run.h5";
  fs::path staging = p;
  staging += ".normdyn.tmp";
  { std::ofstream(staging) << "left by a killed run"; }
  {
    RunWriter w(p, c, Provenance{"normdyn run test", 1});
    append(w, 0.0, 0, a, 1);
    append(w, 0.5, 3, a, 2);
    BOOST_TEST(!fs::exists(p));
    BOOST_TEST(fs::exists(staging));
    w.finish(summary_with(RunStatus::ok));
  }
  BOOST_TEST(!fs::exists(staging));
  {
    const RunReader r(p);
    BOOST_TEST(r.frames() == 2u);
    BOOST_TEST(r.times() == (std::vector<double>{0.0, 0.5}));
    BOOST_REQUIRE(r.summary().has_value());
    BOOST_TEST(r.summary()->status == RunStatus::ok);
    BOOST_REQUIRE(r.checkpoint().has_value());
    BOOST_TEST(r.checkpoint()->next_sample == 2u);
  }

  const fs::path q = dir.path / "unfinished.h5";
  fs::path q_staging = q;
  q_staging += ".normdyn.tmp";
  {
    RunWriter w(q, c, Provenance{"normdyn run test", 1});
    append(w, 0.0, 0, a, 1);
  }
  BOOST_TEST(!fs::exists(q));
  BOOST_TEST(!fs::exists(q_staging));

  // A file that another program put under the name during the run is not replaced; the run's file
  // is kept under the staging name, which the error gives.
  const fs::path taken = dir.path / "taken.h5";
  fs::path taken_staging = taken;
  taken_staging += ".normdyn.tmp";
  {
    RunWriter w(taken, c, Provenance{"normdyn run test", 1});
    append(w, 0.0, 0, a, 1);
    { std::ofstream(taken) << "precious"; }
    const std::string error = error_of([&] { w.finish(summary_with(RunStatus::ok)); });
    BOOST_TEST(error.find("output.path: " + taken.string() + " was created during the run") == 0u, error);
    BOOST_TEST(error.find("kept as " + taken_staging.string()) != std::string::npos, error);
  }
  std::string content;
  std::ifstream(taken) >> content;
  BOOST_TEST(content == "precious");
  BOOST_TEST(RunReader(taken_staging).frames() == 1u);

  // With a flush per frame the file is published at the first one, and what was flushed survives
  // a writer that never finishes.
  const RunConfig eager = parse_config("[model]\nn = 4\nd = 3\n[output]\nflush_frames = 1\n", "t");
  const fs::path e = dir.path / "eager.h5";
  {
    RunWriter w(e, eager, Provenance{"normdyn run test", 1});
    append(w, 0.0, 0, a, 1);
    BOOST_TEST(fs::exists(e));
    append(w, 0.5, 3, a, 2);
  }
  const RunReader r(e);
  BOOST_TEST(r.frames() == 2u);
  BOOST_TEST(!r.summary().has_value());
}

BOOST_AUTO_TEST_CASE(initial_tokens_from_a_run_file) {
  TempDir dir;
  RunConfig c = parse_config("[model]\nn = 4\nd = 2\nscheme = \"pre\"\n", "t");
  const fs::path p = dir.path / "run.h5";
  const Tokens first = gaussian_tokens(4, 2, 1), last = gaussian_tokens(4, 2, 2);
  {
    RunWriter w(p, c, {});
    append(w, 0.0, 0, first, 1);
    append(w, 1.0, 5, last, 2);
    w.finish(summary_with(RunStatus::ok));
  }
  InitConfig init;
  init.kind = InitKind::file;
  init.file = p;
  const Tokens t = read_initial_tokens(init, 4, 2);
  BOOST_TEST((t.theta - last.theta).cwiseAbs().maxCoeff() < 1e-15);
  BOOST_TEST(bool(t.r == last.r));  // radii come with the frame
  init.frame = 0;
  BOOST_TEST((read_initial_tokens(init, 4, 2).theta - first.theta).cwiseAbs().maxCoeff() < 1e-15);

  init.frame = 7;
  BOOST_TEST(error_of([&] { read_initial_tokens(init, 4, 2); }).rfind("init.frame: frame 7 out of range", 0) == 0);
  init.frame = -1;
  BOOST_TEST(error_of([&] { read_initial_tokens(init, 5, 2); }).rfind("init.dataset:", 0) == 0);
  init.dataset = "/nope";
  BOOST_TEST(error_of([&] { read_initial_tokens(init, 4, 2); }).rfind("init.dataset:", 0) == 0);
  init.file = dir.path / "missing.h5";
  BOOST_TEST(error_of([&] { read_initial_tokens(init, 4, 2); }).rfind("init.file:", 0) == 0);
}

BOOST_AUTO_TEST_CASE(attention_matrices_from_a_file) {
  TempDir dir;
  const fs::path p = dir.path / "qkv.h5";
  {
    auto f = h5::File::create(p, h5::CreateMode::exclusive);
    const std::vector<double> q{1, 2, 3, 4}, k{0, 1, 1, 0}, v{2, 0, 0, 2};
    const std::uint64_t dims[2] = {2, 2};
    f.create_dataset("Q", dims, std::span<const double>(q));
    f.create_dataset("K", dims, std::span<const double>(k));
    f.create_dataset("V", dims, std::span<const double>(v));
  }
  const auto layers = read_attention_matrices(p, 2);
  BOOST_REQUIRE_EQUAL(layers.size(), 1u);
  BOOST_TEST(layers[0].Q(0, 1) == 2.0);  // row-major: Q[i][j] as stored
  BOOST_TEST(layers[0].K(1, 0) == 1.0);
  BOOST_TEST(!layers[0].identity);
  BOOST_TEST(error_of([&] { read_attention_matrices(p, 3); }).rfind("model.qkv_file: Q has shape [2, 2]", 0) == 0);
  BOOST_TEST(error_of([&] {
               read_attention_matrices(p, 2, 2);
             }).find("expected [2, 2, 2] or [layers, 2, 2, 2] (model.heads, model.d)") != std::string::npos);
}

// Several heads: [H, d, d] is one layer of H heads, [layers, H, d, d] several layers; entry (l, h, i, j).
BOOST_AUTO_TEST_CASE(attention_heads_from_a_file) {
  TempDir dir;
  for (const bool layered : {false, true}) {
    const fs::path p = dir.path / (layered ? "layers.h5" : "heads.h5");
    const std::uint64_t layers = layered ? 2 : 1, heads = 3, d = 2;
    std::vector<double> values(layers * heads * d * d);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
    {
      auto f = h5::File::create(p, h5::CreateMode::exclusive);
      const std::vector<std::uint64_t> dims =
          layered ? std::vector<std::uint64_t>{layers, heads, d, d} : std::vector<std::uint64_t>{heads, d, d};
      for (const char* name : {"Q", "K", "V"}) f.create_dataset(name, dims, std::span<const double>(values));
    }
    const auto read = read_attention_matrices(p, 2, 3);
    BOOST_REQUIRE_EQUAL(read.size(), layers);
    for (std::uint64_t l = 0; l < layers; ++l) {
      BOOST_REQUIRE_EQUAL(read[l].heads(), 3);
      for (std::uint64_t h = 0; h < heads; ++h) {
        const AttentionMatrices& m = h == 0 ? read[l] : read[l].other_heads[h - 1];
        BOOST_TEST(!m.identity);
        BOOST_TEST(m.V(1, 0) == static_cast<double>(((l * heads + h) * d + 1) * d), "layer " << l << " head " << h);
      }
    }
    if (layered)  // [3, 2, 2] is also three layers of one head
      BOOST_TEST(error_of([&] { read_attention_matrices(p, 2, 1); }).rfind("model.qkv_file: Q has shape", 0) == 0);
    BOOST_TEST(error_of([&] { read_attention_matrices(p, 2, 4); }).rfind("model.qkv_file: Q has shape", 0) == 0);
  }
}

// An error of the HDF5 layer about an object names the file it is in: a message that says only
// "/particles/tokens" does not tell which of many run files failed.
BOOST_AUTO_TEST_CASE(hdf5_errors_name_the_file) {
  TempDir dir;
  const fs::path p = dir.path / "named.h5";
  {
    auto f = h5::File::create(p, h5::CreateMode::exclusive);
    const std::uint64_t dims[1] = {3};
    const std::vector<double> values{1.0, 2.0, 3.0};
    f.create_dataset("values", dims, std::span<const double>(values));
  }
  const auto f = h5::File::open(p, h5::OpenMode::read_only);
  const h5::Dataset ds = f.open_dataset("values");
  const std::vector<double> more{4.0, 5.0, 6.0};
  // A write through a read-only file fails inside HDF5.
  const std::string write =
      error_of([&] { h5::Dataset(f.open_dataset("values")).write(std::span<const double>(more)); });
  BOOST_TEST(write.find("HDF5 H5Dwrite failed for " + p.string() + ":/values") != std::string::npos, write);
  const std::string missing = error_of([&] { (void)f.open_dataset("absent"); });
  BOOST_TEST(missing.find(p.string() + ":/absent: no such dataset") != std::string::npos, missing);
  const std::string range = error_of([&] { (void)ds.read_frames(2, 5); });
  BOOST_TEST(range.find(p.string() + ":/values: frames [2, 7) out of range") != std::string::npos, range);
  const std::string attribute = error_of([&] { (void)ds.attribute_type("absent"); });
  BOOST_TEST(attribute.find(p.string() + ":/values @absent") != std::string::npos, attribute);
}
