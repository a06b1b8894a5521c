#include "ompl_cuda/batched_rrt_connect.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <ompl/base/PlannerData.h>
#include <ompl/base/goals/GoalSampleableRegion.h>
#include <ompl/datastructures/NearestNeighbors.h>
#include <ompl/geometric/PathGeometric.h>
#include <ompl/tools/config/SelfConfig.h>

#include "batch_nearest_neighbors.h"
#include "chain_state_layout.h"
#include "ompl_cuda/batch_checking.h"
#include "space_metric.h"

namespace ompl_cuda {

namespace ob = ompl::base;
using MotionList = std::vector<std::pair<const ob::State*, const ob::State*>>;

struct BatchedRRTConnect::Motion {
  ob::State* state = nullptr;
  Motion* parent = nullptr;
  const ob::State* root = nullptr;  // the state of the tree's root this motion hangs from
};

struct BatchedRRTConnect::Tree {
  std::vector<Motion*> motions;  // motions[i] is point i of batch_nn
  std::unique_ptr<detail::BatchNearestNeighbors> batch_nn;
  std::shared_ptr<ompl::NearestNeighbors<Motion*>> nn;  // when batch_nn cannot serve the space
};

// The straight line from a node of one tree (`from`) to a new node of the other (`to`), in `segments`
// range-long motions; its intermediate states are scratch states first_state .. first_state +
// segments - 2, from `from` on; `good` of its motions, from `from` on, are known valid.
struct BatchedRRTConnect::Line {
  Motion* from;
  Motion* to;
  std::size_t first_state;
  int segments;
  int good;
};

BatchedRRTConnect::BatchedRRTConnect(const ob::SpaceInformationPtr& si) : ob::Planner(si, "BatchedRRTConnect") {
  specs_.recognizedGoal = ob::GOAL_SAMPLEABLE_REGION;
  specs_.directed = true;
  specs_.approximateSolutions = true;
  declareParam<double>("range", this, &BatchedRRTConnect::setRange, &BatchedRRTConnect::getRange, "0.:1.:10000.");
  declareParam<unsigned int>("batch_size", this, &BatchedRRTConnect::setBatchSize, &BatchedRRTConnect::getBatchSize,
                             "1:1:100000");
}

BatchedRRTConnect::~BatchedRRTConnect() {
  free_memory();
  for (ob::State* s : scratch_) si_->freeState(s);
}

void BatchedRRTConnect::setup() {
  ob::Planner::setup();
  ompl::tools::SelfConfig config(si_, getName());
  config.configurePlannerRange(range_);
  if (start_) return;
  start_ = std::make_unique<Tree>();
  goal_ = std::make_unique<Tree>();
  detail::MetricKind kind;
  std::vector<double> weights;
  if (detail::batch_metric(*si_->getStateSpace(), kind, weights)) {
    const auto* validator = dynamic_cast<const BatchMotionValidator*>(si_->getMotionValidator().get());
    const Backend backend = validator ? validator->backend() : Backend::Cpu;
    const int dimension = static_cast<int>(si_->getStateDimension());
    layout_ = std::make_unique<detail::ChainStateLayout>(si_, dimension);
    for (Tree* tree : {start_.get(), goal_.get()})
      tree->batch_nn = std::make_unique<detail::BatchNearestNeighbors>(kind, dimension, weights, backend);
  } else {
    for (Tree* tree : {start_.get(), goal_.get()}) {
      tree->nn.reset(ompl::tools::SelfConfig::getDefaultNearestNeighbors<Motion*>(this));
      tree->nn->setDistanceFunction([this](const Motion* a, const Motion* b) { return si_->distance(a->state, b->state); });
    }
  }
  OMPL_DEBUG("%s: nearest neighbours by %s", getName().c_str(), nearestNeighborsUsed());
}

void BatchedRRTConnect::free_memory() {
  for (Tree* tree : {start_.get(), goal_.get()}) {
    if (!tree) continue;
    for (Motion* m : tree->motions) {
      si_->freeState(m->state);
      delete m;
    }
    tree->motions.clear();
    if (tree->nn) tree->nn->clear();
    if (tree->batch_nn) tree->batch_nn->clear();
  }
  connection_ = {nullptr, nullptr};
  approximate_ = nullptr;
}

void BatchedRRTConnect::clear() {
  ob::Planner::clear();
  sampler_.reset();
  free_memory();
}

std::size_t BatchedRRTConnect::startTreeSize() const { return start_ ? start_->motions.size() : 0; }
std::size_t BatchedRRTConnect::goalTreeSize() const { return goal_ ? goal_->motions.size() : 0; }

const char* BatchedRRTConnect::nearestNeighborsUsed() const {
  if (start_ && start_->batch_nn) return start_->batch_nn->backend() == Backend::Cuda ? "gpu" : "cpu";
  return "ompl";
}

ob::State* BatchedRRTConnect::scratch(std::size_t i) {
  while (scratch_.size() <= i) scratch_.push_back(si_->allocState());
  return scratch_[i];
}

void BatchedRRTConnect::add_to_tree(Tree& tree, Motion* m) {
  tree.motions.push_back(m);
  if (tree.batch_nn) {
    std::vector<double> values(layout_->dimension());
    layout_->read(m->state, values.data());
    tree.batch_nn->add(values.data());
  } else {
    tree.nn->add(m);
  }
  if (&tree == start_.get() && m->parent) track_approximate(m);
}

void BatchedRRTConnect::track_approximate(Motion* m) {
  double distance = std::numeric_limits<double>::infinity();
  pdef_->getGoal()->isSatisfied(m->state, &distance);
  if (!approximate_ || distance < approximate_distance_) {
    approximate_ = m;
    approximate_distance_ = distance;
  }
}

void BatchedRRTConnect::nearest(Tree& tree, const std::vector<const ob::State*>& states, std::vector<Motion*>& found) {
  found.resize(states.size());
  if (!tree.batch_nn) {
    Motion query;
    for (std::size_t i = 0; i < states.size(); ++i) {
      query.state = const_cast<ob::State*>(states[i]);  // only read, by the distance function
      found[i] = tree.nn->nearest(&query);
    }
    return;
  }
  const int d = layout_->dimension();
  std::vector<double> values(states.size() * d);
  for (std::size_t i = 0; i < states.size(); ++i) layout_->read(states[i], values.data() + i * d);
  std::vector<int> index;
  tree.batch_nn->nearest(values.data(), states.size(), index);
  for (std::size_t i = 0; i < states.size(); ++i) found[i] = tree.motions[index[i]];
}

void BatchedRRTConnect::check_states(const std::vector<const ob::State*>& states, std::vector<char>& valid) const {
  if (batch_checker_ && !states.empty()) {
    batch_checker_->isValid(states, valid);
    return;
  }
  valid.resize(states.size());
  for (std::size_t i = 0; i < states.size(); ++i) valid[i] = si_->isValid(states[i]);
}

void BatchedRRTConnect::check_motions(const MotionList& motions, std::vector<char>& valid) const {
  if (batch_validator_ && !motions.empty()) {
    batch_validator_->checkMotions(motions, valid);
    return;
  }
  valid.resize(motions.size());
  for (std::size_t i = 0; i < motions.size(); ++i) valid[i] = si_->checkMotion(motions[i].first, motions[i].second);
}

std::vector<BatchedRRTConnect::Motion*> BatchedRRTConnect::extend(Tree& tree) {
  const bool start_tree = &tree == start_.get();
  const std::size_t count = batch_size_;
  std::vector<const ob::State*> targets(count);
  for (std::size_t b = 0; b < count; ++b) {
    ob::State* sample = scratch(b);
    sampler_->sampleUniform(sample);
    targets[b] = sample;
  }
  std::vector<Motion*> near;
  nearest(tree, targets, near);  // the tree as it was before the batch
  std::vector<std::size_t> active;
  for (std::size_t b = 0; b < count; ++b) {
    const double d = si_->distance(near[b]->state, targets[b]);
    if (d > range_) {
      ob::State* steered = scratch(count + b);
      si_->getStateSpace()->interpolate(near[b]->state, targets[b], range_ / d, steered);
      targets[b] = steered;
    }
    // No progress (a sample on a node, or an interpolation that does not move): RRTConnect's TRAPPED.
    if (!si_->equalStates(near[b]->state, targets[b])) active.push_back(b);
  }
  std::vector<char> valid;
  if (!start_tree) {
    // A goal-tree motion runs from the new state to the tree on a path, and checkMotion assumes its
    // first state valid: the new states are checked first, as RRTConnect does.
    std::vector<const ob::State*> states;
    for (const std::size_t b : active) states.push_back(targets[b]);
    check_states(states, valid);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < active.size(); ++i)
      if (valid[i]) active[kept++] = active[i];
    active.resize(kept);
  }
  MotionList motions;
  for (const std::size_t b : active)
    motions.emplace_back(start_tree ? near[b]->state : targets[b], start_tree ? targets[b] : near[b]->state);
  check_motions(motions, valid);
  std::vector<Motion*> added;
  for (std::size_t i = 0; i < active.size(); ++i) {
    if (!valid[i]) continue;
    const std::size_t b = active[i];
    auto* m = new Motion{si_->cloneState(targets[b]), near[b], near[b]->root};
    add_to_tree(tree, m);
    added.push_back(m);
  }
  return added;
}

