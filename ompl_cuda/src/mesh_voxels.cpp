#include "mesh_voxels.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <string>

#include "linalg_cuda/errors.h"

namespace ompl_cuda::detail {

namespace {

void cross(const double* a, const double* b, double* out) {
  out[0] = a[1] * b[2] - a[2] * b[1];
  out[1] = a[2] * b[0] - a[0] * b[2];
  out[2] = a[0] * b[1] - a[1] * b[0];
}

// Whether the projections of v0, v1, v2 on `axis` all lie beyond the box's radius on it, on one side.
bool separates(const double* axis, const double* v0, const double* v1, const double* v2, const double* half) {
  const double p0 = axis[0] * v0[0] + axis[1] * v0[1] + axis[2] * v0[2];
  const double p1 = axis[0] * v1[0] + axis[1] * v1[1] + axis[2] * v1[2];
  const double p2 = axis[0] * v2[0] + axis[1] * v2[1] + axis[2] * v2[2];
  const double r = half[0] * std::fabs(axis[0]) + half[1] * std::fabs(axis[1]) + half[2] * std::fabs(axis[2]);
  // A NaN (products beyond the double range) separates nothing: such a triangle is taken as touching.
  return std::min({p0, p1, p2}) > r || std::max({p0, p1, p2}) < -r;
}

// The voxel rasterizer of one grid: boxes of voxel ranges, grown, tested against triangles in the
// grid's frame (coordinates less the origin, so that the boxes' centres stay small).
class GridRasterizer {
 public:
  explicit GridRasterizer(const CloudGrid& grid) : grid_(grid), voxel_(grid.voxel) {
    double magnitude = 0, extent = 0;
    for (int k = 0; k < 3; ++k) {
      origin_[k] = grid.origin[k];
      magnitude = std::max({magnitude, std::fabs(origin_[k]), std::fabs(origin_[k] + voxel_ * grid.n[k])});
      extent = std::max(extent, voxel_ * grid.n[k]);
    }
    // A float coordinate of the grid's scale rounds by half an epsilon of it, a voxel's index by as much
    // of the extent; four of each bound every conversion the field's build and test make.
    float_growth_ = 4 * FLT_EPSILON * (magnitude + extent);
    extent_ = magnitude + extent;
    bits_.assign(static_cast<std::size_t>((grid.voxels() + 63) / 64), 0);
  }

  // Marks every voxel the triangle (nine coordinates, scene frame) touches.
  void mark(const double* scene_triangle) {
    double tri[9], size = 0;
    for (int i = 0; i < 9; ++i) {
      tri[i] = scene_triangle[i] - origin_[i % 3];
      size = std::max(size, std::fabs(scene_triangle[i]));
    }
    // The double arithmetic of the test (differences, cross and dot products) errs by a few epsilons of
    // the largest coordinate it meets: the box grows by sixteen.
    const double grow = float_growth_ + 16 * DBL_EPSILON * (size + extent_);
    int lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
      const double a = std::min({tri[k], tri[k + 3], tri[k + 6]}), b = std::max({tri[k], tri[k + 3], tri[k + 6]});
      // A voxel beyond the bounding box by more than the growth cannot touch; one more each side for the
      // rounding of these divisions (the search below narrows to the voxels that touch).
      const double first = std::floor((a - grow) / voxel_) - 1, last = std::floor((b + grow) / voxel_) + 1;
      if (last < 0 || first > grid_.n[k] - 1) return;  // wholly outside the grid
      lo[k] = static_cast<int>(std::max(first, 0.0));
      hi[k] = static_cast<int>(std::min(last, grid_.n[k] - 1.0));
    }
    if (!meets(tri, lo, hi, grow)) return;
    // The triangle's part in a slab, or a row, is convex: the rows and voxels it touches are contiguous,
    // found by bisection on runs of voxels. The test never refuses a box the triangle meets, so every run
    // that holds a touching voxel passes and the bisection never steps past the first or last of them.
    for (int z = lo[2]; z <= hi[2]; ++z) {
      int slab_lo[3] = {lo[0], lo[1], z}, slab_hi[3] = {hi[0], hi[1], z};
      if (!meets(tri, slab_lo, slab_hi, grow)) continue;
      const int y0 = first_touching(tri, slab_lo, slab_hi, 1, grow), y1 = last_touching(tri, slab_lo, slab_hi, 1, grow);
      for (int y = y0; y <= y1; ++y) {
        int row_lo[3] = {lo[0], y, z}, row_hi[3] = {hi[0], y, z};
        if (!meets(tri, row_lo, row_hi, grow)) continue;
        const int x0 = first_touching(tri, row_lo, row_hi, 0, grow), x1 = last_touching(tri, row_lo, row_hi, 0, grow);
        const long long row = static_cast<long long>(grid_.n[0]) * (y + static_cast<long long>(grid_.n[1]) * z);
        for (int x = x0; x <= x1; ++x) set(row + x);
      }
    }
  }

