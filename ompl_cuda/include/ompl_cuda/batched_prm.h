#pragma once
// BatchedPRM: a probabilistic roadmap (Kavraki et al.; OMPL's PRM) that grows by a batch of samples
// at a time: the batch's states are checked in one call of a BatchStateValidityChecker's batch isValid
// (batch_checking.h), the k nearest milestones of every new milestone are found at once, and all the
// candidate edges of the batch are checked in one call of BatchMotionValidator::checkMotions: a few
// GPU launches per batch instead of thousands of single checks. With other checkers it checks the
// same states and edges one by one (works, just slower).
//
// Like OMPL's PRM it connects each new milestone to its k nearest milestones (default 10) whose edge is
// valid, keeps the connected components, and answers with the cheapest roadmap path (Dijkstra with the
// objective's cost operations) between a start and a goal state once they share a component. As OMPL's
// PRM: without an optimization objective in the problem definition it stops at the first path (its
// own path-length objective, with an infinite cost threshold, is not stored in the problem
// definition); with one, it keeps growing the roadmap, and the path improves, until the cost meets the
// objective's threshold or the PlannerTerminationCondition fires (checked between batches). It waits
// for a valid goal state before it starts (INVALID_GOAL if none comes). The roadmap is kept across
// queries: a new problem definition (or clearQuery()) replaces only the start and goal states, as
// PRM's multi-query use expects; clear() forgets the roadmap. Nearest neighbours are searched on the
// motion validator's backend for RealVectorStateSpace and compounds of SO2StateSpace, with OMPL's
// default structure otherwise. Fills PlannerData (edges both ways, as PRM); works in SimpleSetup and
// ompl::tools::Benchmark. Parameters: batch_size, max_nearest_neighbors.
#include <atomic>
#include <limits>
#include <memory>
#include <vector>

#include <ompl/base/Cost.h>
#include <ompl/base/Planner.h>
#include <ompl/datastructures/NearestNeighbors.h>

namespace ompl_cuda {

namespace detail {
class BatchNearestNeighbors;
class ChainStateLayout;
}  // namespace detail

class BatchedPRM : public ompl::base::Planner {
 public:
  explicit BatchedPRM(const ompl::base::SpaceInformationPtr& si);
  ~BatchedPRM() override;

  ompl::base::PlannerStatus solve(const ompl::base::PlannerTerminationCondition& ptc) override;
  // Forgets the roadmap (as OMPL's PRM::clear does).
  void clear() override;
  // Forgets the start and goal states only; the roadmap stays for the next query (as PRM::clearQuery).
  void clearQuery() override;
  void setProblemDefinition(const ompl::base::ProblemDefinitionPtr& pdef) override;
  void setup() override;
  void getPlannerData(ompl::base::PlannerData& data) const override;

  void setBatchSize(unsigned int size) { batch_size_ = size > 0 ? size : 1; }
  unsigned int getBatchSize() const { return batch_size_; }
  void setMaxNearestNeighbors(unsigned int k) { k_ = k > 0 ? k : 1; }
  unsigned int getMaxNearestNeighbors() const { return k_; }
  // Safe to read while solve() runs, as Benchmark's progress thread does.
  std::size_t milestoneCount() const { return milestone_count_; }
  std::size_t edgeCount() const { return edge_count_; }  // undirected edges
  // "gpu", "cpu" (the batched brute-force search) or "ompl" (OMPL's default structure); known after setup().
  const char* nearestNeighborsUsed() const;
  // Cost of the best path so far (infinity without one); safe to read while solve() runs.
  double bestCost() const { return best_cost_; }

 private:
  struct Milestone;
  struct Edge {
    int to;
    ompl::base::Cost cost;
  };
  void free_memory();
  void choose_objective();
  int add_milestone(ompl::base::State* state);  // takes ownership; returns its index
  int find_root(int m);
  void unite(int a, int b);
  // Samples a batch, keeps its valid states as milestones and connects them; returns how many
  // milestones it added.
  std::size_t grow(unsigned int samples);
  void connect(const std::vector<int>& fresh);
  // The cheapest roadmap path from a start to a goal milestone (empty if none), and its cost.
  std::vector<int> shortest_path(ompl::base::Cost* cost) const;

  std::vector<std::unique_ptr<Milestone>> milestones_;  // milestone i is point i of the neighbour search
  std::vector<int> component_parent_;                   // union-find over milestones
  std::vector<int> starts_, goals_;
  std::atomic<std::size_t> milestone_count_{0}, edge_count_{0};
  std::shared_ptr<ompl::NearestNeighbors<int>> nn_;  // when batch_nn_ cannot serve the space
  std::unique_ptr<detail::BatchNearestNeighbors> batch_nn_;
  std::unique_ptr<detail::ChainStateLayout> layout_;  // reads the joint values batch_nn_ stores
  ompl::base::StateSamplerPtr sampler_;
  ompl::base::OptimizationObjectivePtr objective_;
  std::atomic<double> best_cost_{std::numeric_limits<double>::infinity()};
  unsigned int batch_size_ = 1000;
  unsigned int k_ = 10;  // OMPL's PRM default
};

}  // namespace ompl_cuda
