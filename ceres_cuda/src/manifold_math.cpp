#include "manifold_math.h"

#include <ceres/manifold.h>

#include <typeinfo>
#include <vector>

namespace ceres_cuda::detail {
namespace {

template <class T>
bool is(const ceres::Manifold& m) {
  return typeid(m) == typeid(T);
}

}  // namespace

bool recognise(const ceres::Manifold* manifold, int size, ManifoldKind* kind, unsigned* mask) {
  *mask = 0;
  if (manifold == nullptr || is<ceres::EuclideanManifold<ceres::DYNAMIC>>(*manifold) ||
      is<ceres::EuclideanManifold<1>>(*manifold) || is<ceres::EuclideanManifold<2>>(*manifold) ||
      is<ceres::EuclideanManifold<3>>(*manifold) || is<ceres::EuclideanManifold<4>>(*manifold)) {
    *kind = ManifoldKind::Euclidean;
    return true;
  }
  if (is<ceres::QuaternionManifold>(*manifold) || is<ceres::EigenQuaternionManifold>(*manifold)) {
    *kind = is<ceres::QuaternionManifold>(*manifold) ? ManifoldKind::Quaternion : ManifoldKind::EigenQuaternion;
    return size == 4;
  }
  if (is<ceres::SubsetManifold>(*manifold) && size <= kMaxSubsetSize) {
    // A constant entry's row of the PlusJacobian is zero; the others hold their tangent entry's 1.
    const int tangent = manifold->TangentSize();
    std::vector<double> x(size, 0.0), J(static_cast<std::size_t>(size) * tangent, 0.0);
    if (tangent > 0 && !manifold->PlusJacobian(x.data(), J.data())) return false;
    for (int r = 0; r < size; ++r) {
      bool constant = true;
      for (int k = 0; k < tangent; ++k) constant = constant && J[static_cast<std::size_t>(r) * tangent + k] == 0.0;
      if (constant) *mask |= 1u << r;
    }
    *kind = ManifoldKind::Subset;
    return true;
  }
  return false;
}

}  // namespace ceres_cuda::detail
