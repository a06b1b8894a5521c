// ChainValidityChecker and ChainMotionValidator: CPU against a brute-force reference, GPU against CPU,
// the motion validator against OMPL's DiscreteMotionValidator with our checker, and bad input.
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <ompl/base/DiscreteMotionValidator.h>
#include <ompl/base/spaces/SE2StateSpace.h>

#include "chain_test_support.h"
#include "linalg_cuda/errors.h"
#include "ompl_cuda/chain_motion_validator.h"
#include "ompl_cuda/chain_validity_checker.h"
#include "test_support.h"

namespace {

namespace ob = ompl::base;
using chain_test::free_states;
using chain_test::random_states;
using ompl_cuda::Backend;
using ompl_cuda::ChainMotionValidator;
using ompl_cuda::ChainValidityChecker;
using ompl_cuda::PlanarChain;
using ompl_cuda::Workspace2D;

// Independent reference: libm trigonometry, Liang-Barsky clipping, demo-style segment test by
// orientation signs; bounds as OMPL's RealVector/SO2 satisfiesBounds.
bool clip(double x0, double y0, double x1, double y1, const ompl_cuda::Rectangle& r) {
  double t0 = 0.0, t1 = 1.0;
  const double dx = x1 - x0, dy = y1 - y0;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {x0 - r.x_min, r.x_max - x0, y0 - r.y_min, r.y_max - y0};
  for (int k = 0; k < 4; ++k) {
    if (p[k] == 0.0) {
      if (q[k] < 0.0) return false;
    } else if (p[k] < 0.0) {
      t0 = std::max(t0, q[k] / p[k]);
    } else {
      t1 = std::min(t1, q[k] / p[k]);
    }
  }
  return t0 <= t1;
}

// Proper crossing of two segments by orientation signs (an independent test for the horn's walls).
bool crosses(double ax, double ay, double bx, double by, double cx, double cy, double dx, double dy) {
  auto orient = [](double px, double py, double qx, double qy, double rx, double ry) {
    return (qx - px) * (ry - py) - (qy - py) * (rx - px);
  };
  const double o1 = orient(ax, ay, bx, by, cx, cy), o2 = orient(ax, ay, bx, by, dx, dy);
  const double o3 = orient(cx, cy, dx, dy, ax, ay), o4 = orient(cx, cy, dx, dy, bx, by);
  return ((o1 > 0) != (o2 > 0)) && ((o3 > 0) != (o4 > 0));
}

bool brute_force_valid(const std::vector<double>& q, const PlanarChain& chain, const Workspace2D& w) {
  for (const double v : q)
    if (!(v >= -M_PI - 1e-15 && v <= M_PI + 1e-15)) return false;
  double angle = 0, x = chain.base_x, y = chain.base_y;
  for (int i = 0; i < chain.links(); ++i) {
    angle += q[i];
    const double xn = x + std::cos(angle) * chain.link_lengths[i], yn = y + std::sin(angle) * chain.link_lengths[i];
    for (const auto& r : w.rectangles)
      if (clip(x, y, xn, yn, r)) return false;
    for (const auto& s : w.segments)
      if (crosses(x, y, xn, yn, s.x0, s.y0, s.x1, s.y1)) return false;
    x = xn;
    y = yn;
  }
  return true;
}

std::vector<double> joints(const ob::SpaceInformationPtr&, const ob::State* s, int links) {
  std::vector<double> q(links);
  for (int j = 0; j < links; ++j) q[j] = chain_test::get_joint(s, j);
  return q;
}

void expect_matches_brute_force(const PlanarChain& chain, const Workspace2D& w) {
  const int links = chain.links();
  for (const auto& si : {chain_test::real_vector_space(links), chain_test::so2_space(links)}) {
    ChainValidityChecker checker(si, chain, w, Backend::Cpu);
    auto states = random_states(si, links, 100000, 1);
    int disagreements = 0, valid = 0;
    for (auto* s : states) {
      const bool ours = checker.isValid(s);
      valid += ours;
      disagreements += ours != brute_force_valid(joints(si, s, links), chain, w);
    }
    EXPECT_EQ(disagreements, 0);
    EXPECT_GT(valid, 1000);
    EXPECT_LT(valid, 99000);
    free_states(si, states);
  }
}

TEST(ChainValidityChecker, CpuMatchesBruteForceOnRandomStates) {
  expect_matches_brute_force(PlanarChain::uniform(9, 1.0), chain_test::four_rectangles());  // the paper's setting
  // Thousands of obstacles: 2000 small random boxes.
  expect_matches_brute_force(PlanarChain::uniform(9, 1.0),
                             ompl_cuda::random_boxes(2000, -9, -9, 9, 9, 0.05, 0.2, 1.5, 4));
  // The horn's segments (a 1-link-length chain among them, without self-collision).
  expect_matches_brute_force(PlanarChain::uniform(10, 0.1), ompl_cuda::horn_environment(10));
}

TEST(ChainValidityChecker, HornEnvironmentMatchesDemoSetUp) {
  const int links = 10;
  const PlanarChain chain = PlanarChain::uniform(links, 1.0 / links, true);
  const Workspace2D horn = ompl_cuda::horn_environment(links);
  EXPECT_EQ(horn.segments.size(), 2u * (links - 1));
  auto si = chain_test::real_vector_space(links);
  ChainValidityChecker checker(si, chain, horn, Backend::Cpu);
  // The demo's start and goal are valid.
  ob::ScopedState<> start(si), goal(si), straight(si);
  for (int j = 0; j < links; ++j) {
    start[j] = j == 0 ? 0.0 : M_PI / links;
    goal[j] = j == 0 ? M_PI - 0.001 : 0.0;
    straight[j] = 0.0;
  }
  EXPECT_TRUE(checker.isValid(start.get()));
  EXPECT_TRUE(checker.isValid(goal.get()));
  // A straight chain turned by every whole degree: ours against the independent crossing test.
  int blocked = 0;
  for (int degree = -180; degree < 180; ++degree) {
    straight[0] = degree * M_PI / 180.0;
    bool hit = false;
    for (const auto& s : horn.segments) hit = hit || crosses(0, 0, std::cos(straight[0]), std::sin(straight[0]), s.x0, s.y0, s.x1, s.y1);
    EXPECT_EQ(checker.isValid(straight.get()), !hit) << degree;
    blocked += hit;
  }
  EXPECT_GT(blocked, 10);
}

TEST(ChainValidityChecker, SelfCollisionOfNonAdjacentLinks) {
  const PlanarChain folded = PlanarChain::uniform(4, 1.0, true);
  auto si = chain_test::real_vector_space(4);
  ChainValidityChecker checker(si, folded, {}, Backend::Cpu);
  ob::ScopedState<> s(si);
  s[0] = 0.0;
  s[1] = 2.5;  // fold back across link 0
  s[2] = 2.5;
  s[3] = 0.0;
  EXPECT_FALSE(checker.isValid(s.get()));
  s[1] = 0.3;
  s[2] = 0.3;
  EXPECT_TRUE(checker.isValid(s.get()));
}

TEST(ChainValidityChecker, BadInputThrowsOrIsInvalid) {
  const PlanarChain chain = PlanarChain::uniform(3, 1.0);
  auto se2 = std::make_shared<ob::SpaceInformation>(std::make_shared<ob::SE2StateSpace>());
  EXPECT_THROW(ChainValidityChecker(se2, chain, {}, Backend::Cpu), linalg_cuda::InvalidArgument);
  EXPECT_THROW(ChainValidityChecker(chain_test::real_vector_space(4), chain, {}, Backend::Cpu),
               linalg_cuda::InvalidArgument);
  Workspace2D degenerate;
  degenerate.rectangles = {{1.0, 1.0, 1.0, 2.0}};
  EXPECT_THROW(ChainValidityChecker(chain_test::real_vector_space(3), chain, degenerate, Backend::Cpu),
               linalg_cuda::InvalidArgument);
  Workspace2D empty_rect;
  empty_rect.rectangles = {{1.0, 1.0, 0.5, 2.0}};
  EXPECT_THROW(ChainValidityChecker(chain_test::real_vector_space(3), chain, empty_rect, Backend::Cpu),
               linalg_cuda::InvalidArgument);
  auto unbounded = std::make_shared<ob::SpaceInformation>(std::make_shared<ob::RealVectorStateSpace>(3));  // bounds not set
  EXPECT_THROW(ChainValidityChecker(unbounded, chain, {}, Backend::Cpu), linalg_cuda::InvalidArgument);
  PlanarChain zero = chain;
  zero.link_lengths[1] = 0.0;
  EXPECT_THROW(ChainValidityChecker(chain_test::real_vector_space(3), zero, {}, Backend::Cpu),
               linalg_cuda::InvalidArgument);
  auto si = chain_test::so2_space(3);
  ChainValidityChecker checker(si, chain, {}, Backend::Cpu);
  ob::ScopedState<> s(si);
  s[0] = 0.1;
  s[1] = std::numeric_limits<double>::quiet_NaN();
  s[2] = 0.2;
  EXPECT_FALSE(checker.isValid(s.get()));
  s[1] = 3.5;  // outside SO2's [-pi, pi)
  EXPECT_FALSE(checker.isValid(s.get()));
}

// ---- motion validator vs OMPL's DiscreteMotionValidator + our checker ------------------------------

void expect_same_as_discrete_validator(const ob::SpaceInformationPtr& si, int links, const PlanarChain& chain,
                                       const Workspace2D& w, Backend backend, double spread) {
  si->setStateValidityChecker(std::make_shared<ChainValidityChecker>(si, chain, w, Backend::Cpu));
  si->setup();
  ob::DiscreteMotionValidator reference(si);
  ChainMotionValidator ours(si, chain, w, backend);
  auto starts = random_states(si, links, 3000, 7, spread);
  auto ends = random_states(si, links, 3000, 8, spread);
  ob::State* ref_last = si->allocState();
  ob::State* our_last = si->allocState();
  int invalid = 0;
  std::vector<std::pair<const ob::State*, const ob::State*>> motions;
  std::vector<char> expected;
  std::vector<double> expected_times;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    motions.emplace_back(starts[i], ends[i]);
    const bool ref_plain = reference.checkMotion(starts[i], ends[i]);
    EXPECT_EQ(ours.checkMotion(starts[i], ends[i]), ref_plain) << i;
    std::pair<ob::State*, double> ref_lv{ref_last, -7.0}, our_lv{our_last, -7.0};
    const bool ref = reference.checkMotion(starts[i], ends[i], ref_lv);
    const bool mine = ours.checkMotion(starts[i], ends[i], our_lv);
    ASSERT_EQ(mine, ref) << i;
    ASSERT_EQ(ref, ref_plain);
    expected.push_back(ref);
    expected_times.push_back(ref ? -7.0 : ref_lv.second);
    if (!ref) {
      ++invalid;
      EXPECT_EQ(our_lv.second, ref_lv.second) << i;
      EXPECT_TRUE(si->equalStates(our_last, ref_last)) << i;
    }
  }
  EXPECT_GT(invalid, 100);
  EXPECT_LT(invalid, 2990);
  std::vector<char> batch;
  std::vector<double> times(motions.size(), -7.0);
  ours.checkMotions(motions, batch, &times);
  EXPECT_EQ(batch, expected);
  EXPECT_EQ(times, expected_times);
  EXPECT_EQ(ours.getCheckedMotionCount(), 3 * starts.size());
  si->freeState(ref_last);
  si->freeState(our_last);
  free_states(si, starts);
  free_states(si, ends);
}

