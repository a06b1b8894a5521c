#pragma once
// BatchedRRTstar: RRT* that grows its tree by a batch of samples at a time (Bialkowski, Karaman and
// Frazzoli's batched RRT*), so that every candidate-parent edge of the whole batch, which RRT*'s
// rewiring reuses, is checked in one call of BatchMotionValidator::checkMotions (batch_checking.h): one
// GPU launch per batch. With any other motion validator it checks the same edges one by one (works,
// just slower). The nearest neighbours of the whole batch are found at once too, by an exact
// brute-force search on the motion validator's backend (the GPU with a CUDA one, else all CPU cores), for
// RealVectorStateSpace and compounds of SO2StateSpace; other spaces use OMPL's default structure.
//
// Asymptotically optimal for the path-length objective (k-nearest RRT*, k = rewire_factor * e (1 + 1/d)
// log n); honours the PlannerTerminationCondition between batches; fills PlannerData; usable from
// SimpleSetup, ompl::tools::Benchmark and ompl::tools::ParallelPlan. Parameters: range, goal_bias,
// batch_size, rewire_factor, max_samples (0 = until the termination condition).
//
// Where the problem definition has no optimization objective, it gets one for path length, as OMPL's
// RRTstar stores its default there; here when the problem definition is set (setProblemDefinition:
// SimpleSetup::setup, ParallelPlan::addPlanner), not in setup(), which ParallelPlan runs on each
// planner's thread while the other planners read the objective.
#include <atomic>
#include <limits>
#include <memory>
#include <vector>

#include <ompl/base/Planner.h>
#include <ompl/datastructures/NearestNeighbors.h>
#include <ompl/util/RandomNumbers.h>

namespace ompl_cuda {

namespace detail {
class BatchNearestNeighbors;
class ChainStateLayout;
}  // namespace detail

class BatchedRRTstar : public ompl::base::Planner {
 public:
  explicit BatchedRRTstar(const ompl::base::SpaceInformationPtr& si);
  ~BatchedRRTstar() override;

  ompl::base::PlannerStatus solve(const ompl::base::PlannerTerminationCondition& ptc) override;
  void clear() override;
  void setProblemDefinition(const ompl::base::ProblemDefinitionPtr& pdef) override;
  void setup() override;
  void getPlannerData(ompl::base::PlannerData& data) const override;

  void setRange(double range) { range_ = range; }
  double getRange() const { return range_; }
  void setGoalBias(double bias) { goal_bias_ = bias; }
  double getGoalBias() const { return goal_bias_; }
  void setBatchSize(unsigned int size) { batch_size_ = size > 0 ? size : 1; }
  unsigned int getBatchSize() const { return batch_size_; }
  void setRewireFactor(double factor) { rewire_factor_ = factor; }
  double getRewireFactor() const { return rewire_factor_; }
  // Stop after this many samples (0: only the termination condition stops the planner).
  void setMaxSamples(unsigned int samples) { max_samples_ = samples; }
  unsigned int getMaxSamples() const { return max_samples_; }
  unsigned int samplesDrawn() const { return samples_; }
  // "gpu", "cpu" (the batched brute-force search) or "ompl" (OMPL's default structure); known after setup().
  const char* nearestNeighborsUsed() const;
  // Cost of the best solution so far (infinity without one); safe to read while solve() runs, as
  // Benchmark's progress thread does.
  double bestCost() const;

 private:
  struct Motion;
  struct Candidate;
  void free_memory();
  void update_child_costs(Motion* m);
  void add_to_tree(Motion* m);
  // Samples `count` states, steers each from its nearest tree motion, and finds its neighbours.
  void sample_batch(unsigned int count, std::vector<Candidate>& batch);
  std::vector<Motion*> tree_;  // tree_[i] is point i of batch_nn_
  std::vector<Motion*> goal_motions_;
  std::shared_ptr<ompl::NearestNeighbors<Motion*>> nn_;  // when batch_nn_ cannot serve the space
  std::unique_ptr<detail::BatchNearestNeighbors> batch_nn_;
  std::unique_ptr<detail::ChainStateLayout> layout_;     // reads the joint values batch_nn_ stores
  ompl::base::StateSamplerPtr sampler_;
  ompl::base::OptimizationObjectivePtr objective_;
  Motion* best_goal_ = nullptr;
  std::atomic<double> best_cost_{std::numeric_limits<double>::infinity()};
  double range_ = 0.0;
  double goal_bias_ = 0.05;
  unsigned int batch_size_ = 64;
  double rewire_factor_ = 1.1;
  unsigned int max_samples_ = 0;
  unsigned int samples_ = 0;
  double k_rrt_ = 0.0;
  ompl::RNG rng_;
};

}  // namespace ompl_cuda