BatchedRRTConnect::Motion* BatchedRRTConnect::add_chain(Tree& tree, Motion* from, const std::vector<ob::State*>& states) {
  for (ob::State* s : states) {
    auto* m = new Motion{si_->cloneState(s), from, from->root};
    add_to_tree(tree, m);
    from = m;
  }
  return from;
}

std::pair<BatchedRRTConnect::Motion*, BatchedRRTConnect::Motion*> BatchedRRTConnect::connect(
    Tree& other, const std::vector<Motion*>& fresh) {
  const bool other_is_start = &other == start_.get();
  std::vector<const ob::State*> targets;
  for (const Motion* m : fresh) targets.push_back(m->state);
  std::vector<Motion*> near;
  nearest(other, targets, near);

  std::vector<Line> lines;
  std::size_t states = 0;
  for (std::size_t i = 0; i < fresh.size(); ++i) {
    Line line{near[i], fresh[i], states, 0, 0};
    const double d = si_->distance(line.from->state, line.to->state);
    if (!si_->equalStates(line.from->state, line.to->state))
      line.segments = static_cast<int>(std::max(1.0, std::ceil(d / range_)));
    for (int s = 1; s < line.segments; ++s)
      si_->getStateSpace()->interpolate(line.from->state, line.to->state, s * range_ / d, scratch(states++));
    lines.push_back(line);
  }
  auto waypoint = [this](const Line& line, int s) -> const ob::State* {
    return s == 0 ? line.from->state : s == line.segments ? line.to->state : scratch_[line.first_state + s - 1];
  };

  // The lines' motions from the other tree's node on, each in the direction a start-to-goal path runs
  // through it (away from the start tree), so that each starts where the one before it on the path
  // ended. A line is decided by its leading valid motions, so checking past its first invalid one is
  // wasted: on the GPU that costs less than another launch, and every motion of every line goes in
  // one call; on CPU cores (or one at a time) each line advances one motion per call and stops at its
  // first invalid motion, as CONNECT does. The decisions, and so the result, are the same.
  const bool one_call = batch_validator_ && batch_validator_->backend() == Backend::Cuda;
  MotionList motions;
  std::vector<std::size_t> owner;
  std::vector<char> valid, open(lines.size(), 1);
  while (true) {
    motions.clear();
    owner.clear();
    for (std::size_t l = 0; l < lines.size(); ++l) {
      if (!open[l]) continue;
      const int last = one_call ? lines[l].segments : lines[l].good + 1;
      for (int s = lines[l].good + 1; s <= last; ++s) {
        const ob::State* a = waypoint(lines[l], s - 1);
        const ob::State* b = waypoint(lines[l], s);
        motions.emplace_back(other_is_start ? a : b, other_is_start ? b : a);
        owner.push_back(l);
      }
    }
    if (motions.empty()) break;
    check_motions(motions, valid);
    for (std::size_t k = 0; k < motions.size(); ++k) {
      Line& line = lines[owner[k]];
      if (open[owner[k]] && valid[k]) ++line.good;
      else open[owner[k]] = 0;
      if (line.good == line.segments) open[owner[k]] = 0;
    }
  }

  const ob::Goal& goal = *pdef_->getGoal();
  std::vector<ob::State*> chain;
  for (const Line& line : lines) {
    const int good = line.good;
    // The intermediate states that may join the other tree: those known valid. A motion checked away
    // from the other tree proves its end state; one checked towards it assumes its first state valid,
    // which only the motion before it on the path (the one nearer the new node) proves.
    const int keep = std::max(0, std::min(line.segments - 1, other_is_start ? good : good - 1));
    chain.assign(scratch_.begin() + line.first_state, scratch_.begin() + line.first_state + keep);
    Motion* end = add_chain(other, line.from, chain);
    const ob::State* start_root = other_is_start ? line.from->root : line.to->root;
    const ob::State* goal_root = other_is_start ? line.to->root : line.from->root;
    if (good == line.segments && goal.isStartGoalPairValid(start_root, goal_root))
      return other_is_start ? std::make_pair(end, line.to) : std::make_pair(line.to, end);
  }
  return {nullptr, nullptr};
}

