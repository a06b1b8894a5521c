#pragma once
// Scene meshes in the point cloud's distance field (cloud_distance_field.h): every voxel a triangle
// touches is occupied, handed to the field's build as one point at its centre (a point that
// voxel_of_point places in that voxel), so the build and its GPU kernel take meshes as they take clouds.
//
// Conservative: every point p of a triangle lies in a voxel the triangle touches, which is marked; the
// sphere test never misses a point of a marked voxel (cloud_distance_field.h), so it never misses p.
// A marked voxel meets the triangle, so its centre lies within sqrt(3) / 2 voxels of a point of the
// triangle, and the test reaches at most 2 sqrt(3) voxels beyond the surface, as beyond a cloud (plus
// the boxes' growth by rounding: about 5e-7 of the grid's coordinates, a micrometre or two for a robot).
#include <vector>

#include "cloud_distance_field.h"
#include "ompl_cuda/scene.h"

namespace ompl_cuda::detail {

// Whether the triangle (a, b, c) meets the closed box of centre `centre` and half sides `half`: the
// separating-axis test of Akenine-Moller (the box's three normals, the triangle's normal and the nine
// cross products of their edges). Degenerate triangles (segments, points) are tested exactly too: their
// zero axes separate nothing, and the others are those of a segment or a point against a box.
bool triangle_meets_box(const double* a, const double* b, const double* c, const double* centre, const double* half);

// Every mesh triangle of the scene in the scene frame, nine coordinates (a, b, c) each.
std::vector<double> scene_triangles(const Scene& scene);

// Grows the box [lo, hi] (empty while lo > hi) to hold the part within [low, high] of every triangle
// that meets that box (the triangle's bounding box clipped to it).
void add_triangles_within(const std::vector<double>& triangles, const double* low, const double* high, double* lo,
                          double* hi);

// Appends to `points` (x y z each) one point in every voxel of `grid` that a triangle touches, each
// voxel once: its centre, or the float nearest to it that voxel_of_point places in it. The voxels' boxes
// grow by the rounding of the grid's float coordinates and of this test's double arithmetic, so that no
// voxel a triangle touches in exact arithmetic is left out. InvalidArgument where the grid's coordinates
// are too far from the origin for its voxels to hold a float (a resolution far finer than a robot needs).
void append_triangle_voxels(const std::vector<double>& triangles, const CloudGrid& grid, std::vector<float>* points);

}  // namespace ompl_cuda::detail
