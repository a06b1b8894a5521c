#pragma once
// What the reader harnesses share: a scratch file per process for readers that take a path, and the
// judgement of an error. The library's typed errors are the expected outcome for bad input, except
// those that the harness turns into a crash (a finding): an allocation failure or a container-size
// failure that the reader wrapped into linalg_cuda::Error (the input made it reserve more than the
// file backs), a ParseError naming another file or a line the text does not have, and a message too
// long to read.
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "linalg_cuda/errors.h"

namespace fuzz {

// Prints why and aborts, so that libFuzzer records the input as a crash.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "FUZZ FINDING: %s\n", what.c_str());
  std::abort();
}

// A file in $TMPDIR (or /tmp) named after the process, removed at exit. Each libFuzzer worker is
// its own process, so parallel runs (-jobs, -fork) never share a file.
class ScratchFile {
 public:
  explicit ScratchFile(const char* suffix) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/cuda_solvers_fuzz_" + std::to_string(getpid()) + suffix;
  }
  ~ScratchFile() { std::remove(path_.c_str()); }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Replaces the file's contents with [data, data + size).
  const std::string& write(const void* data, size_t size) const {
    std::FILE* file = std::fopen(path_.c_str(), "wb");
    if (!file) finding("cannot create the scratch file " + path_ + ": " + std::strerror(errno));
    const bool written = size == 0 || std::fwrite(data, 1, size, file) == size;
    if (std::fclose(file) != 0 || !written) finding("cannot write the scratch file " + path_);
    return path_;
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A folder in $TMPDIR (or /tmp) named after the process, removed with what it holds at exit: for
// readers that resolve other files next to the one they read (a URDF's meshes), so that what the
// input names is looked for there and not elsewhere.
class ScratchDir {
 public:
  explicit ScratchDir(const char* name) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/cuda_solvers_fuzz_" + std::to_string(getpid()) + "_" + name;
    std::error_code error;
    std::filesystem::remove_all(path_, error);
    std::filesystem::create_directories(path_, error);
    if (error) finding("cannot create the scratch folder " + path_ + ": " + error.message());
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Writes [data, data + size) to `name` inside the folder (its folders created) and returns its path.
  std::string write(const std::string& name, const void* data, size_t size) const {
    const std::filesystem::path file = std::filesystem::path(path_) / name;
    std::error_code error;
    std::filesystem::create_directories(file.parent_path(), error);
    if (error) finding("cannot create the scratch folder " + file.parent_path().string() + ": " + error.message());
    std::FILE* out = std::fopen(file.c_str(), "wb");
    if (!out) finding("cannot create the scratch file " + file.string() + ": " + std::strerror(errno));
    const bool written = size == 0 || std::fwrite(data, 1, size, out) == size;
    if (std::fclose(out) != 0 || !written) finding("cannot write the scratch file " + file.string());
    return file.string();
  }
  std::string write(const std::string& name, const std::string& text) const { return write(name, text.data(), text.size()); }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Messages say what failed and where; a message longer than this quotes the input instead (a field
// printed whole, a number printed with hundreds of digits).
constexpr size_t kMaxMessageBytes = 1024;

// Lines of a text of `size` bytes: a ParseError names one of 1 .. newlines + 1 (or 0 for the file as a
// whole).
inline long line_count(const uint8_t* data, size_t size) {
  long newlines = 0;
  for (size_t i = 0; i < size; ++i) newlines += data[i] == '\n';
  return newlines + 1;
}

// Whether [data, data + size) holds `text`.
inline bool holds(const uint8_t* data, size_t size, const std::string& text) {
  return data && std::string(reinterpret_cast<const char*>(data), size).find(text) != std::string::npos;
}

// Checks a typed error thrown for `path`; returns its message without the path (the part that must
// not depend on which file held the bytes). `lines`: how many lines the text has, where known (0 when
// the file is compressed). `data`, `size`: the input, where the reader quotes it (names, values): a
// phrase of an allocation failure that the input holds is the input's, not the reader's.
inline std::string checked_message(const linalg_cuda::Error& error, const std::string& path, long lines = 0,
                                   const uint8_t* data = nullptr, size_t size = 0) {
  const std::string what = error.what();
  const char* memory = ": not enough memory to read it";
  const char* too_large = ": too large to read (";
  if ((what.find(memory) != std::string::npos && !holds(data, size, memory)) ||
      (what.find(too_large) != std::string::npos && !holds(data, size, too_large))) {
    finding("the reader ran out of memory or container size on a small input: " + what);
  }
  if (what.size() > path.size() + kMaxMessageBytes) {
    finding("error message of " + std::to_string(what.size()) + " bytes: " + what.substr(0, 200) + "...");
  }
  if (const auto* parse = dynamic_cast<const linalg_cuda::ParseError*>(&error)) {
    if (parse->file() != path) finding("ParseError names '" + parse->file() + "', not '" + path + "': " + what);
    if (parse->line() < 0) finding("ParseError with a negative line: " + what);
    if (lines > 0 && parse->line() > lines) {
      finding("ParseError names line " + std::to_string(parse->line()) + " of a text of " + std::to_string(lines) +
              " lines: " + what);
    }
  }
  if (what.compare(0, path.size(), path) != 0) finding("error message does not start with the file name: " + what);
  return what.substr(path.size());
}

}  // namespace fuzz
