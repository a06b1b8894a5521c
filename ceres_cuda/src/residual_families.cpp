#include "residual_families.h"

#include <typeinfo>

#include "ceres_cuda/colmap_reprojection_error.h"
#include "ceres_cuda/quaternion_snavely_reprojection_error.h"
#include "ceres_cuda/snavely_reprojection_error.h"
#include "schur_structure.h"
#include "set_up_threads.h"

namespace ceres_cuda::detail {
namespace {

template <class T>
const T* exactly(const ceres::CostFunction* cost) {
  return cost != nullptr && typeid(*cost) == typeid(T) ? static_cast<const T*>(cost) : nullptr;
}

}  // namespace

CostModel cost_model_of(const ceres::CostFunction* cost) {
  if (exactly<SnavelyReprojectionError>(cost)) return CostModel::Snavely;
  if (exactly<QuaternionSnavelyReprojectionError>(cost)) return CostModel::QuaternionSnavely;
  if (const auto* c = exactly<ColmapReprojectionError>(cost)) {
    switch (c->model()) {
      case ColmapCameraModel::SimplePinhole: return CostModel::ColmapSimplePinhole;
      case ColmapCameraModel::Pinhole: return CostModel::ColmapPinhole;
      case ColmapCameraModel::SimpleRadial: return CostModel::ColmapSimpleRadial;
      case ColmapCameraModel::Radial: return CostModel::ColmapRadial;
      case ColmapCameraModel::OpenCV: return CostModel::ColmapOpenCV;
      default: break;
    }
  }
  return CostModel::Host;
}

void observation_of(CostModel model, const ceres::CostFunction* cost, double* out) {
  switch (model) {
    case CostModel::Snavely: {
      const auto* c = static_cast<const SnavelyReprojectionError*>(cost);
      out[0] = c->observed_x();
      out[1] = c->observed_y();
      return;
    }
    case CostModel::QuaternionSnavely: {
      const auto* c = static_cast<const QuaternionSnavelyReprojectionError*>(cost);
      out[0] = c->observed_x();
      out[1] = c->observed_y();
      return;
    }
    case CostModel::ColmapSimplePinhole:
    case CostModel::ColmapPinhole:
    case CostModel::ColmapSimpleRadial:
    case CostModel::ColmapRadial:
    case CostModel::ColmapOpenCV: {
      const auto* c = static_cast<const ColmapReprojectionError*>(cost);
      out[0] = c->observed_x();
      out[1] = c->observed_y();
      return;
    }
    case CostModel::Host:
      return;
  }
}

void pack_family(const SchurStructure& structure, const ResidualFamily& family, std::vector<int>* blocks,
                 std::vector<double>* observations) {
  const int count = family.last - family.first;
  const int per = sizes_of(family.model).blocks, values = sizes_of(family.model).observation;
  blocks->resize(static_cast<std::size_t>(count) * per);
  observations->resize(static_cast<std::size_t>(count) * values);
  const SetUpThreads threads(count);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < count; ++i) {
    const SchurResidual& residual = structure.residuals[family.first + i];
    const int* params = structure.params_of(residual);
    for (int k = 0; k < per; ++k) (*blocks)[static_cast<std::size_t>(i) * per + k] = params[k];
    observation_of(family.model, residual.cost, observations->data() + static_cast<std::size_t>(i) * values);
  }
}

int FamilyAssignment::family_of(CostModel model, const ceres::LossFunction* loss) {
  if (model != CostModel::Host) {
    if (last_ >= 0 && seen_[last_].model == model && seen_[last_].loss == loss) return seen_[last_].family;
    for (std::size_t k = 0; k < seen_.size(); ++k)
      if (seen_[k].model == model && seen_[k].loss == loss) return seen_[last_ = static_cast<int>(k)].family;
    ResidualFamily family;
    family.model = model;
    family.user_loss = loss;
    int index = -1;
    if (recognise_builtin_loss(loss, &family.loss)) {
      families_.push_back(family);
      index = static_cast<int>(families_.size()) - 1;
    } else {
      index = host_family();
    }
    seen_.push_back({model, loss, index});
    last_ = static_cast<int>(seen_.size()) - 1;
    return index;
  }
  return host_family();
}

int FamilyAssignment::host_family() {
  if (host_ < 0) {
    families_.push_back(ResidualFamily{});
    host_ = static_cast<int>(families_.size()) - 1;
  }
  return host_;
}

std::vector<ResidualFamily> FamilyAssignment::ordered(std::vector<int>* rank) const {
  std::vector<ResidualFamily> out;
  rank->assign(families_.size(), -1);
  for (std::size_t f = 0; f < families_.size(); ++f)
    if (static_cast<int>(f) != host_) {
      (*rank)[f] = static_cast<int>(out.size());
      out.push_back(families_[f]);
    }
  if (host_ >= 0) {
    (*rank)[host_] = static_cast<int>(out.size());
    out.push_back(families_[host_]);
  }
  return out;
}

}  // namespace ceres_cuda::detail
