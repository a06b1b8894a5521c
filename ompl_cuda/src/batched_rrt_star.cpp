#include "ompl_cuda/batched_rrt_star.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <ompl/base/goals/GoalSampleableRegion.h>
#include <ompl/base/objectives/PathLengthOptimizationObjective.h>
#include <ompl/geometric/PathGeometric.h>
#include <ompl/tools/config/SelfConfig.h>

#include "ompl_cuda/chain_motion_validator.h"

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
  if (!nn_) nn_.reset(ompl::tools::SelfConfig::getDefaultNearestNeighbors<Motion*>(this));
  nn_->setDistanceFunction([this](const Motion* a, const Motion* b) { return si_->distance(a->state, b->state); });
  if (pdef_) {
    objective_ = pdef_->hasOptimizationObjective() ? pdef_->getOptimizationObjective()
                                                   : std::make_shared<ob::PathLengthOptimizationObjective>(si_);
    if (!pdef_->hasOptimizationObjective()) pdef_->setOptimizationObjective(objective_);
  }
  const double d = si_->getStateDimension();
  k_rrt_ = rewire_factor_ * std::exp(1.0) * (1.0 + 1.0 / d);
}

void BatchedRRTstar::free_memory() {
  for (Motion* m : tree_) {
    si_->freeState(m->state);
    delete m;
  }
  tree_.clear();
  if (nn_) nn_->clear();
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

void BatchedRRTstar::update_child_costs(Motion* m) {
  for (Motion* child : m->children) {
    child->cost = objective_->combineCosts(m->cost, child->inc_cost);
    update_child_costs(child);
  }
}

ob::PlannerStatus BatchedRRTstar::solve(const ob::PlannerTerminationCondition& ptc) {
  checkValidity();
  ob::Goal* goal = pdef_->getGoal().get();
  auto* sampleable = dynamic_cast<ob::GoalSampleableRegion*>(goal);
  while (const ob::State* start = pis_.nextStart()) {
    auto* m = new Motion(si_);
    si_->copyState(m->state, start);
    m->cost = objective_->identityCost();
    tree_.push_back(m);
    nn_->add(m);
  }
  if (tree_.empty()) {
    OMPL_ERROR("%s: there are no valid initial states", getName().c_str());
    return ob::PlannerStatus::INVALID_START;
  }
  if (!sampler_) sampler_ = si_->allocStateSampler();
  k_rrt_ = rewire_factor_ * std::exp(1.0) * (1.0 + 1.0 / si_->getStateDimension());  // rewire_factor may have changed
  const auto* batch_validator = dynamic_cast<const ChainMotionValidator*>(si_->getMotionValidator().get());

  struct Candidate {
    Motion* motion;             // the new motion (not yet in the tree)
    std::vector<Motion*> near;  // its neighbours in the tree
    std::size_t first_edge;     // index of (near[0] -> new) in the batch
  };
  std::vector<Candidate> batch;
  std::vector<std::pair<const ob::State*, const ob::State*>> edges;
  std::vector<char> edge_valid;
  Motion* approximate = nullptr;
  double approximate_distance = std::numeric_limits<double>::infinity();

  while (!ptc && (max_samples_ == 0 || samples_ < max_samples_)) {
    // 1. A batch of new states: sample, steer from the nearest tree motion, find the neighbours.
    batch.clear();
    edges.clear();
    const unsigned int count = max_samples_ ? std::min(batch_size_, max_samples_ - samples_) : batch_size_;
    for (unsigned int b = 0; b < count; ++b) {
      auto* m = new Motion(si_);
      if (sampleable && rng_.uniform01() < goal_bias_ && sampleable->canSample())
        sampleable->sampleGoal(m->state);
      else
        sampler_->sampleUniform(m->state);
      ++samples_;
      Motion* nearest = nn_->nearest(m);
      const double d = si_->distance(nearest->state, m->state);
      if (d > range_) si_->getStateSpace()->interpolate(nearest->state, m->state, range_ / d, m->state);
      Candidate c{m, {}, edges.size()};
      const unsigned int k = static_cast<unsigned int>(std::ceil(k_rrt_ * std::log(static_cast<double>(nn_->size() + 1))));
      nn_->nearestK(m, std::max(1u, k), c.near);
      for (Motion* n : c.near) edges.emplace_back(n->state, m->state);
      batch.push_back(std::move(c));
    }
    // 2. Every candidate-parent edge of the batch in one check (one launch with ChainMotionValidator).
    try {
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
      tree_.push_back(m);
      nn_->add(m);
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
      if (m->in_goal && (!best_goal_ || objective_->isCostBetterThan(m->cost, best_goal_->cost))) best_goal_ = m;
      best_cost_ = best_goal_ ? best_goal_->cost.value() : std::numeric_limits<double>::infinity();
      if (!m->in_goal && distance_to_goal < approximate_distance) {
        approximate_distance = distance_to_goal;
        approximate = m;
      }
    }
    // Rewiring may have lowered the cost of goal motions other than the best one.
    if (best_goal_)
      for (Motion* m : tree_)
        if (m->in_goal && objective_->isCostBetterThan(m->cost, best_goal_->cost)) best_goal_ = m;
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
