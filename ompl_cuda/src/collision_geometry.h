#pragma once
// A link's collision geometry as the sphere cover reads it: triangles (boxes exactly, cylinders as
// prisms whose polygon circumscribes the circle, meshes as assimp reads them, all as solids bounded
// by their triangles) and exact spheres, in the link's frame.
#include <array>
#include <vector>

#include "ompl_cuda/robot_model.h"
#include "ompl_cuda/robot_spheres.h"

namespace ompl_cuda::detail {

using Vec3 = std::array<double, 3>;

struct Triangle {
  Vec3 a, b, c;
};

struct LinkGeometry {
  std::vector<Triangle> triangles;
  std::vector<Sphere> spheres;
};

// Throws linalg_cuda::ParseError naming the mesh file where assimp cannot read it.
LinkGeometry link_geometry(const RobotLink& link);

}  // namespace ompl_cuda::detail
