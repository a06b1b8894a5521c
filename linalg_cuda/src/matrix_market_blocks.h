#pragma once
// The Matrix Market reader with the size of the blocks it reads as a parameter: the public entry
// points read 1 MiB blocks (detail::TextBlocks::kBlockBytes); tests read with tiny blocks to put a
// block boundary at every place of a line.
#include <cstddef>
#include <istream>
#include <string>

#include "linalg_cuda/csr_matrix.h"

namespace linalg_cuda::detail {

CsrMatrix read_matrix_market(std::istream& in, const std::string& name, std::size_t block_bytes);

}  // namespace linalg_cuda::detail