TEST(ChainMotionValidator, SameAsDiscreteMotionValidatorOnRealVectorCpu) {
  expect_same_as_discrete_validator(chain_test::real_vector_space(9), 9, PlanarChain::uniform(9, 1.0),
                                    chain_test::four_rectangles(), Backend::Cpu, 0.6);
}

TEST(ChainMotionValidator, SameAsDiscreteMotionValidatorOnSo2AcrossTheSeamCpu) {
  expect_same_as_discrete_validator(chain_test::so2_space(9), 9, PlanarChain::uniform(9, 1.0),
                                    chain_test::four_rectangles(), Backend::Cpu, M_PI);
}

TEST(ChainMotionValidator, SameAsDiscreteMotionValidatorOnTheHornCpu) {
  expect_same_as_discrete_validator(chain_test::real_vector_space(8), 8, PlanarChain::uniform(8, 1.0 / 8, true),
                                    ompl_cuda::horn_environment(8), Backend::Cpu, M_PI);
}

// The space OMPL's KinematicChain demo plans in (wrapping interpolate, its own distance and so its own
// segment counts), with the demo's horn and self-collision.
TEST(ChainMotionValidator, SameAsDiscreteMotionValidatorOnTheDemoSpaceCpu) {
  expect_same_as_discrete_validator(chain_test::kinematic_chain_space(8, 1.0 / 8), 8,
                                    PlanarChain::uniform(8, 1.0 / 8, true), ompl_cuda::horn_environment(8),
                                    Backend::Cpu, M_PI);
}

