#pragma once
// BatchedRRTConnect: bidirectional RRT-Connect (Kuffner and LaValle; OMPL's RRTConnect) that grows its
// trees by a batch of samples at a time, so that a batch's checks go to the batch interface
// (batch_checking.h) in a few calls instead of one call per motion: one GPU launch, or all CPU cores.
//
// Each iteration, as RRT-Connect, works on one tree and then on the other (the trees swap every
// iteration):
//  1. Extend: batch_size samples, each steered at most `range` from its nearest node of the current
//     tree; all the new motions in one checkMotions call (for the goal tree the new states first go
//     through one batch isValid, as RRTConnect checks them before the motion); the valid ones join.
//  2. Connect: for every new node, the straight line from its nearest node of the other tree to it,
//     cut into range-long motions (RRT-Connect's greedy CONNECT). With a CUDA motion validator all
//     motions of all these lines go in one checkMotions call; on CPU cores, where each needless check
//     costs, one motion of every line per call, each line stopping at its first invalid motion as
//     CONNECT does (the same decisions either way). The first line (in batch order) whose motions are
//     all valid joins the trees; of the lines before it (all lines when none joins), the valid part
//     next to the other tree joins that tree, as CONNECT keeps the steps it made before it got stuck.
// Every motion is checked in the direction the path from start to goal runs through it (goal-tree
// edges from child to parent), from a state already known valid, so the path's edges are exactly
// the motions that were checked. With other checkers (plain OMPL ones) the same states and motions
// are checked one by one: the same decisions, only slower.
//
// Nearest neighbours are found for the whole batch at once (BatchedRRTstar's brute-force search on the
// motion validator's backend) for RealVectorStateSpace and compounds of SO2StateSpace, with OMPL's
// default structure otherwise. The same ompl::RNG seed and batch size give the same path: nothing
// depends on thread timing. As OMPL's RRTConnect: the goal must be a GoalSampleableRegion, its states
// are added to the goal tree as it offers them; the status for bad input is RRTConnect's
// (UNRECOGNIZED_GOAL_TYPE, INVALID_START, INVALID_GOAL, TIMEOUT when no valid goal state comes); without
// a connection the start-tree node nearest the goal is an APPROXIMATE_SOLUTION; the trees stay across
// solve() calls until clear(). The PlannerTerminationCondition is honoured between batches.
// Parameters: range, batch_size.
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include <ompl/base/Planner.h>

namespace ompl_cuda {

namespace detail {
class ChainStateLayout;
}  // namespace detail

class BatchStateValidityChecker;
class BatchMotionValidator;

class BatchedRRTConnect : public ompl::base::Planner {
 public:
  explicit BatchedRRTConnect(const ompl::base::SpaceInformationPtr& si);
  ~BatchedRRTConnect() override;

  ompl::base::PlannerStatus solve(const ompl::base::PlannerTerminationCondition& ptc) override;
  void clear() override;
  void setup() override;
  void getPlannerData(ompl::base::PlannerData& data) const override;

  // The longest motion added to a tree in one step, and the length of the steps of a connection
  // (0 until setup() chooses one, as RRTConnect).
  void setRange(double range) { range_ = range; }
  double getRange() const { return range_; }
  void setBatchSize(unsigned int size) { batch_size_ = size > 0 ? size : 1; }
  unsigned int getBatchSize() const { return batch_size_; }
  std::size_t startTreeSize() const;
  std::size_t goalTreeSize() const;
  // "gpu", "cpu" (the batched brute-force search) or "ompl" (OMPL's default structure); known after setup().
  const char* nearestNeighborsUsed() const;

 private:
  struct Motion;
  struct Tree;
  struct Line;
  void free_memory();
  ompl::base::State* scratch(std::size_t i);  // reusable state i, allocated on first use
  void add_to_tree(Tree& tree, Motion* m);
  void nearest(Tree& tree, const std::vector<const ompl::base::State*>& states, std::vector<Motion*>& found);
  void check_states(const std::vector<const ompl::base::State*>& states, std::vector<char>& valid) const;
  void check_motions(const std::vector<std::pair<const ompl::base::State*, const ompl::base::State*>>& motions,
                     std::vector<char>& valid) const;
  // Step 1: the nodes added to `tree` (none when every new motion is invalid).
  std::vector<Motion*> extend(Tree& tree);
  // Step 2: adds the lines' valid parts to `other`; returns the two ends of the joining motion (its
  // start-tree node, its goal-tree node), or nullptrs.
  std::pair<Motion*, Motion*> connect(Tree& other, const std::vector<Motion*>& fresh);
  Motion* add_chain(Tree& tree, Motion* from, const std::vector<ompl::base::State*>& states);
  void track_approximate(Motion* m);

  std::unique_ptr<Tree> start_, goal_;
  std::unique_ptr<detail::ChainStateLayout> layout_;  // reads the joint values the batched search stores
  ompl::base::StateSamplerPtr sampler_;
  std::vector<ompl::base::State*> scratch_;  // samples and connection states, reused across batches
  const BatchStateValidityChecker* batch_checker_ = nullptr;  // set by solve(); null for plain checkers
  const BatchMotionValidator* batch_validator_ = nullptr;
  std::pair<const ompl::base::State*, const ompl::base::State*> connection_{nullptr, nullptr};
  Motion* approximate_ = nullptr;  // the start-tree node (not a root) nearest the goal, this solve()
  double approximate_distance_ = 0.0;
  double range_ = 0.0;
  unsigned int batch_size_ = 64;
};

}  // namespace ompl_cuda