ob::PlannerStatus BatchedRRTConnect::solve(const ob::PlannerTerminationCondition& ptc) {
  checkValidity();
  auto* goal = dynamic_cast<ob::GoalSampleableRegion*>(pdef_->getGoal().get());
  if (!goal) {
    OMPL_ERROR("%s: unknown type of goal (a GoalSampleableRegion is needed)", getName().c_str());
    return ob::PlannerStatus::UNRECOGNIZED_GOAL_TYPE;
  }
  approximate_ = nullptr;
  while (const ob::State* st = pis_.nextStart()) {
    auto* m = new Motion{si_->cloneState(st), nullptr, nullptr};
    m->root = m->state;
    add_to_tree(*start_, m);
  }
  if (start_->motions.empty()) {
    OMPL_ERROR("%s: motion planning start tree could not be initialized", getName().c_str());
    return ob::PlannerStatus::INVALID_START;
  }
  if (!goal->couldSample()) {
    OMPL_ERROR("%s: insufficient states in sampleable goal region", getName().c_str());
    return ob::PlannerStatus::INVALID_GOAL;
  }
  if (!sampler_) sampler_ = si_->allocStateSampler();
  ompl::tools::SelfConfig(si_, getName()).configurePlannerRange(range_);  // a range set to 0 after setup()
  // The checkers may have been replaced since setup(); the batch interface is looked up per solve.
  batch_checker_ = dynamic_cast<const BatchStateValidityChecker*>(si_->getStateValidityChecker().get());
  batch_validator_ = dynamic_cast<const BatchMotionValidator*>(si_->getMotionValidator().get());

  std::pair<Motion*, Motion*> join{nullptr, nullptr};
  bool start_turn = true;
  while (!ptc && !join.first) {
    // Goal states as RRTConnect takes them: wait for the first, then one more whenever the goal tree
    // has grown to twice the goal states taken.
    if (goal_->motions.empty() || pis_.getSampledGoalsCount() < goal_->motions.size() / 2) {
      if (const ob::State* st = goal_->motions.empty() ? pis_.nextGoal(ptc) : pis_.nextGoal()) {
        auto* m = new Motion{si_->cloneState(st), nullptr, nullptr};
        m->root = m->state;
        add_to_tree(*goal_, m);
      }
      if (goal_->motions.empty()) {
        OMPL_ERROR("%s: unable to sample any valid states for goal tree", getName().c_str());
        break;
      }
    }
    Tree& tree = start_turn ? *start_ : *goal_;
    Tree& other = start_turn ? *goal_ : *start_;
    start_turn = !start_turn;
    const std::vector<Motion*> fresh = extend(tree);
    if (!fresh.empty()) join = connect(other, fresh);
  }
  OMPL_INFORM("%s: %zu states (%zu start + %zu goal)", getName().c_str(), startTreeSize() + goalTreeSize(),
              startTreeSize(), goalTreeSize());

  auto path = std::make_shared<ompl::geometric::PathGeometric>(si_);
  std::vector<Motion*> to_start;
  if (join.first) {
    Motion* start_side = join.first;
    Motion* goal_side = join.second;
    connection_ = {start_side->state, goal_side->state};
    for (Motion* m = start_side; m; m = m->parent) to_start.push_back(m);
    for (auto it = to_start.rbegin(); it != to_start.rend(); ++it) path->append((*it)->state);
    // A line of no motions joins two equal states: the path has one of them.
    if (si_->equalStates(start_side->state, goal_side->state)) goal_side = goal_side->parent;
    for (Motion* m = goal_side; m; m = m->parent) path->append(m->state);
    pdef_->addSolutionPath(path, false, 0.0, getName());
    return ob::PlannerStatus::EXACT_SOLUTION;
  }
  if (!approximate_) return ob::PlannerStatus::TIMEOUT;
  for (Motion* m = approximate_; m; m = m->parent) to_start.push_back(m);
  for (auto it = to_start.rbegin(); it != to_start.rend(); ++it) path->append((*it)->state);
  pdef_->addSolutionPath(path, true, approximate_distance_, getName());
  return ob::PlannerStatus::APPROXIMATE_SOLUTION;
}

void BatchedRRTConnect::getPlannerData(ob::PlannerData& data) const {
  ob::Planner::getPlannerData(data);
  if (!start_) return;
  // Tags 1 (start tree) and 2 (goal tree), goal-tree edges towards the root, as RRTConnect's.
  for (const Motion* m : start_->motions) {
    if (!m->parent) data.addStartVertex(ob::PlannerDataVertex(m->state, 1));
    else data.addEdge(ob::PlannerDataVertex(m->parent->state, 1), ob::PlannerDataVertex(m->state, 1));
  }
  for (const Motion* m : goal_->motions) {
    if (!m->parent) data.addGoalVertex(ob::PlannerDataVertex(m->state, 2));
    else data.addEdge(ob::PlannerDataVertex(m->state, 2), ob::PlannerDataVertex(m->parent->state, 2));
  }
  if (connection_.first)
    data.addEdge(data.vertexIndex(ob::PlannerDataVertex(connection_.first, 1)),
                 data.vertexIndex(ob::PlannerDataVertex(connection_.second, 2)));
}

}  // namespace ompl_cuda
