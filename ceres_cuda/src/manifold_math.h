#pragma once
// The manifolds the GPU applies itself (device_state.cu), written once for host and device: no
// manifold or a EuclideanManifold (x + delta), Ceres' QuaternionManifold (w, x, y, z) and
// EigenQuaternionManifold (x, y, z, w) with Ceres' Plus (the exponential map, q_delta * x) and
// PlusJacobian, and SubsetManifold (its constant entries kept). The formulas are Ceres 2.1's
// (manifold.cc); recognise() says which of them a block's manifold object is.
#include <math.h>

#include "linalg_cuda/internal/host_device.h"

namespace ceres {
class Manifold;
}

namespace ceres_cuda::detail {

enum class ManifoldKind : int { Euclidean, Quaternion, EigenQuaternion, Subset };

// A variable block as the device state applies it: its place in the state and in tangent vectors,
// its PlusJacobian's place (-1: none), and for SubsetManifold the constant entries (bit k: entry k).
struct ManifoldBlock {
  long offset = 0, tangent_offset = 0, plus_jacobian_offset = -1;
  int size = 0, tangent_size = 0;
  ManifoldKind kind = ManifoldKind::Euclidean;
  unsigned constant_mask = 0;
};

// Subset blocks of more entries than the mask's bits stay on the host.
constexpr int kMaxSubsetSize = 32;

// The kind of `manifold` (null: none), with *mask for SubsetManifold (read from its PlusJacobian,
// which does not depend on x); false when the GPU does not apply it.
bool recognise(const ceres::Manifold* manifold, int size, ManifoldKind* kind, unsigned* mask);

// The entries' places in quaternion order: Ceres' (w first) or Eigen's (w last).
struct QuaternionOrder {
  int w, x, y, z;
};
LINALG_HD QuaternionOrder quaternion_order(ManifoldKind kind) {
  return kind == ManifoldKind::Quaternion ? QuaternionOrder{0, 1, 2, 3} : QuaternionOrder{3, 0, 1, 2};
}

// out = Plus(x, delta) for one block.
LINALG_HD void block_plus(const ManifoldBlock& b, const double* x, const double* delta, double* out) {
  switch (b.kind) {
    case ManifoldKind::Quaternion:
    case ManifoldKind::EigenQuaternion: {
      const double norm_delta = sqrt(delta[0] * delta[0] + delta[1] * delta[1] + delta[2] * delta[2]);
      if (norm_delta == 0.0) {
        for (int i = 0; i < 4; ++i) out[i] = x[i];
        return;
      }
      const QuaternionOrder o = quaternion_order(b.kind);
      const double sin_delta_by_delta = sin(norm_delta) / norm_delta;
      double q[4];
      q[o.w] = cos(norm_delta);
      q[o.x] = sin_delta_by_delta * delta[0];
      q[o.y] = sin_delta_by_delta * delta[1];
      q[o.z] = sin_delta_by_delta * delta[2];
      out[o.w] = q[o.w] * x[o.w] - q[o.x] * x[o.x] - q[o.y] * x[o.y] - q[o.z] * x[o.z];
      out[o.x] = q[o.w] * x[o.x] + q[o.x] * x[o.w] + q[o.y] * x[o.z] - q[o.z] * x[o.y];
      out[o.y] = q[o.w] * x[o.y] - q[o.x] * x[o.z] + q[o.y] * x[o.w] + q[o.z] * x[o.x];
      out[o.z] = q[o.w] * x[o.z] + q[o.x] * x[o.y] - q[o.y] * x[o.x] + q[o.z] * x[o.w];
      return;
    }
    case ManifoldKind::Subset:
      for (int i = 0, j = 0; i < b.size; ++i) out[i] = (b.constant_mask >> i) & 1u ? x[i] : x[i] + delta[j++];
      return;
    case ManifoldKind::Euclidean:
      for (int i = 0; i < b.size; ++i) out[i] = x[i] + delta[i];
      return;
  }
}

// J (size x tangent_size, row-major) = PlusJacobian(x) for one block with a manifold.
LINALG_HD void block_plus_jacobian(const ManifoldBlock& b, const double* x, double* J) {
  switch (b.kind) {
    case ManifoldKind::Quaternion:
    case ManifoldKind::EigenQuaternion: {
      const QuaternionOrder o = quaternion_order(b.kind);
      double* w = J + 3 * o.w;
      double* qx = J + 3 * o.x;
      double* qy = J + 3 * o.y;
      double* qz = J + 3 * o.z;
      w[0] = -x[o.x], w[1] = -x[o.y], w[2] = -x[o.z];
      qx[0] = x[o.w], qx[1] = x[o.z], qx[2] = -x[o.y];
      qy[0] = -x[o.z], qy[1] = x[o.w], qy[2] = x[o.x];
      qz[0] = x[o.y], qz[1] = -x[o.x], qz[2] = x[o.w];
      return;
    }
    case ManifoldKind::Subset:
      for (int r = 0, c = 0; r < b.size; ++r) {
        for (int k = 0; k < b.tangent_size; ++k) J[r * b.tangent_size + k] = 0.0;
        if (!((b.constant_mask >> r) & 1u)) J[r * b.tangent_size + c++] = 1.0;
      }
      return;
    case ManifoldKind::Euclidean:
      for (int r = 0; r < b.size; ++r)
        for (int k = 0; k < b.size; ++k) J[r * b.size + k] = r == k ? 1.0 : 0.0;
      return;
  }
}

}  // namespace ceres_cuda::detail
