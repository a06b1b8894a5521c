#include "block_copies.h"

#include <algorithm>
#include <cstddef>

#include "set_up_threads.h"

namespace ceres_cuda::detail {

void gather_blocks(const std::vector<double*>& blocks, int size, double* out) {
  const long count = static_cast<long>(blocks.size());
  const SetUpThreads threads(count);
#pragma omp parallel for schedule(static)
  for (long k = 0; k < count; ++k) std::copy_n(blocks[k], size, out + static_cast<std::size_t>(k) * size);
}

void scatter_blocks(const double* in, int size, int count, const std::vector<double*>& blocks) {
  const SetUpThreads threads(count);
#pragma omp parallel for schedule(static)
  for (long k = 0; k < count; ++k) std::copy_n(in + static_cast<std::size_t>(k) * size, size, blocks[k]);
}

}  // namespace ceres_cuda::detail
