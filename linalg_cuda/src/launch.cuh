#pragma once
// Launch geometry shared by linalg_cuda's element-wise kernels (grid-stride loops).
#include <algorithm>
#include <cstddef>

namespace linalg_cuda::detail {

constexpr int kBlock = 256;

// Enough blocks to cover n with kBlock threads each, capped so that grid-stride loops take over
// for very large n (the cap keeps several waves on a 132-SM Hopper).
inline unsigned grid_for(std::size_t n, int block = kBlock) {
  const std::size_t blocks = (n + block - 1) / block;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(blocks, 65535u * 4)));
}

}  // namespace linalg_cuda::detail
