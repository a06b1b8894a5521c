#pragma once
// Matrix Market reader (coordinate, real/integer/pattern, general or symmetric) into the CSR matrix
// type the rest of the project consumes. Malformed input throws ParseError("file:line: ...").
#include <iosfwd>
#include <string>

#include "linalg_cuda/csr_matrix.h"

namespace linalg_cuda {

// Reads FILE; symmetric files are expanded to both triangles. Duplicate entries are summed (as the
// Matrix Market convention says). Throws ParseError with file and line on any malformed content:
// missing or unsupported banner, bad size line, too few/too many entries, indices out of range,
// non-numeric values, NaN/Inf values, duplicates whose sum overflows, entries above the diagonal in a
// symmetric file, lines longer than 1 MiB. The text is read in 1 MiB blocks: a read takes the matrix
// and its assembly, not the file's size again.
CsrMatrix read_matrix_market(const std::string& path);
// Same, from a stream (read to its end); `name` is used in error messages.
CsrMatrix read_matrix_market(std::istream& in, const std::string& name);

// Writes A as "coordinate real general" (or symmetric: lower triangle only).
void write_matrix_market(const std::string& path, const CsrMatrix& a, bool symmetric = false);

}  // namespace linalg_cuda
