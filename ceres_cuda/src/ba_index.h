#pragma once
// The index arrays both engines share: for every residual its variable camera and point (or -1),
// and for every variable camera and point the residuals that touch it (CSR, residuals in order).
#include <vector>

#include "ba_layout.h"

namespace ceres_cuda::detail {

struct BaIndex {
  int residuals = 0, cameras = 0, points = 0;  // variable cameras and points
  int camera_size = 0, residual_size = 0;
  std::vector<int> camera_of, point_of;          // per residual: variable index or -1
  std::vector<int> camera_param, point_param;    // per residual: index into layout cameras/points
  std::vector<int> camera_start, camera_residuals;  // CSR over variable cameras
  std::vector<int> point_start, point_residuals;    // CSR over variable points
  // Residual blocks that repeat a (variable camera, variable point) pair: pair_next[i] is the next
  // residual of i's camera with i's point (-1: none), pair_repeat[i] is 1 when an earlier residual of
  // the camera has the point. Both empty when no camera sees a point twice (the common case).
  std::vector<int> pair_next;
  std::vector<unsigned char> pair_repeat;
  // Without an ordering (the layout's program positions given), the variable cameras that Ceres'
  // independent set would eliminate first, where the BAL engines eliminate every point: the same
  // problem by another reduced system, which Solve logs. 0 where Ceres eliminates the points, as
  // they do; at least 1 where it eliminates a camera (it may then take more).
  long cameras_ceres_eliminates = 0;
};

BaIndex make_index(const BaLayout& layout);

}  // namespace ceres_cuda::detail
