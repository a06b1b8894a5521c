#pragma once
// Building a point cloud's distance field (cloud_distance_field.h) on the CPU or the GPU: the grid is
// planned on the host over the points within a box (the robot's reach), then the voxels the points
// occupy are marked and three passes of the distance transform run, one per axis. Scene meshes join
// as points too: the centre of every voxel a triangle touches (mesh_voxels.h).
#include <memory>
#include <vector>

#include "cloud_distance_field.h"
#include <cuda_runtime_api.h>

#include "linalg_cuda/device_buffer.h"

namespace ompl_cuda::detail {

// Voxels a field may have (20 bytes each while it is built): beyond, the resolution is too fine for
// the cloud's extent.
constexpr long long kMaxCloudVoxels = 1LL << 27;

// Grows the box [lo, hi] (empty while lo > hi) to hold the points (x y z each) that lie within [low, high].
void add_points_within(const std::vector<float>& xyz, const double* low, const double* high, double* lo, double* hi);

// The grid over the box [lo, hi] with a voxel's margin on every side; no voxels when the box is empty.
// InvalidArgument when it would exceed kMaxCloudVoxels (the message names the coarsest resolution
// that fits).
CloudGrid plan_grid_over(const double* lo, const double* hi, double resolution);

// The grid over the points (x y z each) that lie within [low, high]: add_points_within, then plan_grid_over.
CloudGrid plan_cloud_grid(const std::vector<float>& xyz, double resolution, const double* low, const double* high);

// The field's values on the CPU (all cores).
std::vector<float> build_distance_field_cpu(const std::vector<float>& xyz, const CloudGrid& grid);

// The same values built on the GPU into `field` (grown as needed), and downloaded into the returned
// vector for the CPU's single checks.
std::vector<float> build_distance_field_gpu(const std::vector<float>& xyz, const CloudGrid& grid,
                                            linalg_cuda::DeviceBuffer* field, cudaStream_t stream);

}  // namespace ompl_cuda::detail
