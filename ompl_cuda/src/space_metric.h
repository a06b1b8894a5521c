#pragma once
// Which OMPL spaces the batched planners search themselves (BatchNearestNeighbors), and with which
// metric: exactly RealVectorStateSpace (a subclass may redefine distance, as OMPL's KinematicChain demo
// does), or exactly a CompoundStateSpace of SO2StateSpace components.
#include <vector>

#include <ompl/base/StateSpace.h>

#include "state_metric.h"

namespace ompl_cuda::detail {

// True, with the metric and (for kSO2Sum) the subspace weights, when BatchNearestNeighbors reproduces
// the space's distance(); false for any other space.
bool batch_metric(const ompl::base::StateSpace& space, MetricKind& kind, std::vector<double>& weights);

}  // namespace ompl_cuda::detail
