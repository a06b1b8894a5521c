#include "ompl_cuda/batched_prm.h"

#include <algorithm>
#include <queue>
#include <string>
#include <utility>

#include <ompl/base/goals/GoalSampleableRegion.h>
#include <ompl/base/objectives/PathLengthOptimizationObjective.h>
#include <ompl/geometric/PathGeometric.h>
#include <ompl/tools/config/SelfConfig.h>

#include "batch_nearest_neighbors.h"
#include "chain_state_layout.h"
#include "ompl_cuda/batch_checking.h"
#include "space_metric.h"

namespace ompl_cuda {

namespace ob = ompl::base;

struct BatchedPRM::Milestone {
  ob::State* state;
  std::vector<Edge> edges;
};

BatchedPRM::BatchedPRM(const ob::SpaceInformationPtr& si) : ob::Planner(si, "BatchedPRM") {
  specs_.approximateSolutions = false;
  specs_.optimizingPaths = true;
  declareParam<unsigned int>("batch_size", this, &BatchedPRM::setBatchSize, &BatchedPRM::getBatchSize, "1:1:1000000");
  declareParam<unsigned int>("max_nearest_neighbors", this, &BatchedPRM::setMaxNearestNeighbors,
                             &BatchedPRM::getMaxNearestNeighbors, "1:1:1000");
  addPlannerProgressProperty("best cost REAL", [this] { return std::to_string(bestCost()); });
  addPlannerProgressProperty("milestone count INTEGER", [this] { return std::to_string(milestoneCount()); });
  addPlannerProgressProperty("edge count INTEGER", [this] { return std::to_string(edgeCount()); });
}

BatchedPRM::~BatchedPRM() { free_memory(); }

void BatchedPRM::setup() {
  ob::Planner::setup();
  detail::MetricKind kind;
  std::vector<double> weights;
  if (!batch_nn_ && !nn_) {
    if (detail::batch_metric(*si_->getStateSpace(), kind, weights)) {
      const auto* batch_validator = dynamic_cast<const BatchMotionValidator*>(si_->getMotionValidator().get());
      const Backend backend = batch_validator ? batch_validator->backend() : Backend::Cpu;
      const int dimension = static_cast<int>(si_->getStateDimension());
      layout_ = std::make_unique<detail::ChainStateLayout>(si_, dimension);
      batch_nn_ = std::make_unique<detail::BatchNearestNeighbors>(kind, dimension, std::move(weights), backend);
    } else {
      nn_.reset(ompl::tools::SelfConfig::getDefaultNearestNeighbors<int>(this));
      nn_->setDistanceFunction(
          [this](int a, int b) { return si_->distance(milestones_[a]->state, milestones_[b]->state); });
    }
  }
  if (pdef_) choose_objective();
}

// The current problem definition's objective or, where it has none, OMPL PRM's default: path length
// with an infinite cost threshold (the first path is good enough), not stored in the problem
// definition. Chosen again on every solve(), as a new query may bring its own. (Roadmap edges keep the
// costs they were given when they were added, as in OMPL's PRM.)
void BatchedPRM::choose_objective() {
  if (pdef_->hasOptimizationObjective()) {
    objective_ = pdef_->getOptimizationObjective();
    return;
  }
  objective_ = std::make_shared<ob::PathLengthOptimizationObjective>(si_);
  objective_->setCostThreshold(objective_->infiniteCost());
}

void BatchedPRM::setProblemDefinition(const ob::ProblemDefinitionPtr& pdef) {
  ob::Planner::setProblemDefinition(pdef);
  clearQuery();
}

void BatchedPRM::clearQuery() {
  starts_.clear();
  goals_.clear();
  pis_.restart();
  best_cost_ = std::numeric_limits<double>::infinity();
}

const char* BatchedPRM::nearestNeighborsUsed() const {
  if (batch_nn_) return batch_nn_->backend() == Backend::Cuda ? "gpu" : "cpu";
  return "ompl";
}

void BatchedPRM::free_memory() {
  for (const auto& m : milestones_) si_->freeState(m->state);
  milestones_.clear();
  component_parent_.clear();
  starts_.clear();
  goals_.clear();
  milestone_count_ = 0;
  edge_count_ = 0;
  if (nn_) nn_->clear();
  if (batch_nn_) batch_nn_->clear();
  best_cost_ = std::numeric_limits<double>::infinity();
}

void BatchedPRM::clear() {
  ob::Planner::clear();
  sampler_.reset();
  free_memory();
}

int BatchedPRM::add_milestone(ob::State* state) {
  const int index = static_cast<int>(milestones_.size());
  milestones_.push_back(std::make_unique<Milestone>(Milestone{state, {}}));
  component_parent_.push_back(index);
  if (batch_nn_) {
    std::vector<double> values(layout_->dimension());
    layout_->read(state, values.data());
    batch_nn_->add(values.data());
  } else {
    nn_->add(index);
  }
  ++milestone_count_;
  return index;
}

int BatchedPRM::find_root(int m) {
  while (component_parent_[m] != m) {
    component_parent_[m] = component_parent_[component_parent_[m]];  // path halving
    m = component_parent_[m];
  }
  return m;
}

void BatchedPRM::unite(int a, int b) {
  a = find_root(a);
  b = find_root(b);
  if (a == b) return;
  if (b < a) std::swap(a, b);
  component_parent_[b] = a;  // the smaller index is the root: the same components whatever the order
}

std::size_t BatchedPRM::grow(unsigned int samples) {
  std::vector<ob::State*> states(samples, nullptr);
  std::vector<char> valid;
  try {
    for (ob::State*& s : states) {
      s = si_->allocState();
      sampler_->sampleUniform(s);
    }
    if (const auto* checker = dynamic_cast<const BatchStateValidityChecker*>(si_->getStateValidityChecker().get())) {
      checker->isValid(std::vector<const ob::State*>(states.begin(), states.end()), valid);  // one launch
    } else {
      valid.resize(samples);
      for (unsigned int i = 0; i < samples; ++i) valid[i] = si_->isValid(states[i]);
    }
  } catch (...) {
    for (ob::State* s : states)
      if (s) si_->freeState(s);
    throw;
  }
  std::vector<int> fresh;
  for (unsigned int i = 0; i < samples; ++i) {
    if (valid[i]) fresh.push_back(add_milestone(states[i]));
    else si_->freeState(states[i]);
  }
  connect(fresh);
  return fresh.size();
}

void BatchedPRM::connect(const std::vector<int>& fresh) {
  if (fresh.empty()) return;
  // Each new milestone with its k nearest milestones (the others of its batch included), as unordered
  // pairs without repeats.
  std::vector<std::pair<int, int>> pairs;
  auto propose = [&](int m, const int* neighbours, int count) {
    unsigned int taken = 0;
    for (int j = 0; j < count && taken < k_; ++j) {
      if (neighbours[j] == m) continue;
      pairs.emplace_back(std::min(m, neighbours[j]), std::max(m, neighbours[j]));
      ++taken;
    }
  };
  if (batch_nn_) {
    const int d = layout_->dimension();
    std::vector<double> values(fresh.size() * d);
    for (std::size_t f = 0; f < fresh.size(); ++f) layout_->read(milestones_[fresh[f]]->state, values.data() + f * d);
    std::vector<int> found;
    const int kk = batch_nn_->nearest_k(values.data(), fresh.size(), static_cast<int>(k_) + 1, found);
    for (std::size_t f = 0; f < fresh.size(); ++f) propose(fresh[f], found.data() + f * kk, kk);
  } else {
    std::vector<int> found;
    for (const int m : fresh) {
      nn_->nearestK(m, k_ + 1, found);
      propose(m, found.data(), static_cast<int>(found.size()));
    }
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());

  // Every candidate edge of the batch in one check (one launch with a BatchMotionValidator on the GPU).
  std::vector<std::pair<const ob::State*, const ob::State*>> motions;
  motions.reserve(pairs.size());
  for (const auto& [a, b] : pairs) motions.emplace_back(milestones_[a]->state, milestones_[b]->state);
  std::vector<char> valid;
  if (const auto* validator = dynamic_cast<const BatchMotionValidator*>(si_->getMotionValidator().get())) {
    validator->checkMotions(motions, valid);
  } else {
    valid.resize(motions.size());
    for (std::size_t e = 0; e < motions.size(); ++e) valid[e] = si_->checkMotion(motions[e].first, motions[e].second);
  }
  for (std::size_t e = 0; e < pairs.size(); ++e) {
    if (!valid[e]) continue;
    const auto [a, b] = pairs[e];
    const ob::Cost cost = objective_->motionCost(milestones_[a]->state, milestones_[b]->state);
    milestones_[a]->edges.push_back({b, cost});
    milestones_[b]->edges.push_back({a, cost});
    unite(a, b);
    ++edge_count_;
  }
}

std::vector<int> BatchedPRM::shortest_path(ob::Cost* cost) const {
  // Dijkstra from all start milestones at once, with the objective's identity, combination and order
  // of costs (as OMPL's PRM searches its roadmap). Equal costs go to the smaller index, so the path is
  // the same run to run.
  const std::size_t n = milestones_.size();
  std::vector<ob::Cost> best(n, objective_->infiniteCost());
  std::vector<int> previous(n, -1);
  std::vector<char> is_goal(n, 0), done(n, 0);
  for (const int g : goals_) is_goal[g] = 1;
  using Entry = std::pair<ob::Cost, int>;
  auto after = [this](const Entry& a, const Entry& b) {  // a leaves the queue after b
    if (objective_->isCostBetterThan(b.first, a.first)) return true;
    if (objective_->isCostBetterThan(a.first, b.first)) return false;
    return b.second < a.second;
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(after)> queue(after);
  for (const int s : starts_) {
    best[s] = objective_->identityCost();
    queue.emplace(best[s], s);
  }
  while (!queue.empty()) {
    const auto [c, m] = queue.top();
    queue.pop();
    if (done[m]) continue;
    done[m] = 1;
    if (is_goal[m]) {
      std::vector<int> path;
      for (int v = m; v >= 0; v = previous[v]) path.push_back(v);
      std::reverse(path.begin(), path.end());
      *cost = c;
      return path;
    }
    for (const Edge& e : milestones_[m]->edges) {
      const ob::Cost through = objective_->combineCosts(c, e.cost);
      if (objective_->isCostBetterThan(through, best[e.to])) {
        best[e.to] = through;
        previous[e.to] = m;
        queue.emplace(through, e.to);
      }
    }
  }
  return {};
}

ob::PlannerStatus BatchedPRM::solve(const ob::PlannerTerminationCondition& ptc) {
  checkValidity();
  choose_objective();
  auto* goal = dynamic_cast<ob::GoalSampleableRegion*>(pdef_->getGoal().get());
  if (!goal) {
    OMPL_ERROR("%s: unknown type of goal (a GoalSampleableRegion is needed)", getName().c_str());
    return ob::PlannerStatus::UNRECOGNIZED_GOAL_TYPE;
  }
  std::vector<int> fresh;
  while (const ob::State* start = pis_.nextStart()) {
    starts_.push_back(add_milestone(si_->cloneState(start)));
    fresh.push_back(starts_.back());
  }
  if (starts_.empty()) {
    OMPL_ERROR("%s: there are no valid initial states", getName().c_str());
    return ob::PlannerStatus::INVALID_START;
  }
  if (goals_.empty() && !goal->couldSample()) {
    OMPL_ERROR("%s: insufficient states in sampleable goal region", getName().c_str());
    return ob::PlannerStatus::INVALID_GOAL;
  }
  // At least one valid goal state before the roadmap grows (OMPL's PRM waits for one the same way).
  if (goals_.empty())
    if (const ob::State* g = pis_.nextGoal(ptc)) {
      goals_.push_back(add_milestone(si_->cloneState(g)));
      fresh.push_back(goals_.back());
    }
  if (goals_.empty()) {
    OMPL_ERROR("%s: unable to find any valid goal states", getName().c_str());
    return ob::PlannerStatus::INVALID_GOAL;
  }
  if (!sampler_) sampler_ = si_->allocStateSampler();
  connect(fresh);

  std::vector<int> best;  // searched afresh on every call (a roadmap kept from an earlier call included)
  ob::Cost best_cost = objective_->infiniteCost();
  best_cost_ = std::numeric_limits<double>::infinity();
  bool satisfied = false;
  std::size_t searched_at = 0;  // roadmap size at the last shortest-path search
  auto search = [&] {
    ob::Cost cost;
    std::vector<int> path = shortest_path(&cost);
    searched_at = milestones_.size();
    if (path.empty() || (!best.empty() && !objective_->isCostBetterThan(cost, best_cost))) return;
    best = std::move(path);
    best_cost = cost;
    best_cost_ = cost.value();
    satisfied = objective_->isSatisfied(cost);
  };
  while (!ptc && !satisfied) {
    // New goal states as OMPL's PRM takes them: one per round while the goal offers more.
    if (goal->maxSampleCount() > goals_.size())
      if (const ob::State* g = pis_.nextGoal()) {
        goals_.push_back(add_milestone(si_->cloneState(g)));
        connect({goals_.back()});
      }
    grow(batch_size_);
    // The search runs once start and goal are connected, then again as the roadmap grows by a quarter
    // (and once more at the end), so that it never dominates the batches.
    const bool connected = std::any_of(starts_.begin(), starts_.end(), [&](int s) {
      return std::any_of(goals_.begin(), goals_.end(), [&](int g) { return find_root(s) == find_root(g); });
    });
    if (connected && (best.empty() || milestones_.size() >= searched_at + searched_at / 4)) search();
  }
  if (!best.empty() && searched_at < milestones_.size() && !satisfied) search();
  OMPL_INFORM("%s: %zu milestones, %zu edges, %s", getName().c_str(), milestones_.size(), edgeCount(),
              best.empty() ? "no path yet" : ("path of cost " + std::to_string(bestCost())).c_str());
  if (best.empty()) return ob::PlannerStatus::TIMEOUT;
  auto path = std::make_shared<ompl::geometric::PathGeometric>(si_);
  for (const int m : best) path->append(milestones_[m]->state);
  ob::PlannerSolution solution(path);
  solution.setPlannerName(getName());
  solution.setOptimized(objective_, best_cost, satisfied);
  pdef_->addSolutionPath(solution);
  return ob::PlannerStatus::EXACT_SOLUTION;
}

void BatchedPRM::getPlannerData(ob::PlannerData& data) const {
  ob::Planner::getPlannerData(data);
  std::vector<char> is_start(milestones_.size(), 0), is_goal(milestones_.size(), 0);
  for (const int s : starts_) is_start[s] = 1;
  for (const int g : goals_) is_goal[g] = 1;
  for (std::size_t i = 0; i < milestones_.size(); ++i) {
    const ob::PlannerDataVertex vertex(milestones_[i]->state);
    if (is_start[i]) data.addStartVertex(vertex);
    else if (is_goal[i]) data.addGoalVertex(vertex);
    else data.addVertex(vertex);  // also milestones without edges
    for (const Edge& e : milestones_[i]->edges) data.addEdge(vertex, ob::PlannerDataVertex(milestones_[e.to]->state));
  }
}

}  // namespace ompl_cuda