  // One point per marked voxel, in the voxels' order.
  void append_points(std::vector<float>* points) const {
    const long long nx = grid_.n[0], ny = grid_.n[1];
    for (std::size_t w = 0; w < bits_.size(); ++w)
      for (std::uint64_t word = bits_[w]; word != 0; word &= word - 1) {
        const long long v = static_cast<long long>(w) * 64 + __builtin_ctzll(word);
        const int index[3] = {static_cast<int>(v % nx), static_cast<int>((v / nx) % ny), static_cast<int>(v / (nx * ny))};
        for (int k = 0; k < 3; ++k) points->push_back(centre(k, index[k]));
      }
  }

 private:
  bool meets(const double* tri, const int* lo, const int* hi, double grow) const {
    double centre_of[3], half[3];
    for (int k = 0; k < 3; ++k) {
      centre_of[k] = 0.5 * (lo[k] + hi[k] + 1) * voxel_;
      half[k] = 0.5 * (hi[k] - lo[k] + 1) * voxel_ + grow;
    }
    return triangle_meets_box(tri, tri + 3, tri + 6, centre_of, half);
  }

  // The first voxel along `axis` of the run [lo, hi] (which touches) such that the run up to it touches.
  int first_touching(const double* tri, const int* lo, const int* hi, int axis, double grow) const {
    int a = lo[axis], b = hi[axis];  // the run up to b touches
    int end[3] = {hi[0], hi[1], hi[2]};
    while (a < b) {
      const int m = a + (b - a) / 2;
      end[axis] = m;
      if (meets(tri, lo, end, grow)) b = m;
      else a = m + 1;
    }
    return a;
  }

  // The last voxel along `axis` of the run [lo, hi] (which touches) such that the run from it touches.
  int last_touching(const double* tri, const int* lo, const int* hi, int axis, double grow) const {
    int a = lo[axis], b = hi[axis];  // the run from a touches
    int start[3] = {lo[0], lo[1], lo[2]};
    while (a < b) {
      const int m = a + (b - a + 1) / 2;
      start[axis] = m;
      if (meets(tri, start, hi, grow)) a = m;
      else b = m - 1;
    }
    return a;
  }

  void set(long long v) {
    const std::uint64_t bit = std::uint64_t{1} << (v % 64);
    std::uint64_t& word = bits_[static_cast<std::size_t>(v / 64)];
#pragma omp atomic update
    word |= bit;
  }

  // The centre of voxel i along axis k as a float, moved by a few floats where voxel_of_point's float
  // arithmetic would place the rounded centre in a neighbour.
  float centre(int k, int i) const {
    float c = static_cast<float>(origin_[k] + (i + 0.5) * voxel_);
    for (int step = 0; step < 64; ++step) {
      const float u = (c - grid_.origin[k]) / grid_.voxel;
      int at = -1;
      if (u >= 0 && u < static_cast<float>(grid_.n[k])) at = static_cast<int>(u);
      if (at == i) return c;
      c = std::nextafter(c, (u >= 0 && at > i) || u >= static_cast<float>(grid_.n[k]) ? -HUGE_VALF : HUGE_VALF);
    }
    throw linalg_cuda::InvalidArgument("scene field: voxels of " + std::to_string(voxel_) +
                                       " m are too fine for float coordinates of the grid at " + std::to_string(origin_[k]) +
                                       " m: choose a coarser resolution");
  }

