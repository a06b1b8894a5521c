// The checkers and planners under concurrency: one ChainValidityChecker and one ChainMotionValidator
// called from several threads at once (single calls, batch calls whose OpenMP loops then run inside
// each thread, both together), OMPL's PRM (it adds goal states and their edges on a thread of its own
// while the roadmap grows), ompl::tools::ParallelPlan with planners sharing the space information, and
// the batched planners side by side. Every answer is compared with the same calls made on one thread,
// or with a fresh CPU checker and OMPL's DiscreteMotionValidator run afterwards on one thread, so the
// tests check results in any build, not only under ThreadSanitizer.
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <ompl/base/DiscreteMotionValidator.h>
#include <ompl/base/PlannerData.h>
#include <ompl/base/ScopedState.h>
#include <ompl/base/goals/GoalStates.h>
#include <ompl/base/objectives/PathLengthOptimizationObjective.h>
#include <ompl/geometric/PathGeometric.h>
#include <ompl/geometric/planners/prm/PRM.h>
#include <ompl/geometric/planners/rrt/RRTConnect.h>
#include <ompl/geometric/planners/rrt/RRTstar.h>
#include <ompl/tools/multiplan/ParallelPlan.h>
#include <ompl/util/Console.h>

#include "chain_test_support.h"
#include "ompl_cuda/batched_prm.h"
#include "ompl_cuda/batched_rrt_star.h"
#include "ompl_cuda/chain_motion_validator.h"
#include "ompl_cuda/chain_problem.h"
#include "ompl_cuda/chain_validity_checker.h"
#include "planner_test_support.h"

namespace {

namespace ob = ompl::base;
namespace og = ompl::geometric;
using chain_test::free_states;
using chain_test::get_joint;
using chain_test::random_states;
using ompl_cuda::ChainMotionValidator;
using ompl_cuda::ChainValidityChecker;
using planner_test::test_backend;

constexpr int kLinks = 9;
using Motions = std::vector<std::pair<const ob::State*, const ob::State*>>;

// A 9-link chain among four rectangles with our checker and motion validator on the test backend.
struct Checkers {
  ob::SpaceInformationPtr si = chain_test::real_vector_space(kLinks);
  std::shared_ptr<ChainValidityChecker> checker;
  std::shared_ptr<ChainMotionValidator> validator;
  Checkers() {
    const auto chain = ompl_cuda::PlanarChain::uniform(kLinks, 1.0);
    checker = std::make_shared<ChainValidityChecker>(si, chain, chain_test::four_rectangles(), test_backend());
    validator = std::make_shared<ChainMotionValidator>(si, chain, chain_test::four_rectangles(), test_backend());
    si->setStateValidityChecker(checker);
    si->setMotionValidator(validator);
    si->setup();
  }
};

// What single calls answer for states and motions: isValid, checkMotion with its lastValid time and
// state (the state's joints, for invalid motions only).
struct SingleAnswers {
  std::vector<char> state_valid, motion_valid;
  std::vector<double> last_time, last_state;
};

// The calls in the order first, first + 1, ... (wrapping), so that threads started at different
// points check different items at the same moment.
SingleAnswers single_answers(const Checkers& c, const std::vector<ob::State*>& states, const Motions& motions,
                             std::size_t first) {
  SingleAnswers a;
  a.state_valid.assign(states.size(), 2);
  a.motion_valid.assign(motions.size(), 2);
  a.last_time.assign(motions.size(), -1.0);
  a.last_state.assign(motions.size() * kLinks, 0.0);
  ob::State* last = c.si->allocState();
  for (std::size_t k = 0; k < std::max(states.size(), motions.size()); ++k) {
    if (k < states.size()) {
      const std::size_t i = (first + k) % states.size();
      a.state_valid[i] = c.checker->isValid(states[i]);
    }
    if (k < motions.size()) {
      const std::size_t i = (first + k) % motions.size();
      std::pair<ob::State*, double> last_valid{last, -1.0};
      a.motion_valid[i] = c.validator->checkMotion(motions[i].first, motions[i].second, last_valid);
      if (!a.motion_valid[i]) {
        a.last_time[i] = last_valid.second;
        for (int j = 0; j < kLinks; ++j) a.last_state[i * kLinks + j] = get_joint(last, j);
      }
    }
  }
  c.si->freeState(last);
  return a;
}

void expect_same(const SingleAnswers& expected, const SingleAnswers& got, int thread) {
  EXPECT_EQ(got.state_valid, expected.state_valid) << "thread " << thread;
  EXPECT_EQ(got.motion_valid, expected.motion_valid) << "thread " << thread;
  EXPECT_EQ(got.last_time, expected.last_time) << "thread " << thread;
  EXPECT_EQ(got.last_state, expected.last_state) << "thread " << thread;
}

// Motions from states[i] to a state a small random step away (mostly one segment: cheap) or, every
// tenth, a larger step (several segments, often blocked part way). The targets are appended to
// `targets` (free them with free_states).
Motions motions_from(const ob::SpaceInformationPtr& si, const std::vector<ob::State*>& states,
                     std::vector<ob::State*>& targets, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> step(-1.0, 1.0);
  Motions motions;
  for (std::size_t i = 0; i < states.size(); ++i) {
    ob::State* to = si->allocState();
    const double size = i % 10 == 0 ? 0.4 : 0.03;
    for (int j = 0; j < kLinks; ++j)
      chain_test::set_joint(si, to, j, std::clamp(get_joint(states[i], j) + size * step(rng), -M_PI, M_PI));
    targets.push_back(to);
    motions.emplace_back(states[i], to);
  }
  return motions;
}

// Four threads call isValid and checkMotion (with lastValid) on one checker and one validator at once,
// each starting at a different item: every answer is the one-thread answer, and the validator counts
// every motion once per call.
TEST(ConcurrentChecks, SingleCallsFromThreadsMatchOneThread) {
  const Checkers c;
  auto states = random_states(c.si, kLinks, 20000, 11);
  auto from = random_states(c.si, kLinks, 4000, 12, 0.8);
  std::vector<ob::State*> targets;
  const Motions motions = motions_from(c.si, from, targets, 13);
  const SingleAnswers expected = single_answers(c, states, motions, 0);
  const auto valid_motions = static_cast<unsigned>(std::count(expected.motion_valid.begin(), expected.motion_valid.end(), 1));
  ASSERT_GT(valid_motions, 0u);
  ASSERT_LT(valid_motions, motions.size());
  ASSERT_GT(std::count(expected.state_valid.begin(), expected.state_valid.end(), 0), 0);

  constexpr int kThreads = 4;
  std::vector<SingleAnswers> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { got[t] = single_answers(c, states, motions, t * states.size() / kThreads); });
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; ++t) expect_same(expected, got[t], t);
  EXPECT_EQ(c.validator->getCheckedMotionCount(), (kThreads + 1) * motions.size());
  EXPECT_EQ(c.validator->getValidMotionCount(), (kThreads + 1) * valid_motions);
  free_states(c.si, states);
  free_states(c.si, from);
  free_states(c.si, targets);
}

