// libFuzzer harness of linalg_cuda's Matrix Market reader. The input is the whole file, read through
// the public stream entry point (the path entry point reads the file into the same buffer and parses
// it with the same code, so the stream one reaches every parsing path without touching the disk).
// A matrix that is read must agree with its size line; bad input must end in linalg_cuda's typed
// errors (fuzz_support.h says which of those still count as findings).
#include <cmath>
#include <cstddef>
#include <cstdint>
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    check(linalg_cuda::read_matrix_market(in, kName));
  } catch (const linalg_cuda::Error& error) {
    fuzz::checked_message(error, kName);
  }
  return 0;
}
