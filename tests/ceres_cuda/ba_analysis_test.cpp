// The problem analysis (analyze_problem) and the index (make_index), which run on all threads with
// hash tables and counting sorts (small problems on one: each case runs both ways), against a plain
// serial reading of what they promise: blocks
// numbered by first use with variable ones first, residuals camera by camera in problem order with
// the fixed ones apart, the fast path's check, and the index's CSR arrays and repeated pairs. On
// problems whose residuals come in shuffled order, with constant blocks, repeated pairs, losses,
// point-first blocks, an ordering, an unused block; and the reasons for problems Solve hands back.
#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <typeinfo>
#include <vector>

#include <gtest/gtest.h>

#include "ba_index.h"
#include "ba_layout.h"
#include "ba_test_support.h"
#include "set_up_threads.h"
#include "ceres_cuda/snavely_reprojection_error.h"

namespace {

using namespace ceres_cuda::detail;

// The analysis of a problem that fits, one residual at a time.
BaLayout reference_layout(const ceres::Solver::Options& options, ceres::Problem& problem) {
  std::set<double*> ordered_points;
  if (options.linear_solver_ordering) ordered_points = options.linear_solver_ordering->group_to_elements().begin()->second;
  std::vector<ceres::ResidualBlockId> ids;
  problem.GetResidualBlocks(&ids);
  struct Use {
    double* camera;
    double* point;
    bool camera_first;
  };
  std::vector<Use> uses;
  std::vector<double*> cameras, points;  // in order of first use in the problem
  std::set<double*> seen_cameras, seen_points;
  for (const ceres::ResidualBlockId id : ids) {
    std::vector<double*> blocks;
    problem.GetParameterBlocksForResidualBlock(id, &blocks);
    const auto& sizes = problem.GetCostFunctionForResidualBlock(id)->parameter_block_sizes();
    const int point_slot = !ordered_points.empty() ? (ordered_points.count(blocks[0]) ? 0 : 1)
                                                   : (sizes[0] == 3 && sizes[1] != 3 ? 0 : 1);
    const Use u{blocks[1 - point_slot], blocks[point_slot], point_slot == 1};
    uses.push_back(u);
    if (seen_cameras.insert(u.camera).second) cameras.push_back(u.camera);
    if (seen_points.insert(u.point).second) points.push_back(u.point);
  }
  BaLayout l;
  auto variable_first = [&](std::vector<double*> blocks, int* variable) {
    const auto end = std::stable_partition(blocks.begin(), blocks.end(),
                                           [&](double* b) { return !problem.IsParameterBlockConstant(b); });
    *variable = static_cast<int>(end - blocks.begin());
    return blocks;
  };
  l.cameras = variable_first(cameras, &l.variable_cameras);
  l.points = variable_first(points, &l.variable_points);
  std::map<double*, int> camera_index, point_index;
  for (int k = 0; k < static_cast<int>(l.cameras.size()); ++k) camera_index[l.cameras[k]] = k;
  for (int k = 0; k < static_cast<int>(l.points.size()); ++k) point_index[l.points[k]] = k;
  std::vector<BaResidual> all;
  for (std::size_t r = 0; r < ids.size(); ++r)
    all.emplace_back(ids[r], problem.GetCostFunctionForResidualBlock(ids[r]), problem.GetLossFunctionForResidualBlock(ids[r]),
                     camera_index[uses[r].camera], point_index[uses[r].point], uses[r].camera_first);
  std::stable_sort(all.begin(), all.end(), [](const BaResidual& a, const BaResidual& b) { return a.camera < b.camera; });
  for (const BaResidual& x : all)
    (l.camera_is_variable(x.camera) || l.point_is_variable(x.point) ? l.residuals : l.fixed_residuals).push_back(x);
  // Points renumbered by first use in that order (the residuals, then the fixed ones), variable first.
  std::vector<int> camera_major;  // old numbers in order of first use
  std::set<int> seen;
  for (const auto* list : {&l.residuals, &l.fixed_residuals})
    for (const BaResidual& x : *list)
      if (seen.insert(x.point).second) camera_major.push_back(x.point);
  std::stable_partition(camera_major.begin(), camera_major.end(), [&](int p) { return l.point_is_variable(p); });
  std::vector<int> renumber(l.points.size());
  std::vector<double*> points_by_use;
  for (int p : camera_major) {
    renumber[p] = static_cast<int>(points_by_use.size());
    points_by_use.push_back(l.points[p]);
  }
  l.points = points_by_use;
  for (auto* list : {&l.residuals, &l.fixed_residuals})
    for (BaResidual& x : *list) x.point = renumber[x.point];
  const ceres::CostFunction* first = all.front().cost;
  l.camera_size = first->parameter_block_sizes()[all.front().camera_first ? 0 : 1];
  l.residual_size = first->num_residuals();
  l.num_parameter_blocks = problem.NumParameterBlocks();
  l.num_parameters = problem.NumParameters();
  l.num_residuals = problem.NumResiduals();
  bool snavely = true;
  for (const BaResidual& x : l.residuals)
    snavely = snavely && typeid(*x.cost) == typeid(ceres_cuda::SnavelyReprojectionError) && x.camera_first &&
              x.loss == l.residuals.front().loss;
  l.snavely = snavely && recognise_builtin_loss(l.residuals.front().loss, &l.loss);
  if (l.snavely)
    for (const BaResidual& x : l.residuals) {
      const auto* cost = static_cast<const ceres_cuda::SnavelyReprojectionError*>(x.cost);
      l.observations.push_back(cost->observed_x());
      l.observations.push_back(cost->observed_y());
    }
  return l;
}

// The index, serially.
BaIndex reference_index(const BaLayout& l) {
  BaIndex x;
  x.residuals = static_cast<int>(l.residuals.size());
  x.cameras = l.variable_cameras;
  x.points = l.variable_points;
  x.camera_size = l.camera_size;
  x.residual_size = l.residual_size;
  for (const BaResidual& r : l.residuals) {
    x.camera_param.push_back(r.camera);
    x.point_param.push_back(r.point);
    x.camera_of.push_back(l.camera_is_variable(r.camera) ? r.camera : -1);
    x.point_of.push_back(l.point_is_variable(r.point) ? r.point : -1);
  }
  auto group = [&](const std::vector<int>& owner, int owners, std::vector<int>* start, std::vector<int>* members) {
    std::vector<std::vector<int>> lists(owners);
    for (int i = 0; i < x.residuals; ++i)
      if (owner[i] >= 0) lists[owner[i]].push_back(i);
    start->assign(1, 0);
    for (const auto& list : lists) {
      members->insert(members->end(), list.begin(), list.end());
      start->push_back(static_cast<int>(members->size()));
    }
  };
  group(x.camera_of, x.cameras, &x.camera_start, &x.camera_residuals);
  group(x.point_of, x.points, &x.point_start, &x.point_residuals);
  std::map<std::pair<int, int>, int> last;  // (camera, point) -> its latest residual
  for (int i = 0; i < x.residuals; ++i) {
    if (x.camera_of[i] < 0 || x.point_of[i] < 0) continue;
    const auto [it, first] = last.emplace(std::make_pair(x.camera_of[i], x.point_of[i]), i);
    if (!first) {
      if (x.pair_next.empty()) {
        x.pair_next.assign(x.residuals, -1);
        x.pair_repeat.assign(x.residuals, 0);
      }
      x.pair_next[it->second] = i;
      x.pair_repeat[i] = 1;
      it->second = i;
    }
  }
  return x;
}

void expect_same_residuals(const std::vector<BaResidual>& a, const std::vector<BaResidual>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(a[i].id, b[i].id);
    ASSERT_EQ(a[i].cost, b[i].cost);
    ASSERT_EQ(a[i].loss, b[i].loss);
    ASSERT_EQ(a[i].camera, b[i].camera);
    ASSERT_EQ(a[i].point, b[i].point);
    ASSERT_EQ(a[i].camera_first, b[i].camera_first);
  }
}