// Batches of each thread: states and motions of its own (the second thread's a different number of
// states, and the first thread's motions reversed, fewer of them), so that calls that mixed up their
// data or shared scratch memory would answer wrongly.
struct Batch {
  std::vector<const ob::State*> states;
  Motions motions;
  std::vector<char> states_valid, motions_valid;
  std::vector<double> times;
};

// Two threads make batch calls (isValid of 5,000 to 6,000 states, checkMotions of 68,000 to 70,000
// motions: large enough for every OpenMP loop of the CPU backend to run on all its threads, inside each
// calling thread) while a third makes single calls; the answers are those of the same calls made on
// one thread before.
TEST(ConcurrentChecks, BatchAndSingleCallsFromThreadsMatchOneThread) {
  const Checkers c;
  auto states = random_states(c.si, kLinks, 6000, 21);
  auto from = random_states(c.si, kLinks, 70000, 22, 0.8);
  std::vector<ob::State*> targets;
  const Motions motions = motions_from(c.si, from, targets, 23);
  std::vector<Batch> expected(2);
  expected[0].states.assign(states.begin(), states.end());
  expected[0].motions = motions;
  expected[1].states.assign(states.rbegin(), states.rend() - 1000);
  for (std::size_t i = 0; i < 68000; ++i) expected[1].motions.emplace_back(motions[i].second, motions[i].first);
  for (Batch& b : expected) {
    c.checker->isValid(b.states, b.states_valid);
    c.validator->checkMotions(b.motions, b.motions_valid, &b.times);
    const auto valid = std::count(b.motions_valid.begin(), b.motions_valid.end(), 1);
    ASSERT_GT(valid, 0);
    ASSERT_LT(valid, static_cast<long>(b.motions.size()));
  }
  ASSERT_NE(std::vector<char>(expected[0].motions_valid.begin(), expected[0].motions_valid.begin() + 68000),
            expected[1].motions_valid);  // reversed motions check other states
  // The batch calls answer as single calls do (on the first items, which the third thread uses).
  const Motions few(motions.begin(), motions.begin() + 500);
  const std::vector<ob::State*> some(states.begin(), states.begin() + 500);
  const SingleAnswers expected_single = single_answers(c, some, few, 0);
  for (std::size_t i = 0; i < few.size(); ++i) {
    EXPECT_EQ(expected_single.state_valid[i], expected[0].states_valid[i]) << i;
    EXPECT_EQ(expected_single.motion_valid[i], expected[0].motions_valid[i]) << i;
    if (!expected[0].motions_valid[i]) EXPECT_EQ(expected_single.last_time[i], expected[0].times[i]) << i;
  }

  constexpr int kRounds = 2;
  std::vector<Batch> got(2 * kRounds);
  SingleAnswers got_single;
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        const Batch& in = expected[t];
        Batch& out = got[t * kRounds + r];
        if ((t + r) % 2 == 0) c.checker->isValid(in.states, out.states_valid);
        c.validator->checkMotions(in.motions, out.motions_valid, &out.times);
        if ((t + r) % 2 == 1) c.checker->isValid(in.states, out.states_valid);
      }
    });
  threads.emplace_back([&] { got_single = single_answers(c, some, few, 250); });
  for (auto& t : threads) t.join();
  for (int k = 0; k < 2 * kRounds; ++k) {
    const Batch& want = expected[k / kRounds];
    EXPECT_EQ(got[k].states_valid, want.states_valid) << "batch call " << k;
    EXPECT_EQ(got[k].motions_valid, want.motions_valid) << "batch call " << k;
    EXPECT_EQ(got[k].times, want.times) << "batch call " << k;
  }
  expect_same(expected_single, got_single, 2);
  const std::size_t motion_count = (1 + kRounds) * (expected[0].motions.size() + expected[1].motions.size());
  EXPECT_EQ(c.validator->getCheckedMotionCount(), motion_count + 2 * few.size());
  free_states(c.si, states);
  free_states(c.si, from);
  free_states(c.si, targets);
}

