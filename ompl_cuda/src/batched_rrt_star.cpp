#include "ompl_cuda/batched_rrt_star.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <ompl/base/goals/GoalSampleableRegion.h>
#include <ompl/base/objectives/PathLengthOptimizationObjective.h>
#include <ompl/geometric/PathGeometric.h>
#include <ompl/tools/config/SelfConfig.h>

#include "batch_nearest_neighbors.h"
#include "chain_state_layout.h"
#include "space_metric.h"
#include "ompl_cuda/batch_checking.h"

namespace ompl_cuda {

namespace ob = ompl::base;

struct BatchedRRTstar::Motion {
  explicit Motion(const ob::SpaceInformationPtr& si) : state(si->allocState()) {}
  ob::State* state;
  Motion* parent = nullptr;
  ob::Cost cost;
  ob::Cost inc_cost;
  bool in_goal = false;
  std::vector<Motion*> children;
};

struct BatchedRRTstar::Candidate {
  Motion* motion;             // the new motion (not yet in the tree)
  std::vector<Motion*> near;  // its neighbours in the tree
  std::size_t first_edge;     // index of (near[0] -> new) in the batch
};

BatchedRRTstar::BatchedRRTstar(const ob::SpaceInformationPtr& si) : ob::Planner(si, "BatchedRRTstar") {
  specs_.approximateSolutions = true;
  specs_.optimizingPaths = true;
  specs_.canReportIntermediateSolutions = false;
  declareParam<double>("range", this, &BatchedRRTstar::setRange, &BatchedRRTstar::getRange, "0.:1.:10000.");
  declareParam<double>("goal_bias", this, &BatchedRRTstar::setGoalBias, &BatchedRRTstar::getGoalBias, "0.:.05:1.");
  declareParam<unsigned int>("batch_size", this, &BatchedRRTstar::setBatchSize, &BatchedRRTstar::getBatchSize,
                             "1:1:100000");
  declareParam<double>("rewire_factor", this, &BatchedRRTstar::setRewireFactor, &BatchedRRTstar::getRewireFactor,
                       "1.0:0.01:2.0");
  declareParam<unsigned int>("max_samples", this, &BatchedRRTstar::setMaxSamples, &BatchedRRTstar::getMaxSamples,
                             "0:1:100000000");
  addPlannerProgressProperty("best cost REAL", [this] { return std::to_string(bestCost()); });
}

BatchedRRTstar::~BatchedRRTstar() { free_memory(); }

void BatchedRRTstar::setup() {
  ob::Planner::setup();
  ompl::tools::SelfConfig config(si_, getName());
  config.configurePlannerRange(range_);
  detail::MetricKind kind;
  std::vector<double> weights;
  const int dimension = static_cast<int>(si_->getStateDimension());
  if (!batch_nn_ && detail::batch_metric(*si_->getStateSpace(), kind, weights)) {
    const auto* batch_validator = dynamic_cast<const BatchMotionValidator*>(si_->getMotionValidator().get());
    const Backend backend = batch_validator ? batch_validator->backend() : Backend::Cpu;
    layout_ = std::make_unique<detail::ChainStateLayout>(si_, dimension);
    batch_nn_ = std::make_unique<detail::BatchNearestNeighbors>(kind, dimension, std::move(weights), backend);
  }
  if (!batch_nn_ && !nn_) {
    nn_.reset(ompl::tools::SelfConfig::getDefaultNearestNeighbors<Motion*>(this));
    nn_->setDistanceFunction([this](const Motion* a, const Motion* b) { return si_->distance(a->state, b->state); });
  }
  OMPL_DEBUG("%s: nearest neighbours by %s", getName().c_str(), nearestNeighborsUsed());
  // Only read here: setup() runs on the planner's own thread under ParallelPlan, beside other planners
  // that read the same problem definition (the default objective is stored by setProblemDefinition).
  if (pdef_) {
    objective_ = pdef_->hasOptimizationObjective() ? pdef_->getOptimizationObjective()
                                                   : std::make_shared<ob::PathLengthOptimizationObjective>(si_);
  }
  const double d = si_->getStateDimension();
  k_rrt_ = rewire_factor_ * std::exp(1.0) * (1.0 + 1.0 / d);
}

// As OMPL's RRTstar: path length where the problem names no objective, stored in the problem
// definition, so that the solution's cost can be read against it. Stored now, on the thread that
// configures the planner, before any solve.
void BatchedRRTstar::setProblemDefinition(const ob::ProblemDefinitionPtr& pdef) {
  ob::Planner::setProblemDefinition(pdef);
  if (pdef_ && !pdef_->hasOptimizationObjective())
    pdef_->setOptimizationObjective(std::make_shared<ob::PathLengthOptimizationObjective>(si_));
}

void BatchedRRTstar::free_memory() {
  for (Motion* m : tree_) {
    si_->freeState(m->state);
    delete m;
  }
  tree_.clear();
  goal_motions_.clear();
  if (nn_) nn_->clear();
  if (batch_nn_) batch_nn_->clear();
  best_goal_ = nullptr;
  best_cost_ = std::numeric_limits<double>::infinity();
}

void BatchedRRTstar::clear() {
  ob::Planner::clear();
  sampler_.reset();
  free_memory();
  samples_ = 0;
}

double BatchedRRTstar::bestCost() const { return best_cost_; }

const char* BatchedRRTstar::nearestNeighborsUsed() const {
  if (batch_nn_) return batch_nn_->backend() == Backend::Cuda ? "gpu" : "cpu";
  return "ompl";
}

void BatchedRRTstar::add_to_tree(Motion* m) {
  tree_.push_back(m);
  if (batch_nn_) {
    std::vector<double> values(layout_->dimension());
    layout_->read(m->state, values.data());
    batch_nn_->add(values.data());
  } else {
    nn_->add(m);
  }
}

void BatchedRRTstar::update_child_costs(Motion* m) {
  for (Motion* child : m->children) {
    child->cost = objective_->combineCosts(m->cost, child->inc_cost);
    update_child_costs(child);
  }
}

void BatchedRRTstar::sample_batch(unsigned int count, std::vector<Candidate>& batch) {
  auto* sampleable = dynamic_cast<ob::GoalSampleableRegion*>(pdef_->getGoal().get());
  batch.clear();
  for (unsigned int b = 0; b < count; ++b) {
    auto* m = new Motion(si_);
    batch.push_back({m, {}, 0});
    if (sampleable && rng_.uniform01() < goal_bias_ && sampleable->canSample())
      sampleable->sampleGoal(m->state);
    else
      sampler_->sampleUniform(m->state);
    ++samples_;
  }
  // The new states of a batch see the tree as it was before the batch (the paper's batched RRT*).
  const unsigned int k = std::max(
      1u, static_cast<unsigned int>(std::ceil(k_rrt_ * std::log(static_cast<double>(tree_.size() + 1)))));
  auto steer = [this](const Motion* nearest, Motion* m) {
    const double d = si_->distance(nearest->state, m->state);
    if (d > range_) si_->getStateSpace()->interpolate(nearest->state, m->state, range_ / d, m->state);
  };
  if (!batch_nn_) {
    for (Candidate& c : batch) {
      steer(nn_->nearest(c.motion), c.motion);
      nn_->nearestK(c.motion, k, c.near);
    }
    return;
  }
  const int d = layout_->dimension();
  std::vector<double> values(static_cast<std::size_t>(count) * d);
  std::vector<int> found;
  for (unsigned int b = 0; b < count; ++b) layout_->read(batch[b].motion->state, values.data() + b * d);
  batch_nn_->nearest(values.data(), count, found);
  for (unsigned int b = 0; b < count; ++b) {
    steer(tree_[found[b]], batch[b].motion);
    layout_->read(batch[b].motion->state, values.data() + b * d);
  }
  const int kk = batch_nn_->nearest_k(values.data(), count, static_cast<int>(k), found);
  for (unsigned int b = 0; b < count; ++b)
    for (int j = 0; j < kk; ++j) batch[b].near.push_back(tree_[found[b * kk + j]]);
}

ob::PlannerStatus BatchedRRTstar::solve(const ob::PlannerTerminationCondition& ptc) {
  checkValidity();
  ob::Goal* goal = pdef_->getGoal().get();
  while (const ob::State* start = pis_.nextStart()) {
    auto* m = new Motion(si_);
    si_->copyState(m->state, start);
    m->cost = objective_->identityCost();
    add_to_tree(m);
  }
  if (tree_.empty()) {
    OMPL_ERROR("%s: there are no valid initial states", getName().c_str());
    return ob::PlannerStatus::INVALID_START;
  }
  if (!sampler_) sampler_ = si_->allocStateSampler();
  k_rrt_ = rewire_factor_ * std::exp(1.0) * (1.0 + 1.0 / si_->getStateDimension());  // rewire_factor may have changed
  const auto* batch_validator = dynamic_cast<const BatchMotionValidator*>(si_->getMotionValidator().get());

  std::vector<Candidate> batch;
  std::vector<std::pair<const ob::State*, const ob::State*>> edges;
  std::vector<char> edge_valid;
  Motion* approximate = nullptr;
  double approximate_distance = std::numeric_limits<double>::infinity();

  // As OMPL's RRTstar: until the termination condition, the sample limit, or a path whose cost meets
  // the objective's threshold (none does by default: path length to be minimised for the whole time).
  auto satisfied = [this] { return best_goal_ && objective_->isSatisfied(best_goal_->cost); };
  while (!ptc && (max_samples_ == 0 || samples_ < max_samples_) && !satisfied()) {
    // 1. A batch of new states: sample, steer from the nearest tree motion, find the neighbours.
    // 2. Every candidate-parent edge of the batch in one check (one launch with a BatchMotionValidator on the GPU).
    const unsigned int count = max_samples_ ? std::min(batch_size_, max_samples_ - samples_) : batch_size_;
    try {
      sample_batch(count, batch);
      edges.clear();
      for (Candidate& c : batch) {
        c.first_edge = edges.size();
        for (Motion* n : c.near) edges.emplace_back(n->state, c.motion->state);
      }
      if (batch_validator) {
        batch_validator->checkMotions(edges, edge_valid);
      } else {
        edge_valid.resize(edges.size());
        for (std::size_t e = 0; e < edges.size(); ++e) edge_valid[e] = si_->checkMotion(edges[e].first, edges[e].second);
      }
    } catch (...) {
      for (Candidate& c : batch) {  // the new motions are not in the tree yet: free them here
        si_->freeState(c.motion->state);
        delete c.motion;
      }
      batch.clear();
      throw;
    }
    // 3. Connect each new state to its cheapest valid parent, then rewire its neighbours through it
    // (reusing the edge checks: the motion validator is symmetric for these spaces, as RRT* assumes).
    for (Candidate& c : batch) {
      Motion* m = c.motion;
      Motion* parent = nullptr;
      ob::Cost best = objective_->infiniteCost(), best_inc;
      std::vector<ob::Cost> inc(c.near.size());
      for (std::size_t i = 0; i < c.near.size(); ++i) {
        inc[i] = objective_->motionCost(c.near[i]->state, m->state);
        if (!edge_valid[c.first_edge + i]) continue;
        const ob::Cost through = objective_->combineCosts(c.near[i]->cost, inc[i]);
        if (objective_->isCostBetterThan(through, best)) {
          best = through;
          best_inc = inc[i];
          parent = c.near[i];
        }
      }
      if (!parent) {
        si_->freeState(m->state);
        delete m;
        continue;
      }
      m->parent = parent;
      m->cost = best;
      m->inc_cost = best_inc;
      parent->children.push_back(m);
      add_to_tree(m);
      for (std::size_t i = 0; i < c.near.size(); ++i) {
        Motion* n = c.near[i];
        if (n == parent || !edge_valid[c.first_edge + i]) continue;
        const ob::Cost through = objective_->combineCosts(m->cost, inc[i]);
        if (!objective_->isCostBetterThan(through, n->cost)) continue;
        auto& siblings = n->parent->children;
        siblings.erase(std::remove(siblings.begin(), siblings.end(), n), siblings.end());
        n->parent = m;
        n->inc_cost = inc[i];
        n->cost = through;
        m->children.push_back(n);
        update_child_costs(n);
      }
      double distance_to_goal = 0.0;
      m->in_goal = goal->isSatisfied(m->state, &distance_to_goal);
      if (m->in_goal) goal_motions_.push_back(m);
      if (m->in_goal && (!best_goal_ || objective_->isCostBetterThan(m->cost, best_goal_->cost))) best_goal_ = m;
      best_cost_ = best_goal_ ? best_goal_->cost.value() : std::numeric_limits<double>::infinity();
      if (!m->in_goal && distance_to_goal < approximate_distance) {
        approximate_distance = distance_to_goal;
        approximate = m;
      }
    }
    // Rewiring may have lowered the cost of goal motions other than the best one.
    for (Motion* m : goal_motions_)
      if (objective_->isCostBetterThan(m->cost, best_goal_->cost)) best_goal_ = m;
    if (best_goal_) best_cost_ = best_goal_->cost.value();
  }

  Motion* solution = best_goal_ ? best_goal_ : approximate;
  if (!solution) return ob::PlannerStatus::TIMEOUT;
  std::vector<Motion*> chain;
  for (Motion* m = solution; m; m = m->parent) chain.push_back(m);
  auto path = std::make_shared<ompl::geometric::PathGeometric>(si_);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) path->append((*it)->state);
  ob::PlannerSolution result(path);
  result.setPlannerName(getName());
  if (best_goal_) result.setOptimized(objective_, solution->cost, objective_->isSatisfied(solution->cost));
  else result.setApproximate(approximate_distance);
  pdef_->addSolutionPath(result);
  OMPL_INFORM("%s: %u samples, %u states in the tree, best cost %.4f%s", getName().c_str(), samples_,
              static_cast<unsigned>(tree_.size()), solution->cost.value(), best_goal_ ? "" : " (approximate)");
  return {true, best_goal_ == nullptr};
}

void BatchedRRTstar::getPlannerData(ob::PlannerData& data) const {
  ob::Planner::getPlannerData(data);
  for (const Motion* m : tree_) {
    if (!m->parent) data.addStartVertex(ob::PlannerDataVertex(m->state));
    else data.addEdge(ob::PlannerDataVertex(m->parent->state), ob::PlannerDataVertex(m->state));
    if (m->in_goal) data.addGoalVertex(ob::PlannerDataVertex(m->state));
  }
}

}  // namespace ompl_cuda