void expect_reference_analysis_once(ceres::Problem& problem, const ceres::Solver::Options& options, bool snavely,
                                    bool repeated_pairs) {
  BaLayout layout;
  ASSERT_EQ(analyze_problem(options, &problem, &layout), "");
  const BaLayout want = reference_layout(options, problem);
  EXPECT_EQ(layout.snavely, snavely);
  EXPECT_EQ(layout.camera_size, want.camera_size);
  EXPECT_EQ(layout.residual_size, want.residual_size);
  EXPECT_EQ(layout.cameras, want.cameras);
  EXPECT_EQ(layout.points, want.points);
  EXPECT_EQ(layout.variable_cameras, want.variable_cameras);
  EXPECT_EQ(layout.variable_points, want.variable_points);
  expect_same_residuals(layout.residuals, want.residuals);
  expect_same_residuals(layout.fixed_residuals, want.fixed_residuals);
  EXPECT_EQ(layout.num_parameter_blocks, want.num_parameter_blocks);
  EXPECT_EQ(layout.num_parameters, want.num_parameters);
  EXPECT_EQ(layout.num_residuals, want.num_residuals);
  EXPECT_EQ(layout.snavely, want.snavely);
  EXPECT_EQ(layout.loss.kind, want.loss.kind);
  EXPECT_EQ(layout.loss.a, want.loss.a);
  EXPECT_EQ(layout.observations, want.observations);

  const BaIndex index = make_index(layout), expected = reference_index(want);
  EXPECT_EQ(index.residuals, expected.residuals);
  EXPECT_EQ(index.cameras, expected.cameras);
  EXPECT_EQ(index.points, expected.points);
  EXPECT_EQ(index.camera_of, expected.camera_of);
  EXPECT_EQ(index.point_of, expected.point_of);
  EXPECT_EQ(index.camera_param, expected.camera_param);
  EXPECT_EQ(index.point_param, expected.point_param);
  EXPECT_EQ(index.camera_start, expected.camera_start);
  EXPECT_EQ(index.camera_residuals, expected.camera_residuals);
  EXPECT_EQ(index.point_start, expected.point_start);
  EXPECT_EQ(index.point_residuals, expected.point_residuals);
  EXPECT_EQ(index.pair_next, expected.pair_next);
  EXPECT_EQ(index.pair_repeat, expected.pair_repeat);
  EXPECT_EQ(!index.pair_next.empty(), repeated_pairs);
}