  const CloudGrid& grid_;
  double origin_[3], voxel_, float_growth_ = 0, extent_ = 0;
  std::vector<std::uint64_t> bits_;
};

}  // namespace

bool triangle_meets_box(const double* a, const double* b, const double* c, const double* centre, const double* half) {
  double v0[3], v1[3], v2[3];
  for (int k = 0; k < 3; ++k) {
    v0[k] = a[k] - centre[k], v1[k] = b[k] - centre[k], v2[k] = c[k] - centre[k];
    // The box's normals: the bounding boxes apart.
    if (std::min({v0[k], v1[k], v2[k]}) > half[k] || std::max({v0[k], v1[k], v2[k]}) < -half[k]) return false;
  }
  const double edges[3][3] = {{v1[0] - v0[0], v1[1] - v0[1], v1[2] - v0[2]},
                              {v2[0] - v1[0], v2[1] - v1[1], v2[2] - v1[2]},
                              {v0[0] - v2[0], v0[1] - v2[1], v0[2] - v2[2]}};
  for (const auto& e : edges)
    for (int k = 0; k < 3; ++k) {
      double unit[3] = {0, 0, 0}, axis[3];
      unit[k] = 1;
      cross(unit, e, axis);
      if (separates(axis, v0, v1, v2, half)) return false;
    }
  double normal[3];
  cross(edges[0], edges[1], normal);
  return !separates(normal, v0, v1, v2, half);
}

std::vector<double> scene_triangles(const Scene& scene) {
  std::vector<double> out;
  out.reserve(9 * scene.num_mesh_triangles());
  std::vector<double> placed;
  for (const SceneObject& object : scene.objects())
    for (const SceneMesh& mesh : object.meshes) {
      const Transform& t = mesh.pose;
      placed.resize(mesh.vertices.size());
      for (std::size_t v = 0; v + 2 < mesh.vertices.size(); v += 3)
        for (int i = 0; i < 3; ++i) {
          placed[v + i] = t.rotation[3 * i] * mesh.vertices[v] + t.rotation[3 * i + 1] * mesh.vertices[v + 1] +
                          t.rotation[3 * i + 2] * mesh.vertices[v + 2] + t.translation[i];
          if (!std::isfinite(placed[v + i]))
            throw linalg_cuda::InvalidArgument("scene field: a vertex of a mesh of object '" + object.id +
                                               "' lies beyond the double range in the scene frame");
        }
      for (const int index : mesh.triangles)
        out.insert(out.end(), placed.begin() + 3 * static_cast<std::size_t>(index),
                   placed.begin() + 3 * static_cast<std::size_t>(index) + 3);
    }
  return out;
}

void add_triangles_within(const std::vector<double>& triangles, const double* low, const double* high, double* lo,
                          double* hi) {
  double centre[3], half[3];
  for (int k = 0; k < 3; ++k) centre[k] = 0.5 * (low[k] + high[k]), half[k] = 0.5 * (high[k] - low[k]);
  for (std::size_t t = 0; t + 8 < triangles.size(); t += 9) {
    const double* tri = &triangles[t];
    if (!triangle_meets_box(tri, tri + 3, tri + 6, centre, half)) continue;
    for (int k = 0; k < 3; ++k) {
      lo[k] = std::min(lo[k], std::max(low[k], std::min({tri[k], tri[k + 3], tri[k + 6]})));
      hi[k] = std::max(hi[k], std::min(high[k], std::max({tri[k], tri[k + 3], tri[k + 6]})));
    }
  }
}

void append_triangle_voxels(const std::vector<double>& triangles, const CloudGrid& grid, std::vector<float>* points) {
  if (triangles.empty() || grid.voxels() == 0) return;
  GridRasterizer rasterizer(grid);
  const long long count = static_cast<long long>(triangles.size() / 9);
#pragma omp parallel for schedule(dynamic, 64)
  for (long long t = 0; t < count; ++t) rasterizer.mark(&triangles[9 * t]);
  rasterizer.append_points(points);
}

}  // namespace ompl_cuda::detail
