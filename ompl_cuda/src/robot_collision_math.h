#pragma once
// The robot checks' geometry, written once for the host and the device (LINALG_HD) on a scalar type T:
// a sphere against a scene primitive (sphere, box, cylinder, capsule, each in its own frame) and a
// sphere against a sphere. Closed sets: touching is a collision, as in the chain's checks.
#include <math.h>

#include "linalg_cuda/internal/host_device.h"

namespace ompl_cuda::detail {

// A scene primitive as the checks read it: the inverse of its pose (world to primitive frame) and sizes.
template <typename T>
struct CheckPrimitive {
  T rotation[9];     // transposed pose rotation, row-major
  T translation[3];  // -rotation * pose translation
  T size[3];         // Primitive::size
  int kind;          // Primitive::Kind's value: 0 sphere, 1 box, 2 cylinder, 3 capsule
};

template <typename T>
LINALG_HD T clamp_value(T v, T lo, T hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

// Whether the sphere (centre c in the world, radius r) touches the primitive.
template <typename T>
LINALG_HD bool sphere_touches(const T* c, T r, const CheckPrimitive<T>& p) {
  T q[3];
  for (int i = 0; i < 3; ++i)
    q[i] = p.rotation[3 * i] * c[0] + p.rotation[3 * i + 1] * c[1] + p.rotation[3 * i + 2] * c[2] + p.translation[i];
  if (p.kind == 0) {
    const T reach = r + p.size[0];
    return q[0] * q[0] + q[1] * q[1] + q[2] * q[2] <= reach * reach;
  }
  if (p.kind == 1) {
    T d2 = 0;
    for (int i = 0; i < 3; ++i) {
      const T e = fabs(q[i]) - p.size[i] / 2;
      if (e > 0) d2 += e * e;
    }
    return d2 <= r * r;
  }
  if (p.kind == 2) {
    const T radial = sqrt(q[0] * q[0] + q[1] * q[1]) - p.size[0], axial = fabs(q[2]) - p.size[1] / 2;
    const T a = radial > 0 ? radial : T(0), b = axial > 0 ? axial : T(0);
    return a * a + b * b <= r * r;
  }
  const T z = q[2] - clamp_value(q[2], -p.size[1] / 2, p.size[1] / 2);
  const T reach = r + p.size[0];
  return q[0] * q[0] + q[1] * q[1] + z * z <= reach * reach;
}

template <typename T>
LINALG_HD bool spheres_touch(const T* a, T ra, const T* b, T rb) {
  const T dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2], reach = ra + rb;
  return dx * dx + dy * dy + dz * dz <= reach * reach;
}

}  // namespace ompl_cuda::detail