// ---- planners -----------------------------------------------------------------------------------

// A fresh CPU checker and OMPL's DiscreteMotionValidator over it, on the planners' state space, used on
// one thread after planning.
ob::SpaceInformationPtr reference_for(const ompl_cuda::ChainProblem& problem, const ob::StateSpacePtr& space) {
  auto reference = std::make_shared<ob::SpaceInformation>(space);
  reference->setStateValidityChecker(
      std::make_shared<ChainValidityChecker>(reference, problem.chain, problem.workspace, ompl_cuda::Backend::Cpu));
  reference->setMotionValidator(std::make_shared<ob::DiscreteMotionValidator>(reference));
  reference->setup();
  return reference;
}

// Every state of the planner's graph is valid and every edge a valid motion by the reference (in
// either direction: trees grown from the goal check their edges child to parent), at most `limit`
// edges. Returns the number of edges checked.
std::size_t expect_planner_data_valid(const ob::Planner& planner, const ob::SpaceInformationPtr& reference,
                                      std::size_t limit = 3000) {
  ob::PlannerData data(planner.getSpaceInformation());
  planner.getPlannerData(data);
  std::vector<unsigned> out;
  std::size_t checked = 0;
  for (unsigned v = 0; v < data.numVertices(); ++v) {
    const ob::State* s = data.getVertex(v).getState();
    EXPECT_TRUE(reference->isValid(s)) << planner.getName() << " vertex " << v;
    data.getEdges(v, out);
    for (const unsigned w : out) {
      if (checked >= limit) break;
      const ob::State* t = data.getVertex(w).getState();
      EXPECT_TRUE(reference->checkMotion(s, t) || reference->checkMotion(t, s))
          << planner.getName() << " edge " << v << " - " << w;
      ++checked;
    }
  }
  return checked;
}

// Every solution in the problem definition is a path of valid states and motions by the reference.
void expect_solutions_valid(const ob::ProblemDefinition& pdef, const ob::SpaceInformationPtr& reference) {
  for (const ob::PlannerSolution& solution : pdef.getSolutions()) {
    const auto& path = static_cast<const og::PathGeometric&>(*solution.path_);
    ASSERT_GE(path.getStateCount(), 2u) << solution.plannerName_;
    for (std::size_t i = 0; i < path.getStateCount(); ++i)
      EXPECT_TRUE(reference->isValid(path.getState(i))) << solution.plannerName_ << " state " << i;
    for (std::size_t i = 0; i + 1 < path.getStateCount(); ++i)
      EXPECT_TRUE(reference->checkMotion(path.getState(i), path.getState(i + 1))) << solution.plannerName_ << " " << i;
  }
}

