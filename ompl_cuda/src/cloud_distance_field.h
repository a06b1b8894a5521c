#pragma once
// A point cloud as the robot checks read it: a grid of voxels over the cloud's points within the
// robot's reach, holding per voxel the squared distance (in voxels) from its centre to the nearest
// occupied voxel's centre: an exact Euclidean distance transform (Felzenszwalb and Huttenlocher), one
// axis at a time. Written once for the host and the device (LINALG_HD): the CPU and the GPU build the
// same values and decide the same way.
//
// Conservative: for a sphere (centre c, radius r, inside the grid's box) and a point p with |p - c| <=
// r, let g be the centre of the voxel holding c and g_p that of p's voxel. Then |g - g_p| <= |g - c| +
// |c - p| + |p - g_p| <= r + sqrt(3) voxels, so the test "distance(g) <= r + sqrt(3) voxels" says yes:
// it never misses a point, and reaches at most 2 sqrt(3) voxels beyond the cloud.
#include <math.h>

#include "linalg_cuda/internal/host_device.h"

namespace ompl_cuda::detail {

// The voxel grid: n[0] x n[1] x n[2] voxels of side `voxel` from `origin` (the box's lower corner),
// voxel (x, y, z) at index x + n[0] (y + n[1] z).
struct CloudGrid {
  int n[3] = {0, 0, 0};
  float origin[3] = {0, 0, 0};
  float voxel = 0;
  LINALG_HD long long voxels() const { return static_cast<long long>(n[0]) * n[1] * n[2]; }
};

struct CloudView {
  CloudGrid grid;
  const float* distance2 = nullptr;  // per voxel; null without a cloud
};

// The voxel along one axis of a coordinate, clamped into the grid (a coordinate outside is moved in).
LINALG_HD int voxel_coordinate(float x, float origin, float voxel, int n) {
  const float u = (x - origin) / voxel;
  if (!(u >= 0)) return 0;
  if (u >= static_cast<float>(n)) return n - 1;
  return static_cast<int>(u);
}

// The voxel holding point p, or -1 where p lies outside the grid.
LINALG_HD long long voxel_of_point(const CloudGrid& g, const float* p) {
  long long index = 0, scale = 1;
  for (int i = 0; i < 3; ++i) {
    const float u = (p[i] - g.origin[i]) / g.voxel;
    if (!(u >= 0) || u >= static_cast<float>(g.n[i])) return -1;
    index += scale * static_cast<int>(u);
    scale *= g.n[i];
  }
  return index;
}

// Whether the sphere may touch a point of the cloud (see above). A centre outside the grid's box is
// moved onto it (c'), and the radius shrinks to sqrt(r^2 - |c - c'|^2): every point p in the box has
// |p - c|^2 >= |p - c'|^2 + |c - c'|^2, so no point is missed and the test stays as tight as inside.
LINALG_HD bool sphere_touches_cloud(const float* c, float r, const CloudView& cloud) {
  const CloudGrid& g = cloud.grid;
  float moved2 = 0;
  int v[3];
  for (int i = 0; i < 3; ++i) {
    const float hi = g.origin[i] + g.voxel * static_cast<float>(g.n[i]);
    const float inside = c[i] < g.origin[i] ? g.origin[i] : (c[i] > hi ? hi : c[i]);
    moved2 += (c[i] - inside) * (c[i] - inside);
    v[i] = voxel_coordinate(inside, g.origin[i], g.voxel, g.n[i]);
  }
  if (moved2 > r * r) return false;
  const float reach = sqrt(r * r - moved2) / g.voxel + 1.7320509f;  // sqrt(3), rounded up
  return cloud.distance2[v[0] + static_cast<long long>(g.n[0]) * (v[1] + static_cast<long long>(g.n[1]) * v[2])] <=
         reach * reach;
}

// The squared distance transform of one line of n values at `stride` apart: out[q] = min over p of
// (q - p)^2 + f[p], f infinite where nothing is. v (n ints) and z (n + 1 doubles) are scratch. The
// values are integers below 2^24 in practice (exact in float); the envelope's crossings are computed
// in double, IEEE-rounded on both sides.
LINALG_HD void distance_transform_line(const float* f, float* out, int n, long long stride, int* v, double* z) {
  int k = -1;
  for (int q = 0; q < n; ++q) {
    const double fq = f[q * stride];
    if (isinf(fq)) continue;
    double s = -HUGE_VAL;
    while (k >= 0) {
      const int p = v[k];
      s = ((fq + double(q) * q) - (double(f[p * stride]) + double(p) * p)) / (2.0 * (q - p));
      if (s <= z[k]) --k;
      else break;
    }
    ++k;
    v[k] = q;
    z[k] = k == 0 ? -HUGE_VAL : s;
    z[k + 1] = HUGE_VAL;
  }
  for (int q = 0, j = 0; q < n; ++q) {
    if (k < 0) {
      out[q * stride] = HUGE_VALF;
      continue;
    }
    while (z[j + 1] < q) ++j;
    const double d = q - v[j];
    out[q * stride] = static_cast<float>(d * d + f[v[j] * stride]);
  }
}

// Line `line` of the pass along `axis`: its first voxel and the stride between its voxels.
LINALG_HD void line_of_pass(const CloudGrid& g, int axis, long long line, long long* first, long long* stride) {
  const long long nx = g.n[0], ny = g.n[1];
  if (axis == 0) {
    *first = line * nx;
    *stride = 1;
  } else if (axis == 1) {
    *first = line % nx + (line / nx) * nx * ny;
    *stride = nx;
  } else {
    *first = line;
    *stride = nx * ny;
  }
}

}  // namespace ompl_cuda::detail
