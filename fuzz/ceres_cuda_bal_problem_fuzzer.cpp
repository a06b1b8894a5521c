// libFuzzer harness of ceres_cuda's BAL reader. The input is the whole file, written to a scratch
// file (BALProblem::read takes a path) and read as it is: plain text, or bzip2 when the bytes start
// with "BZh" (the reader detects it by content). Plain text is also read a second time
// bzip2-compressed, which reaches the decompressing path with valid streams and checks that both
// paths give the same problem or the same error. A problem that is read must pass validate() and come
// back bit for bit from BALProblem::write and the reader. Bad input must end in linalg_cuda's typed
// errors (fuzz_support.h says which of those still count as findings).
#include <bzlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ceres_cuda/bal_problem.h"
#include "fuzz_support.h"
#include "linalg_cuda/errors.h"

namespace {

// What reading gave: the problem, or the error's message without the file name.
struct Outcome {
  bool failed = false;
  std::string message;
  ceres_cuda::BALProblem problem;
};

// `lines`: how many lines the text has (0: not known, the bytes are compressed).
Outcome read(const std::string& path, long lines) {
  Outcome outcome;
  try {
    outcome.problem = ceres_cuda::BALProblem::read(path);
  } catch (const linalg_cuda::Error& error) {
    outcome.failed = true;
    outcome.message = fuzz::checked_message(error, path, lines);
    return outcome;
  }
  // A problem that was read is one the constructor accepts: counts, sizes, indices, finite values.
  try {
    outcome.problem.validate();
  } catch (const linalg_cuda::InvalidArgument& error) {
    fuzz::finding(std::string("a problem read from a file fails validate(): ") + error.what());
  }
  return outcome;
}

bool same_problem(const ceres_cuda::BALProblem& a, const ceres_cuda::BALProblem& b) {
  return a.num_cameras() == b.num_cameras() && a.num_points() == b.num_points() &&
         a.camera_index() == b.camera_index() && a.point_index() == b.point_index() &&
         a.observations() == b.observations() && a.cameras() == b.cameras() && a.points() == b.points();
}

// BALProblem::write prints every value with 17 significant digits, enough to reproduce it.
void check_round_trip(const ceres_cuda::BALProblem& problem) {
  static const fuzz::ScratchFile file(".written.txt");
  try {
    problem.write(file.path());
  } catch (const linalg_cuda::Error& error) {
    fuzz::finding(std::string("a problem that was read cannot be written: ") + error.what());
  }
  ceres_cuda::BALProblem again;
  try {
    again = ceres_cuda::BALProblem::read(file.path());
  } catch (const linalg_cuda::Error& error) {
    fuzz::finding(std::string("a written problem cannot be read back: ") + error.what());
  }
  if (!same_problem(problem, again)) fuzz::finding("a written problem reads back different");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fuzz::ScratchFile plain(".txt");
  static const fuzz::ScratchFile compressed(".txt.bz2");
  if (size >= 3 && std::memcmp(data, "BZh", 3) == 0) {
    read(plain.write(data, size), 0);
    return 0;
  }
  const long lines = fuzz::line_count(data, size);
  const Outcome direct = read(plain.write(data, size), lines);
  if (!direct.failed) check_round_trip(direct.problem);

  // bzip2 at its smallest block size (100 kB, more than the inputs' max_len): the decompressing path
  // is what is checked, not the compression ratio. Incompressible input grows by about 1%.
  std::vector<char> packed(size + size / 50 + 1024);
  unsigned packed_size = static_cast<unsigned>(packed.size());
  std::string text(reinterpret_cast<const char*>(data), size);  // never a null pointer, even when empty
  if (BZ2_bzBuffToBuffCompress(packed.data(), &packed_size, &text[0], static_cast<unsigned>(size), 1, 0, 0) !=
      BZ_OK) {
    fuzz::finding("bzip2 compression of the input failed");
  }
  const Outcome bzipped = read(compressed.write(packed.data(), packed_size), lines);
  if (direct.failed != bzipped.failed || direct.message != bzipped.message) {
    fuzz::finding("plain and bzip2 differ: '" + direct.message + "' against '" + bzipped.message + "'");
  }
  if (!same_problem(direct.problem, bzipped.problem)) fuzz::finding("plain and bzip2 give different problems");
  return 0;
}