// OMPL's PRM grows its roadmap on the calling thread (isValid on samples, checkMotion to neighbours)
// while a thread of its own takes goal states, checks them and connects them (isValid, checkMotion):
// here 16 goal states. With a path-length objective whose threshold no path meets, it grows for the
// whole second (whether or not it connects start and goal in that time).
TEST(ConcurrentPlanning, OmplPrmGrowsItsRoadmapOnTwoThreads) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const auto problem = ompl_cuda::paper_problem();
  auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
  const ob::SpaceInformationPtr& si = setup->getSpaceInformation();
  const auto reference = reference_for(problem, si->getStateSpace());
  auto goals = std::make_shared<ob::GoalStates>(si);
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> nudge(-0.05, 0.05);
  ob::ScopedState<> goal(si->getStateSpace());
  while (goals->getStateCount() < 16) {
    for (int j = 0; j < kLinks; ++j) goal[j] = problem.goal[j] + (goals->getStateCount() ? nudge(rng) : 0.0);
    if (reference->isValid(goal.get())) goals->addState(goal);
  }
  setup->setGoal(goals);
  setup->setOptimizationObjective(std::make_shared<ob::PathLengthOptimizationObjective>(si));
  auto prm = std::make_shared<og::PRM>(si);
  setup->setPlanner(prm);
  setup->solve(1.0);
  expect_solutions_valid(*setup->getProblemDefinition(), reference);
  EXPECT_GT(expect_planner_data_valid(*prm, reference), 100u);
}

// ParallelPlan runs RRTConnect, RRTstar and PRM on threads of their own with one problem definition
// and one space information, so all three (and PRM's own second thread) call the same checker and
// motion validator. With a path-length objective whose threshold no path meets, RRTstar and PRM plan
// for the whole second; then the paths are hybridized (PathHybridization checks motions between them).
// The objective is in the problem definition before the planners' setup(), which would otherwise
// store one there, as RRTstar's does.
TEST(ConcurrentPlanning, ParallelPlanSharesTheCheckers) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const auto problem = ompl_cuda::paper_problem();
  auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
  const ob::SpaceInformationPtr& si = setup->getSpaceInformation();
  si->setup();
  setup->setOptimizationObjective(std::make_shared<ob::PathLengthOptimizationObjective>(si));
  const ob::ProblemDefinitionPtr& pdef = setup->getProblemDefinition();
  std::vector<ob::PlannerPtr> planners{std::make_shared<og::RRTConnect>(si), std::make_shared<og::RRTstar>(si),
                                       std::make_shared<og::PRM>(si)};
  ompl::tools::ParallelPlan parallel(pdef);
  for (const auto& planner : planners) {
    parallel.addPlanner(planner);
    planner->setup();
  }
  EXPECT_TRUE(parallel.solve(1.0, 3, 3, true));
  EXPECT_GE(pdef->getSolutionCount(), 2u);  // RRTConnect's, RRTstar's (approximate at worst), PRM's if found
  const auto reference = reference_for(problem, si->getStateSpace());
  expect_solutions_valid(*pdef, reference);
  for (const auto& planner : planners) EXPECT_GT(expect_planner_data_valid(*planner, reference), 0u);
}

// BatchedRRTstar and BatchedPRM side by side in ParallelPlan, as its documentation has it (addPlanner,
// then solve): each planner's setup() runs on its own thread as it starts solving, then their batch
// calls (checkMotions, the batch isValid of 5,000 samples, and on the CPU backend the nearest-neighbour
// search) run at once on the shared checkers, each with its own OpenMP threads. Regression: the setups
// must only read the problem definition's objective; BatchedRRTstar stores its default one when
// addPlanner sets the problem definition (ThreadSanitizer reported BatchedRRTstar::setup writing it
// while BatchedPRM::setup read it).
TEST(ConcurrentPlanning, BatchedPlannersSideBySide) {
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  const auto problem = ompl_cuda::paper_problem();
  auto setup = ompl_cuda::make_simple_setup(problem, test_backend());
  const ob::SpaceInformationPtr& si = setup->getSpaceInformation();
  const ob::ProblemDefinitionPtr& pdef = setup->getProblemDefinition();
  auto rrt_star = std::make_shared<ompl_cuda::BatchedRRTstar>(si);
  rrt_star->setBatchSize(256);
  rrt_star->setMaxSamples(1024);
  auto prm = std::make_shared<ompl_cuda::BatchedPRM>(si);
  prm->setBatchSize(5000);
  ompl::tools::ParallelPlan parallel(pdef);
  ASSERT_FALSE(pdef->hasOptimizationObjective());
  parallel.addPlanner(rrt_star);
  EXPECT_TRUE(pdef->hasOptimizationObjective());  // before any thread starts
  parallel.addPlanner(prm);
  // BatchedRRTstar stops at its sample limit; BatchedPRM grows its roadmap (the path-length objective
  // has no threshold a path meets) for the whole 1.5 s.
  EXPECT_TRUE(parallel.solve(ob::timedPlannerTerminationCondition(1.5), 2, 2, false));
  const auto reference = reference_for(problem, si->getStateSpace());
  expect_solutions_valid(*pdef, reference);
  EXPECT_GE(rrt_star->samplesDrawn(), 256u);
  EXPECT_GT(prm->milestoneCount(), 1000u);
  EXPECT_GT(expect_planner_data_valid(*rrt_star, reference), 100u);
  EXPECT_GT(expect_planner_data_valid(*prm, reference), 100u);
}

}  // namespace
