// The GPU's build of a point cloud's distance field: the same marks and passes as the CPU's
// (cloud_field_build.cpp), one thread per point, then one thread per line of each pass.
#include <algorithm>

#include "cloud_field_build.h"
#include "linalg_cuda/cuda_check.h"
#include "linalg_cuda/internal/launch_geometry.h"

namespace ompl_cuda::detail {

namespace {

__global__ void fill_kernel(float* field, long long count, float value) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    field[i] = value;
}

// Every point marks its voxel (all write the same 0: the order does not matter).
__global__ void mark_kernel(CloudGrid grid, const float* __restrict__ xyz, long long points, float* field) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < points;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long v = voxel_of_point(grid, xyz + 3 * i);
    if (v >= 0) field[v] = 0;
  }
}

__global__ void pass_kernel(CloudGrid grid, int axis, const float* __restrict__ in, float* __restrict__ out, int* v_all,
                            double* z_all) {
  const int n = grid.n[axis];
  const long long lines = grid.voxels() / n;
  for (long long line = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; line < lines;
       line += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long first = 0, stride = 0;
    line_of_pass(grid, axis, line, &first, &stride);
    distance_transform_line(in + first, out + first, n, stride, v_all + line * n, z_all + line * (n + 1));
  }
}

}  // namespace

std::vector<float> build_distance_field_gpu(const std::vector<float>& xyz, const CloudGrid& grid,
                                            linalg_cuda::DeviceBuffer* field, cudaStream_t stream) {
  const long long voxels = grid.voxels();
  const long long points = static_cast<long long>(xyz.size() / 3);
  // A pass's scratch: n ints and n + 1 doubles per line of n voxels, at most 2 doubles per voxel.
  linalg_cuda::DeviceBuffer other(voxels * sizeof(float)), v(voxels * sizeof(int)), z(2 * voxels * sizeof(double)),
      cloud(std::max<long long>(points, 1) * 3 * sizeof(float));
  field->reserve(voxels * sizeof(float));
  const int threads = linalg_cuda::detail::kThreadsPerBlock;
  LINALG_CUDA_CHECK(cudaMemcpyAsync(cloud.data(), xyz.data(), points * 3 * sizeof(float), cudaMemcpyHostToDevice, stream));
  float* a = field->as<float>();
  float* b = other.as<float>();
  fill_kernel<<<linalg_cuda::detail::blocks_for(voxels, threads), threads, 0, stream>>>(a, voxels, HUGE_VALF);
  LINALG_CUDA_CHECK_LAUNCH();
  mark_kernel<<<linalg_cuda::detail::blocks_for(points, threads), threads, 0, stream>>>(grid, cloud.as<float>(), points, a);
  LINALG_CUDA_CHECK_LAUNCH();
  // Three passes: a -> b -> a -> b; the result is copied back into `field`.
  for (int axis = 0; axis < 3; ++axis) {
    const long long lines = voxels / grid.n[axis];
    pass_kernel<<<linalg_cuda::detail::blocks_for(lines, threads), threads, 0, stream>>>(grid, axis, a, b, v.as<int>(),
                                                                                        z.as<double>());
    LINALG_CUDA_CHECK_LAUNCH();
    std::swap(a, b);
  }
  if (a != field->as<float>())
    LINALG_CUDA_CHECK(cudaMemcpyAsync(field->data(), a, voxels * sizeof(float), cudaMemcpyDeviceToDevice, stream));
  std::vector<float> host(voxels);
  LINALG_CUDA_CHECK(cudaMemcpyAsync(host.data(), field->data(), voxels * sizeof(float), cudaMemcpyDeviceToHost, stream));
  LINALG_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

}  // namespace ompl_cuda::detail
