#pragma once
// The library's cost functions as models the GPU evaluates: per model its residual count, its blocks'
// ambient sizes, the per-residual constants (the observation) and evaluate(), which takes and gives
// what ceres::CostFunction::Evaluate does (parameters per block; residuals; per block a row-major
// Jacobian in the ambient space, or null). The public cost functions' Evaluate calls the same code, so
// that the CPU engines and Ceres see the values the kernels compute.
#include "colmap_camera_projection.h"
#include "linalg_cuda/internal/host_device.h"
#include "quaternion_snavely_projection.h"
#include "snavely_projection.h"

namespace ceres_cuda::detail {

// The models in the order families of residuals are numbered; Host: any other cost function. The
// COLMAP models are ColmapReprojectionError's, one per camera model.
enum class CostModel : int {
  Snavely = 0,
  QuaternionSnavely = 1,
  ColmapSimplePinhole = 2,
  ColmapPinhole = 3,
  ColmapSimpleRadial = 4,
  ColmapRadial = 5,
  ColmapOpenCV = 6,
  Host = 7
};

// SnavelyReprojectionError: camera (9), point (3).
struct SnavelyModel {
  static constexpr int kResiduals = 2, kBlocks = 2, kObservationSize = 2, kParameters = 12;
  LINALG_HD static constexpr int block_size(int k) { return k == 0 ? 9 : 3; }
  LINALG_HD static constexpr int block_start(int k) { return k == 0 ? 0 : 9; }
  LINALG_HD static bool evaluate(const double* const* p, const double* observation, double* residuals,
                                 double* const* jacobians) {
    const bool want = jacobians != nullptr && (jacobians[0] != nullptr || jacobians[1] != nullptr);
    double jc[18], jp[6];
    if (!snavely_residual(p[0], p[1], observation[0], observation[1], residuals, want ? jc : nullptr,
                          want ? jp : nullptr))
      return false;
    if (!want) return true;
    if (jacobians[0] != nullptr)
      for (int k = 0; k < 18; ++k) jacobians[0][k] = jc[k];
    if (jacobians[1] != nullptr)
      for (int k = 0; k < 6; ++k) jacobians[1][k] = jp[k];
    return true;
  }
};

// QuaternionSnavelyReprojectionError: rotation (4), translation (3), intrinsics (3), point (3).
struct QuaternionSnavelyModel {
  static constexpr int kResiduals = 2, kBlocks = 4, kObservationSize = 2, kParameters = 13;
  LINALG_HD static constexpr int block_size(int k) { return k == 0 ? 4 : 3; }
  LINALG_HD static constexpr int block_start(int k) { return k == 0 ? 0 : 1 + 3 * k; }
  LINALG_HD static bool evaluate(const double* const* p, const double* observation, double* residuals,
                                 double* const* jacobians) {
    double* none[4] = {nullptr, nullptr, nullptr, nullptr};
    double* const* j = jacobians != nullptr ? jacobians : none;
    return quaternion_snavely_residual(p[0], p[1], p[2], p[3], observation[0], observation[1], residuals, j[0],
                                       j[1], j[2], j[3]);
  }
};

// ColmapReprojectionError's evaluation for camera model `camera` (ColmapCameraModel's id), as
// ceres::CostFunction::Evaluate takes its arguments: blocks rotation, translation, parameters, point.
LINALG_HD bool colmap_evaluate(int camera, const double* const* p, const double* observation, double* residuals,
                               double* const* jacobians) {
  double* none[4] = {nullptr, nullptr, nullptr, nullptr};
  double* const* j = jacobians != nullptr ? jacobians : none;
  double jq[8];  // colmap_reprojection_residual computes the others' Jacobians where jq is given
  const bool any = j[0] != nullptr || j[1] != nullptr || j[2] != nullptr || j[3] != nullptr;
  return colmap_reprojection_residual(camera, p[0], p[1], p[2], p[3], observation[0], observation[1], residuals,
                                      any ? (j[0] != nullptr ? j[0] : jq) : nullptr, j[1], j[2], j[3]);
}

// ColmapReprojectionError with camera model Camera (one of colmap_pixel's), as a device model:
// rotation (4), translation (3), the camera's parameters (Params), point (3).
template <int Camera, int Params>
struct ColmapCostModel {
  static constexpr int kResiduals = 2, kBlocks = 4, kObservationSize = 2, kParameters = 10 + Params;
  LINALG_HD static constexpr int block_size(int k) { return k == 0 ? 4 : (k == 2 ? Params : 3); }
  LINALG_HD static constexpr int block_start(int k) { return k == 0 ? 0 : (k == 1 ? 4 : (k == 2 ? 7 : 7 + Params)); }
  LINALG_HD static bool evaluate(const double* const* p, const double* observation, double* residuals,
                                 double* const* jacobians) {
    return colmap_evaluate(Camera, p, observation, residuals, jacobians);
  }
};
using ColmapSimplePinholeModel = ColmapCostModel<kColmapSimplePinhole, 3>;
using ColmapPinholeModel = ColmapCostModel<kColmapPinhole, 4>;
using ColmapSimpleRadialModel = ColmapCostModel<kColmapSimpleRadial, 4>;
using ColmapRadialModel = ColmapCostModel<kColmapRadial, 5>;
using ColmapOpenCVModel = ColmapCostModel<kColmapOpenCV, 8>;

// Calls visit(Model()) with the model struct of a device model (not Host).
template <typename Visit>
void with_cost_model(CostModel model, const Visit& visit) {
  switch (model) {
    case CostModel::Snavely: visit(SnavelyModel()); return;
    case CostModel::QuaternionSnavely: visit(QuaternionSnavelyModel()); return;
    case CostModel::ColmapSimplePinhole: visit(ColmapSimplePinholeModel()); return;
    case CostModel::ColmapPinhole: visit(ColmapPinholeModel()); return;
    case CostModel::ColmapSimpleRadial: visit(ColmapSimpleRadialModel()); return;
    case CostModel::ColmapRadial: visit(ColmapRadialModel()); return;
    case CostModel::ColmapOpenCV: visit(ColmapOpenCVModel()); return;
    case CostModel::Host: return;
  }
}

// Per model, what a residual's constants take: its block numbers and its observation.
struct ModelSizes {
  int blocks = 0, observation = 0;
};
inline ModelSizes sizes_of(CostModel model) {
  ModelSizes sizes;
  with_cost_model(model, [&](auto m) { sizes = {decltype(m)::kBlocks, decltype(m)::kObservationSize}; });
  return sizes;
}

}  // namespace ceres_cuda::detail