TEST(ChainMotionValidator, GpuSameAsDiscreteMotionValidator) {
  REQUIRE_CUDA_DEVICE();
  expect_same_as_discrete_validator(chain_test::real_vector_space(9), 9, PlanarChain::uniform(9, 1.0),
                                    chain_test::four_rectangles(), Backend::Cuda, 0.6);
  expect_same_as_discrete_validator(chain_test::so2_space(9), 9, PlanarChain::uniform(9, 1.0),
                                    chain_test::four_rectangles(), Backend::Cuda, M_PI);
  expect_same_as_discrete_validator(chain_test::real_vector_space(8), 8, PlanarChain::uniform(8, 1.0 / 8, true),
                                    ompl_cuda::horn_environment(8), Backend::Cuda, M_PI);
  expect_same_as_discrete_validator(chain_test::kinematic_chain_space(8, 1.0 / 8), 8,
                                    PlanarChain::uniform(8, 1.0 / 8, true), ompl_cuda::horn_environment(8),
                                    Backend::Cuda, M_PI);
}

TEST(ChainMotionValidator, CountsAreThreadSafe) {
  auto si = chain_test::real_vector_space(9);
  si->setStateValidityChecker(
      std::make_shared<ChainValidityChecker>(si, PlanarChain::uniform(9, 1.0), chain_test::four_rectangles(), Backend::Cpu));
  si->setup();
  ChainMotionValidator validator(si, PlanarChain::uniform(9, 1.0), chain_test::four_rectangles(), Backend::Cpu);
  auto a = random_states(si, 9, 200, 1, 0.5), b = random_states(si, 9, 200, 2, 0.5);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (std::size_t i = 0; i < a.size(); ++i) validator.checkMotion(a[i], b[i]);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(validator.getCheckedMotionCount(), 4 * a.size());
  free_states(si, a);
  free_states(si, b);
}