// Small problems run the set-up on few threads (set_up_threads.h): each is checked that way and on all
// threads.
void expect_reference_analysis(ceres::Problem& problem, const ceres::Solver::Options& options, bool snavely,
                               bool repeated_pairs) {
  const long saved = set_up_blocks_per_thread();
  for (const long per_thread : {saved, 0L}) {
    SCOPED_TRACE(per_thread == 0 ? "on all threads" : "small problems on few threads");
    set_up_blocks_per_thread() = per_thread;
    expect_reference_analysis_once(problem, options, snavely, repeated_pairs);
  }
  set_up_blocks_per_thread() = saved;
}

ceres_cuda::BALProblem synthetic(int cameras, int points, int per_point, unsigned seed) {
  ceres_cuda::SyntheticBalOptions o;
  o.num_cameras = cameras;
  o.num_points = points;
  o.observations_per_point = per_point;
  o.seed = seed;
  return ceres_cuda::make_synthetic_bal(o);
}

// A stand-in cost with the point first (the analysis never evaluates it).
struct PointFirstCost : ceres::SizedCostFunction<2, 3, 9> {
  bool Evaluate(double const* const*, double* residuals, double**) const override {
    residuals[0] = residuals[1] = 0.0;
    return true;
  }
};

// bal's observations in shuffled order (so first use is not point order), with the cameras k where
// constant_camera(k) and the points likewise constant.
template <class ConstantCamera, class ConstantPoint>
std::unique_ptr<ceres::Problem> shuffled_problem(ceres_cuda::BALProblem& bal, unsigned seed, ceres::LossFunction* loss,
                                                 ConstantCamera constant_camera, ConstantPoint constant_point) {
  auto problem = std::make_unique<ceres::Problem>();
  std::vector<int> order(bal.num_observations());
  for (int i = 0; i < bal.num_observations(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  for (const int i : order)
    problem->AddResidualBlock(
        ceres_cuda::SnavelyReprojectionError::Create(bal.observations()[2 * i], bal.observations()[2 * i + 1]), loss,
        bal.mutable_camera(bal.camera_index()[i]), bal.mutable_point(bal.point_index()[i]));
  for (int k = 0; k < bal.num_cameras(); ++k)
    if (constant_camera(k)) problem->SetParameterBlockConstant(bal.mutable_camera(k));
  for (int k = 0; k < bal.num_points(); ++k)
    if (constant_point(k)) problem->SetParameterBlockConstant(bal.mutable_point(k));
  return problem;
}

TEST(BaAnalysis, ShuffledResidualsWithConstantBlocksAndFixedResiduals) {
  ceres_cuda::BALProblem bal = synthetic(60, 4000, 5, 7);
  auto problem = shuffled_problem(bal, 1, nullptr, [](int k) { return k % 3 == 1; }, [](int k) { return k % 4 == 2; });
  expect_reference_analysis(*problem, ba_test::ba_options(), true, false);
}

TEST(BaAnalysis, RepeatedPairsAndASharedLoss) {
  ceres_cuda::BALProblem bal = ba_test::with_repeated_observations(synthetic(40, 3000, 4, 8));
  auto problem = shuffled_problem(bal, 2, new ceres::HuberLoss(2.0), [](int k) { return k == 5; }, [](int k) { return k % 9 == 0; });
  expect_reference_analysis(*problem, ba_test::ba_options(), true, true);
}

TEST(BaAnalysis, MixedLossesAndAnUnusedBlock) {
  ceres_cuda::BALProblem bal = synthetic(30, 2000, 4, 9);
  ceres::Problem problem;
  ceres::LossFunction* cauchy = new ceres::CauchyLoss(1.0);
  for (int i = 0; i < bal.num_observations(); ++i)
    problem.AddResidualBlock(ceres_cuda::SnavelyReprojectionError::Create(bal.observations()[2 * i], bal.observations()[2 * i + 1]),
                             i % 7 == 3 ? cauchy : nullptr, bal.mutable_camera(bal.camera_index()[i]),
                             bal.mutable_point(bal.point_index()[i]));
  double unused[5] = {};
  problem.AddParameterBlock(unused, 5);
  expect_reference_analysis(problem, ba_test::ba_options(), false, false);
}

TEST(BaAnalysis, PointFirstBlocksWithAndWithoutAnOrdering) {
  ceres_cuda::BALProblem bal = synthetic(25, 1500, 3, 10);
  ceres::Problem problem;
  for (int i = 0; i < bal.num_observations(); ++i) {
    double* camera = bal.mutable_camera(bal.camera_index()[i]);
    double* point = bal.mutable_point(bal.point_index()[i]);
    if (i % 5 == 0)
      problem.AddResidualBlock(new PointFirstCost, nullptr, point, camera);
    else
      problem.AddResidualBlock(ba_test::SnavelyFunctor::Create(1.0, 2.0), nullptr, camera, point);
  }
  problem.SetParameterBlockConstant(bal.mutable_camera(3));
  ceres::Solver::Options options = ba_test::ba_options();
  expect_reference_analysis(problem, options, false, false);
  auto ordering = std::make_shared<ceres::ParameterBlockOrdering>();
  for (int k = 0; k < bal.num_points(); ++k) ordering->AddElementToGroup(bal.mutable_point(k), 0);
  for (int k = 0; k < bal.num_cameras(); ++k) ordering->AddElementToGroup(bal.mutable_camera(k), 1);
  options.linear_solver_ordering = ordering;
  expect_reference_analysis(problem, options, false, false);
}

// Ceres' choice of e-blocks without an ordering, read serially as Ceres makes it: the variable blocks
// in program order (first use by the residuals, then slot), stably sorted by their number of distinct
// variable neighbours, each taken unless a neighbour was. Returns the cameras taken.
long cameras_ceres_takes(ceres::Problem& problem) {
  std::vector<ceres::ResidualBlockId> ids;
  problem.GetResidualBlocks(&ids);
  std::vector<double*> program;
  std::map<double*, std::set<double*>> neighbours;
  std::set<double*> cameras;
  for (const ceres::ResidualBlockId id : ids) {
    std::vector<double*> blocks;
    problem.GetParameterBlocksForResidualBlock(id, &blocks);
    cameras.insert(blocks[0]);  // SnavelyReprojectionError: camera, then point
    for (double* b : blocks)
      if (!problem.IsParameterBlockConstant(b) && neighbours.emplace(b, std::set<double*>()).second) program.push_back(b);
    if (!problem.IsParameterBlockConstant(blocks[0]) && !problem.IsParameterBlockConstant(blocks[1])) {
      neighbours[blocks[0]].insert(blocks[1]);
      neighbours[blocks[1]].insert(blocks[0]);
    }
  }
  std::stable_sort(program.begin(), program.end(),
                   [&](double* a, double* b) { return neighbours[a].size() < neighbours[b].size(); });
  std::set<double*> marked;
  long taken = 0;
  for (double* b : program) {
    if (marked.count(b)) continue;
    marked.insert(b);
    for (double* n : neighbours[b]) marked.insert(n);
    taken += cameras.count(b);
  }
  return taken;
}

TEST(BaAnalysis, KnowsWhenCeresWouldEliminateCameras) {
  // Few points seen by many cameras: a camera can have fewer neighbours than its points, and Ceres'
  // independent set then takes it; the index counts such cameras (at least one where Ceres takes any,
  // none where it takes only points), and counts none when the ordering names the points.
  int with_cameras = 0, without = 0;
  for (unsigned seed = 1; seed <= 24; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const int points = 4 + static_cast<int>(seed % 6) * 3;
    ceres_cuda::BALProblem bal = synthetic(8, points, 3 + static_cast<int>(seed % 5), seed);
    if (seed % 3 == 0) bal = ba_test::with_repeated_observations(bal);
    auto problem = shuffled_problem(bal, seed, nullptr, [&](int k) { return seed % 4 == 1 && k == 2; },
                                    [&](int k) { return seed % 4 == 2 && k == 1; });
    const long expected = cameras_ceres_takes(*problem);
    // The analysis and the index on one thread, then on all: the same count.
    long found[2];
    const long saved = set_up_blocks_per_thread();
    for (int all_threads = 0; all_threads < 2; ++all_threads) {
      if (all_threads) set_up_blocks_per_thread() = 0;
      BaLayout layout;
      ASSERT_EQ(analyze_problem(ba_test::ba_options(), problem.get(), &layout, true), "");
      found[all_threads] = make_index(layout).cameras_ceres_eliminates;
    }
    set_up_blocks_per_thread() = saved;
    EXPECT_EQ(found[1], found[0]);
    EXPECT_EQ(found[0] > 0, expected > 0) << found[0] << " " << expected;
    EXPECT_LE(found[0], expected);
    (expected > 0 ? with_cameras : without) += 1;

    ceres::Solver::Options ordered = ba_test::ba_options();
    ordered.linear_solver_ordering = std::make_shared<ceres::ParameterBlockOrdering>();
    for (int k = 0; k < bal.num_points(); ++k) ordered.linear_solver_ordering->AddElementToGroup(bal.mutable_point(k), 0);
    for (int k = 0; k < bal.num_cameras(); ++k)  // the cameras that see something
      if (problem->HasParameterBlock(bal.mutable_camera(k)))
        ordered.linear_solver_ordering->AddElementToGroup(bal.mutable_camera(k), 1);
    BaLayout layout;
    ASSERT_EQ(analyze_problem(ordered, problem.get(), &layout, true), "");
    EXPECT_TRUE(layout.point_position.empty());
    EXPECT_EQ(make_index(layout).cameras_ceres_eliminates, 0);
  }
  EXPECT_GT(with_cameras, 0);
  EXPECT_GT(without, 0);
}

// A stand-in cost on two 3-vectors (the analysis takes the second as the point).
struct ThreeThreeCost : ceres::SizedCostFunction<2, 3, 3> {
  bool Evaluate(double const* const*, double* residuals, double**) const override {
    residuals[0] = residuals[1] = 0.0;
    return true;
  }
};

TEST(BaAnalysis, SaysWhyAProblemDoesNotFit) {
  const ceres::Solver::Options options = ba_test::ba_options();
  auto reason = [&](ceres::Problem& problem) {  // the same on one thread and on all
    BaLayout layout;
    const long saved = set_up_blocks_per_thread();
    const std::string serial = analyze_problem(options, &problem, &layout);
    set_up_blocks_per_thread() = 0;
    const std::string parallel = analyze_problem(options, &problem, &layout);
    set_up_blocks_per_thread() = saved;
    EXPECT_EQ(serial, parallel);
    return parallel;
  };
  ceres_cuda::BALProblem bal = synthetic(20, 500, 3, 11);
  {
    ceres::Problem problem;
    bal.add_to(&problem);
    problem.SetParameterUpperBound(bal.mutable_point(77), 1, 5.0);
    EXPECT_EQ(reason(problem), "a point block has a manifold (local parameterization) or bounds");
  }
  {
    ceres::Problem problem;
    bal.add_to(&problem);
    problem.SetManifold(bal.mutable_camera(5), new ceres::SubsetManifold(9, {0}));
    problem.SetParameterLowerBound(bal.mutable_point(7), 0, -5.0);
    EXPECT_EQ(reason(problem), "a camera block has a manifold (local parameterization) or bounds");
  }
  {
    ceres::Problem problem;
    bal.add_to(&problem);
    for (int k = 0; k < bal.num_cameras(); ++k) problem.SetParameterBlockConstant(bal.mutable_camera(k));
    for (int k = 0; k < bal.num_points(); ++k) problem.SetParameterBlockConstant(bal.mutable_point(k));
    EXPECT_EQ(reason(problem), "every parameter block is constant");
  }
  {
    std::vector<double> values(3 * 50);
    ceres::Problem problem;
    for (int i = 0; i < 40; ++i) problem.AddResidualBlock(new ThreeThreeCost, nullptr, &values[3 * i], &values[3 * i + 3]);
    EXPECT_EQ(reason(problem), "a parameter block is used both as camera and as point");
  }
  {
    ceres::Problem problem;
    bal.add_to(&problem);
    double extra[3] = {};
    problem.AddResidualBlock(new ceres::AutoDiffCostFunction<ba_test::SnavelyFunctor, 3, 9, 3>(nullptr), nullptr,
                             bal.mutable_camera(0), extra);
    EXPECT_EQ(reason(problem), "residual blocks of different sizes");
  }
  {
    ceres::Problem problem;
    double a[9] = {}, b[3] = {}, c[3] = {};
    for (int i = 0; i < 100; ++i) problem.AddResidualBlock(new PointFirstCost, nullptr, b, a);
    problem.AddResidualBlock(new ThreeThreeCost, nullptr, b, c);  // its camera (b) has 3 values
    EXPECT_EQ(reason(problem), "camera blocks of different sizes");
  }
}

}  // namespace
