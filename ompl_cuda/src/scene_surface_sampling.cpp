// sample_scene_surfaces (point_cloud.h): a scene's primitives seen as a sensor would, points spread
// over their surfaces by area.
#include <cmath>
#include <random>

#include "ompl_cuda/point_cloud.h"

namespace ompl_cuda {

std::vector<float> sample_scene_surfaces(const Scene& scene, std::size_t count, unsigned seed) {
  std::vector<const Primitive*> primitives;
  std::vector<double> areas;
  constexpr double pi = 3.14159265358979323846;
  for (const SceneObject& object : scene.objects())
    for (const Primitive& p : object.primitives) {
      const double* s = p.size;
      double area = 0;
      switch (p.kind) {
        case Primitive::Kind::Sphere: area = 4 * pi * s[0] * s[0]; break;
        case Primitive::Kind::Box: area = 2 * (s[0] * s[1] + s[1] * s[2] + s[0] * s[2]); break;
        case Primitive::Kind::Cylinder: area = 2 * pi * s[0] * s[1] + 2 * pi * s[0] * s[0]; break;
        case Primitive::Kind::Capsule: area = 2 * pi * s[0] * s[1] + 4 * pi * s[0] * s[0]; break;
      }
      if (area > 0) {
        primitives.push_back(&p);
        areas.push_back(area);
      }
    }
  std::vector<float> xyz;
  if (primitives.empty()) return xyz;
  xyz.reserve(3 * count);
  std::mt19937_64 rng(seed);
  std::discrete_distribution<std::size_t> pick(areas.begin(), areas.end());
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> normal;
  for (std::size_t i = 0; i < count; ++i) {
    const Primitive& p = *primitives[pick(rng)];
    const double* s = p.size;
    double q[3] = {0, 0, 0};
    auto on_sphere = [&](double r, double* out) {
      double n[3] = {normal(rng), normal(rng), normal(rng)};
      const double len = std::sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]) + 1e-300;
      for (int k = 0; k < 3; ++k) out[k] = r * n[k] / len;
    };
    if (p.kind == Primitive::Kind::Sphere) {
      on_sphere(s[0], q);
    } else if (p.kind == Primitive::Kind::Box) {
      const double faces[3] = {s[1] * s[2], s[0] * s[2], s[0] * s[1]};
      const double r = unit(rng) * (faces[0] + faces[1] + faces[2]);
      const int axis = r < faces[0] ? 0 : (r < faces[0] + faces[1] ? 1 : 2);
      for (int k = 0; k < 3; ++k) q[k] = (unit(rng) - 0.5) * s[k];
      q[axis] = (unit(rng) < 0.5 ? -0.5 : 0.5) * s[axis];
    } else {
      const double side = 2 * pi * s[0] * s[1];
      const double ends = p.kind == Primitive::Kind::Cylinder ? 2 * pi * s[0] * s[0] : 4 * pi * s[0] * s[0];
      if (unit(rng) * (side + ends) < side) {
        const double a = 2 * pi * unit(rng);
        q[0] = s[0] * std::cos(a), q[1] = s[0] * std::sin(a), q[2] = (unit(rng) - 0.5) * s[1];
      } else if (p.kind == Primitive::Kind::Cylinder) {
        const double a = 2 * pi * unit(rng), r = s[0] * std::sqrt(unit(rng));
        q[0] = r * std::cos(a), q[1] = r * std::sin(a), q[2] = (unit(rng) < 0.5 ? -0.5 : 0.5) * s[1];
      } else {
        on_sphere(s[0], q);
        q[2] += (q[2] < 0 ? -0.5 : 0.5) * s[1];
      }
    }
    for (int k = 0; k < 3; ++k)
      xyz.push_back(static_cast<float>(p.pose.rotation[3 * k] * q[0] + p.pose.rotation[3 * k + 1] * q[1] +
                                       p.pose.rotation[3 * k + 2] * q[2] + p.pose.translation[k]));
  }
  return xyz;
}

}  // namespace ompl_cuda