// ---- GPU against CPU, many states and motions, grazing ones included -------------------------------

// States whose link end points lie exactly on rectangle edges: rectangles are built from the joint
// positions of random states (exact double coordinates), then those states and 1-ulp neighbours are
// checked, where any rounding difference between CPU and GPU would flip the decision. With fewer than
// 64 rectangles the GPU's single-precision pre-check is on (no grid), with 64 the grid is.
Workspace2D grazing_workspace(const ob::SpaceInformationPtr& si, const std::vector<ob::State*>& states, int links,
                              const PlanarChain& chain, std::size_t rectangles = 64) {
  Workspace2D w;
  for (std::size_t k = 0; k < states.size() && w.rectangles.size() < rectangles; k += 97) {
    const std::vector<double> q = joints(si, states[k], links);
    double angle = 0, x = 0, y = 0;
    for (int i = 0; i < links; ++i) {
      angle += q[i];
      x += std::cos(angle) * chain.link_lengths[i];
      y += std::sin(angle) * chain.link_lengths[i];
    }
    w.rectangles.push_back({x, y, x + 0.5, y + 0.5});
  }
  return w;
}

TEST(ChainValidityChecker, GpuIdenticalToCpuOnAMillionStates) {
  REQUIRE_CUDA_DEVICE();
  const int links = 9;
  for (const auto& si : {chain_test::real_vector_space(links), chain_test::so2_space(links)}) {
    auto states = random_states(si, links, 1000000, 11);
    for (const bool self_collision : {true, false}) {  // false: the GPU pre-check serves the rectangles
      const PlanarChain chain = PlanarChain::uniform(links, 1.0, self_collision);
      for (const Workspace2D& w : {chain_test::four_rectangles(), grazing_workspace(si, states, links, chain),
                                   grazing_workspace(si, states, links, chain, 40)}) {
        ChainValidityChecker gpu(si, chain, w, Backend::Cuda), cpu(si, chain, w, Backend::Cpu);
        std::vector<const ob::State*> batch(states.begin(), states.end());
        std::vector<char> gpu_valid, cpu_valid;
        gpu.isValid(batch, gpu_valid);
        cpu.isValid(batch, cpu_valid);
        ASSERT_EQ(gpu_valid.size(), states.size());
        std::size_t differing = 0;
        for (std::size_t i = 0; i < states.size(); ++i) differing += gpu_valid[i] != cpu_valid[i];
        EXPECT_EQ(differing, 0u);
        for (std::size_t i = 0; i < states.size(); i += 9973) EXPECT_EQ(cpu_valid[i], cpu.isValid(states[i]));
      }
    }
    free_states(si, states);
  }
}

