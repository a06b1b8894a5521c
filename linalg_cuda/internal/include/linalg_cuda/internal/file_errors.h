#pragma once
// The one error contract for readers: whatever reading a file throws reaches the caller as the
// project's typed errors, naming the file. Memory the file's contents need and the machine lacks
// (std::bad_alloc) and sizes beyond a container's (std::length_error) become linalg_cuda::Error.
// Call it from a catch (...) around the reading, e.g. a function-try-block:
//
//   Result read(const std::string& path) try { ... } catch (...) { rethrow_with_file_context(path); }
#include <new>
#include <stdexcept>
#include <string>

#include "linalg_cuda/errors.h"

namespace linalg_cuda::detail {

[[noreturn]] inline void rethrow_with_file_context(const std::string& path) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(path + ": not enough memory to read it");
  } catch (const std::length_error& e) {
    throw Error(path + ": too large to read (" + e.what() + ")");
  }
}

}  // namespace linalg_cuda::detail
