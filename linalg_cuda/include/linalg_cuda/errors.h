#pragma once
// Typed exceptions thrown by every module of the project. Library code never exits or aborts:
// it throws one of these, with a message that says what failed and where.
#include <cstddef>
#include <stdexcept>
#include <string>

namespace linalg_cuda {

// Base of every exception the project throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A CUDA runtime, cuBLAS, cuSPARSE or cuSOLVER call failed (message: call, file:line, library's text).
class CudaError : public Error {
 public:
  using Error::Error;
};

// The device has not the memory an allocation needs. what() = "<what>: out of device memory: N GiB
// needed, F of T GiB free"; the numbers are there too. The object whose allocation failed holds nothing
// (its earlier buffers are freed as the exception leaves it), and the device stays usable.
class DeviceMemoryError : public CudaError {
 public:
  DeviceMemoryError(const std::string& what, std::size_t needed_bytes, std::size_t free_bytes, std::size_t total_bytes);
  std::size_t needed_bytes() const { return needed_; }
  std::size_t free_bytes() const { return free_; }
  std::size_t total_bytes() const { return total_; }

 private:
  std::size_t needed_, free_, total_;
};

// Operand shapes do not fit (matrix + matrix of another size, matrix * vector of the wrong length, ...).
class DimensionMismatch : public Error {
 public:
  using Error::Error;
};

// A caller handed in something the operation cannot accept (bad CSR arrays, zero block size, ...).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A file could not be read or does not follow its format. what() = "file:line: what was expected".
class ParseError : public Error {
 public:
  ParseError(const std::string& file, long line, const std::string& message)
      : Error(file + ":" + std::to_string(line) + ": " + message), file_(file), line_(line) {}
  // A binary file's: what() = "file: byte N: what was expected"; line() is -1.
  static ParseError at_byte(const std::string& file, unsigned long long byte, const std::string& message) {
    return ParseError(file + ": byte " + std::to_string(byte) + ": " + message, file);
  }
  const std::string& file() const { return file_; }
  long line() const { return line_; }

 private:
  ParseError(const std::string& what, const std::string& file) : Error(what), file_(file), line_(-1) {}
  std::string file_;
  long line_;
};

}  // namespace linalg_cuda
