// libFuzzer harness of linalg_cuda's Matrix Market reader. The input is the whole file, read through
// the public stream entry point (the path entry point reads the file into the same buffer and parses
// it with the same code, so the stream one reaches every parsing path without touching the disk).
// A matrix that is read must be well-formed CSR with finite entries and must come back bit for bit
// from write_matrix_market and the path entry point; bad input must end in linalg_cuda's typed errors
// (fuzz_support.h says which of those still count as findings).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>

#include "fuzz_support.h"
#include "linalg_cuda/matrix_market.h"

namespace {

const std::string kName = "fuzz.mtx";

void check(const linalg_cuda::CsrMatrix& a) {
  if (a.rows() < 0 || a.cols() < 0) fuzz::finding("negative dimensions");
  if (!a.isCompressed()) fuzz::finding("the matrix is not compressed");
  const int* outer = a.outerIndexPtr();
  if (outer[0] != 0 || outer[a.rows()] != a.nonZeros()) fuzz::finding("row pointers do not span the entries");
  for (int i = 0; i < a.rows(); ++i) {
    if (outer[i] > outer[i + 1]) fuzz::finding("row pointers decrease");
    for (int k = outer[i]; k < outer[i + 1]; ++k) {
      const int j = a.innerIndexPtr()[k];
      if (j < 0 || j >= a.cols() || (k > outer[i] && a.innerIndexPtr()[k - 1] >= j)) {
        fuzz::finding("column indices out of range or unsorted in row " + std::to_string(i));
      }
      // The reader refuses NaN and infinite values, so every entry of a matrix it returns is finite.
      if (!std::isfinite(a.valuePtr()[k])) fuzz::finding("entry not finite in row " + std::to_string(i));
    }
  }
}

// write_matrix_market promises 17 significant digits, enough to reproduce every double. Only up to
// 2^20 rows and columns: beyond that the reader allows dimensions by the entries the file can hold,
// and the written file holds fewer lines than one whose duplicates it summed.
void check_round_trip(const linalg_cuda::CsrMatrix& a) {
  if (a.rows() > (1 << 20) || a.cols() > (1 << 20)) return;
  static const fuzz::ScratchFile file(".mtx");
  linalg_cuda::write_matrix_market(file.path(), a);
  linalg_cuda::CsrMatrix b;
  try {
    b = linalg_cuda::read_matrix_market(file.path());
  } catch (const linalg_cuda::Error& error) {
    fuzz::finding(std::string("a written matrix cannot be read back: ") + error.what());
  }
  const auto same = [](const auto* x, const auto* y, long n) { return n == 0 || std::memcmp(x, y, n * sizeof *x) == 0; };
  if (b.rows() != a.rows() || b.cols() != a.cols() || b.nonZeros() != a.nonZeros() ||
      !same(a.outerIndexPtr(), b.outerIndexPtr(), a.rows() + 1) ||
      !same(a.innerIndexPtr(), b.innerIndexPtr(), a.nonZeros()) || !same(a.valuePtr(), b.valuePtr(), a.nonZeros())) {
    fuzz::finding("a written matrix reads back different");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const linalg_cuda::CsrMatrix a = linalg_cuda::read_matrix_market(in, kName);
    check(a);
    check_round_trip(a);
  } catch (const linalg_cuda::Error& error) {
    fuzz::checked_message(error, kName, fuzz::line_count(data, size));
  }
  return 0;
}