TEST(ChainMotionValidator, GpuIdenticalToCpuOnManyMotions) {
  REQUIRE_CUDA_DEVICE();
  const int links = 9;
  for (const auto& si : {chain_test::real_vector_space(links), chain_test::so2_space(links)}) {
    const PlanarChain chain = PlanarChain::uniform(links, 1.0);
    si->setStateValidityChecker(std::make_shared<ChainValidityChecker>(si, chain, chain_test::four_rectangles(), Backend::Cpu));
    si->setup();
    auto a = random_states(si, links, 100000, 21, M_PI), b = random_states(si, links, 100000, 22, M_PI);
    std::vector<std::pair<const ob::State*, const ob::State*>> motions;
    for (std::size_t i = 0; i < a.size(); ++i) motions.emplace_back(a[i], b[i]);
    ChainMotionValidator gpu(si, chain, chain_test::four_rectangles(), Backend::Cuda);
    ChainMotionValidator cpu(si, chain, chain_test::four_rectangles(), Backend::Cpu);
    std::vector<char> gv, cv;
    std::vector<double> gt, ct;
    gpu.checkMotions(motions, gv, &gt);
    cpu.checkMotions(motions, cv, &ct);
    EXPECT_EQ(gv, cv);
    EXPECT_EQ(gt, ct);
    free_states(si, a);
    free_states(si, b);
  }
}

// Motions that end on a grazing state (and pass close by it on the way), where the pre-check is unsure
// and the exact check decides: the same first invalid state as the CPU, for every motion.
TEST(ChainMotionValidator, GpuIdenticalToCpuOnGrazingMotions) {
  REQUIRE_CUDA_DEVICE();
  const int links = 9;
  for (const auto& si : {chain_test::real_vector_space(links), chain_test::so2_space(links)}) {
    const PlanarChain chain = PlanarChain::uniform(links, 1.0);
    auto ends = random_states(si, links, 200000, 23, M_PI);
    const Workspace2D w = grazing_workspace(si, ends, links, chain, 40);
    si->setStateValidityChecker(std::make_shared<ChainValidityChecker>(si, chain, w, Backend::Cpu));
    si->setup();
    // Starts near the ends (within 0.3 per joint): short motions, many of them valid.
    auto starts = random_states(si, links, ends.size(), 24, 0.3);
    for (std::size_t i = 0; i < ends.size(); ++i)
      for (int j = 0; j < links; ++j) {
        const double v = chain_test::get_joint(ends[i], j) + chain_test::get_joint(starts[i], j);
        chain_test::set_joint(si, starts[i], j, std::max(-M_PI, std::min(v, std::nextafter(M_PI, 0.0))));
      }
    std::vector<std::pair<const ob::State*, const ob::State*>> motions;
    for (std::size_t i = 0; i < ends.size(); ++i) motions.emplace_back(starts[i], ends[i]);
    ChainMotionValidator gpu(si, chain, w, Backend::Cuda), cpu(si, chain, w, Backend::Cpu);
    std::vector<char> gv, cv;
    std::vector<double> gt, ct;
    gpu.checkMotions(motions, gv, &gt);
    cpu.checkMotions(motions, cv, &ct);
    EXPECT_EQ(gv, cv);
    EXPECT_EQ(gt, ct);
    const auto valid = std::count(cv.begin(), cv.end(), 1);
    EXPECT_GT(valid, 1000);
    EXPECT_LT(valid, 199000);
    free_states(si, starts);
    free_states(si, ends);
  }
}

}  // namespace

namespace {

TEST(ChainValidityChecker, GpuIdenticalToCpuWithThousandsOfObstacles) {
  REQUIRE_CUDA_DEVICE();
  const int links = 9;
  auto si = chain_test::real_vector_space(links);
  const PlanarChain chain = PlanarChain::uniform(links, 1.0);
  const Workspace2D boxes = ompl_cuda::random_boxes(3000, -30, -30, 30, 30, 0.05, 0.2, 1.5, 9);
  ChainValidityChecker gpu(si, chain, boxes, Backend::Cuda), cpu(si, chain, boxes, Backend::Cpu);
  auto states = random_states(si, links, 100000, 31, 0.8);
  std::vector<const ob::State*> batch(states.begin(), states.end());
  std::vector<char> gv, cv;
  gpu.isValid(batch, gv);
  cpu.isValid(batch, cv);
  EXPECT_EQ(gv, cv);
  const auto valid = std::count(cv.begin(), cv.end(), 1);
  EXPECT_GT(valid, 100);
  EXPECT_LT(valid, 99900);
  free_states(si, states);
}

}  // namespace
