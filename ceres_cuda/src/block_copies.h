#pragma once
// The layout's parameter blocks (user memory, a pointer per block) to and from contiguous arrays,
// block after block. At Final-13682's size that is 4.5 million points, which, numbered in the
// camera-major order, lie far apart in the user's memory: a copy on one thread waits on a cache miss
// per block, so large copies run on all threads (the copies are exact whatever the threads).
#include <vector>

namespace ceres_cuda::detail {

// out[k * size + j] = blocks[k][j] for every block.
void gather_blocks(const std::vector<double*>& blocks, int size, double* out);

// blocks[k][j] = in[k * size + j] for the first count blocks.
void scatter_blocks(const double* in, int size, int count, const std::vector<double*>& blocks);

}  // namespace ceres_cuda::detail
