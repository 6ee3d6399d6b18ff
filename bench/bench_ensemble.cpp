// The library's ensemble alone, called as `normdyn ensemble SWEEP -o OUT --force -q --threads T`
// calls it (app/ensemble_cli.cpp), without the program's other commands: a small program to measure
// an ensemble's memory with (bench/ensemble_memory.sh takes either binary). Takes the same arguments.
//
//   normdyn_bench_ensemble ensemble SWEEP -o OUT --force -q --threads T
#include <cstdio>
#include <cstdlib>
#include <string>

#include "normdyn/experiment/ensemble.hpp"
#include "normdyn/sweep.hpp"

using namespace normdyn;

int main(int argc, char** argv) {
  std::string sweep, output;
  int threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-o" && i + 1 < argc)
      output = argv[++i];
    else if (a == "--threads" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (a != "ensemble" && a != "--force" && a != "-q")
      sweep = a;
  }
  if (sweep.empty() || output.empty()) {
    std::fprintf(stderr, "usage: %s ensemble SWEEP -o OUT --force -q --threads T\n", argv[0]);
    return 2;
  }
  EnsembleOptions o;
  o.output = output;
  o.force = true;
  o.inputs = {sweep};
  o.threads = threads;
  const EnsembleOutcome out = run_ensemble(load_sweep(sweep), o);
  if (out.status != RunStatus::ok) std::fprintf(stderr, "%s\n", out.message.c_str());
  return out.status == RunStatus::ok ? 0 : 1;
}
