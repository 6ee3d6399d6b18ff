#pragma once
// Errors by kind. Programming contracts are asserts; what the user or the environment got wrong is
// one of the exceptions below, turned into a one-line message and an exit code by main(); numerical
// outcomes are not exceptions at all but a RunStatus recorded in the output (status.hpp).
#include <stdexcept>
#include <string>

namespace normdyn {

// Process exit codes, one per kind of outcome.
enum class ExitCode : int {
  ok = 0,
  numerical_failure = 1,  // the run ended with diverged / step_underflow / max_steps
  bad_input = 2,          // configuration, flags or input files are wrong
  io_failure = 3,         // files could not be read or written
  interrupted = 130,      // SIGINT / SIGTERM: the file is complete up to the last frame
};

// Bad user input. `key` names the configuration key or flag at fault ("model.beta", "--set").
class InputError : public std::runtime_error {
 public:
  InputError(std::string key, const std::string& problem)
      : std::runtime_error(key.empty() ? problem : key + ": " + problem), key_(std::move(key)) {}
  const std::string& key() const noexcept { return key_; }

 private:
  std::string key_;
};

// A file or the environment failed (cannot open, disk full, HDF5 error).
class IoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A run file's frame whose bytes no longer match the checksum written with it.
class FrameChecksumError : public IoError {
 public:
  using IoError::IoError;
};

}  // namespace normdyn
