#pragma once
// Residual blocks grouped into families by how they are evaluated: one family per library cost
// function model (device_cost_models.h) and loss the GPU evaluates, in order of first appearance, and
// a last family of the rest, whose cost functions run on CPU threads. The structure's residuals lie
// family after family (the order of the Jacobian's rows), so that each family is one range of rows, of
// cells and of residual values: the GPU evaluates its ranges in a kernel per family, and the rows the
// CPU evaluates go to the device in one copy.
#include <vector>

#include "device_cost_models.h"
#include "robust_loss.h"

namespace ceres {
class CostFunction;
class LossFunction;
}  // namespace ceres

namespace ceres_cuda::detail {

struct SchurStructure;

struct ResidualFamily {
  CostModel model = CostModel::Host;
  const ceres::LossFunction* user_loss = nullptr;
  BuiltinLoss loss;        // user_loss as the kernels evaluate it (families of a device model)
  int first = 0, last = 0; // SchurStructure::residuals [first, last)
};

// Where the Host family starts among residuals family after family (their count when there is none).
inline int first_host_residual(const std::vector<ResidualFamily>& families, int residuals) {
  return !families.empty() && families.back().model == CostModel::Host ? families.back().first : residuals;
}

// The model a cost function is (by its exact type), Host for any other.
CostModel cost_model_of(const ceres::CostFunction* cost);
// The per-residual constants of a cost function of a device model (Model::kObservationSize values).
void observation_of(CostModel model, const ceres::CostFunction* cost, double* out);

// A device family's per-residual constants, as its kernel reads them: the block numbers of each
// residual (the model's kBlocks) and its observation (kObservationSize values).
void pack_family(const SchurStructure& structure, const ResidualFamily& family, std::vector<int>* blocks,
                 std::vector<double>* observations);

// Assigns families to residuals, given each one's model (Host where its cost function is not a device
// model) and loss; residuals of a device model whose loss the kernels do not have go to the Host
// family. The families come out with those of device models first, in order of first appearance, then
// the Host family if any residual needs it (first and last are the caller's to set).
class FamilyAssignment {
 public:
  // Called in residual order.
  int family_of(CostModel model, const ceres::LossFunction* loss);
  // The families in their final order, and the map from family_of's answers to positions in it.
  std::vector<ResidualFamily> ordered(std::vector<int>* rank) const;

 private:
  struct Seen {  // a (model, loss) pair met before, and its family (the Host one if the loss is unknown)
    CostModel model;
    const ceres::LossFunction* loss;
    int family;
  };
  int host_family();

  std::vector<ResidualFamily> families_;  // in order of first appearance
  std::vector<Seen> seen_;
  int host_ = -1;
  int last_ = -1;  // the last pair met, which the next residual most often shares
};

}  // namespace ceres_cuda::detail
