// The self pairs' grids (self_pair_table.h) change no answer: with and without them, the checks decide
// alike on random states of the Panda and of a small robot with prismatic and mimic joints, and on
// states bisected to within 1e-12 of a self contact; and they settle most of the Panda's lookups.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <vector>

#include "ompl_cuda/robot_checkers.h"
#include "panda_test_support.h"
#include "robot_check_data.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using ompl_cuda::detail::RobotCheckData;
using ompl_cuda::detail::RobotCheckView;
using ompl_cuda::detail::SelfPairTable;

// Whether the group's values are valid under the view (of data).
bool valid(const RobotCheckData& data, const RobotCheckView& v, const std::vector<double>& values) {
  ompl_cuda::detail::HostCheckScratch scratch;
  return ompl_cuda::detail::robot_state_valid(v, [&](int k) { return values[k]; }, scratch.fit(data));
}

// Random states, and states on both sides of a contact found by bisection between a valid and an
// invalid state (as the checks without grids see them), decided alike with and without the grids.
void expect_same_answers(const RobotCheckData& data, int states, int boundaries, unsigned seed) {
  const RobotCheckView with = data.view();
  const std::vector<SelfPairTable> none(data.self_pairs.size() / 2);
  RobotCheckView without = with;
  without.self_tables = none.data();
  without.num_gridded_pairs = 0;
  std::mt19937_64 rng(seed);
  auto random_state = [&] {
    std::vector<double> s(with.dimension);
    for (int k = 0; k < with.dimension; ++k) s[k] = std::uniform_real_distribution<double>(data.low[k], data.high[k])(rng);
    return s;
  };
  int disagreements = 0, found = 0;
  std::vector<double> last_valid;
  for (int i = 0; i < states; ++i) {
    std::vector<double> s = random_state();
    const bool answer = valid(data, without, s);
    disagreements += answer != valid(data, with, s);
    if (answer) {
      last_valid = s;
    } else if (!last_valid.empty() && found < boundaries) {
      std::vector<double> a = last_valid, b = s;
      for (int step = 0; step < 60; ++step) {
        std::vector<double> m(a.size());
        for (std::size_t k = 0; k < a.size(); ++k) m[k] = (a[k] + b[k]) / 2;
        (valid(data, without, m) ? a : b) = m;
      }
      disagreements += valid(data, without, a) != valid(data, with, a);
      disagreements += valid(data, without, b) != valid(data, with, b);
      ++found;
    }
  }
  EXPECT_EQ(disagreements, 0);
  EXPECT_EQ(found, boundaries) << "too few contacts met to bisect";
}

RobotCheckData panda_data() {
  const ompl_cuda::RobotCollisionModel& robot = panda_test::panda_spheres(0.015);
  const ompl_cuda::PlanningGroup group = robot.model().group("panda_arm");
  std::vector<double> low, high;
  for (int v : group.variables) {
    low.push_back(robot.model().lower_bound(v));
    high.push_back(robot.model().upper_bound(v));
  }
  return RobotCheckData(robot, ompl_cuda::Transform(), group.variables, robot.model().default_state(), low, high, true);
}

TEST(SelfPairTable, PandaGridsChangeNoAnswer) {
  REQUIRE_PANDA();
  expect_same_answers(panda_data(), 200000, 300, 7);
}

// The forearm (panda_link5) against the wrist (panda_link7) and the hand moves with joints 6 and 7
// only: those pairs get grids, and the grids settle most states; pairs across more than three joints
// (the shoulder's) get none.
TEST(SelfPairTable, PandaGridsSettleTheForearmAndHand) {
  REQUIRE_PANDA();
  const RobotCheckData data = panda_data();
  const ompl_cuda::RobotModel& model = panda_test::panda();
  const RobotCheckView v = data.view();
  const int forearm = model.link_index("panda_link5"), wrist = model.link_index("panda_link7"),
            hand = model.link_index("panda_hand"), shoulder = model.link_index("panda_link1");
  int gridded = 0;
  std::mt19937_64 rng(3);
  for (int q = 0; q < v.num_self_pairs; ++q) {
    const int a = data.self_pairs[2 * q], b = data.self_pairs[2 * q + 1];
    const SelfPairTable& t = v.self_tables[q];
    if ((a == forearm && (b == wrist || b == hand)) || (b == forearm && (a == wrist || a == hand))) {
      EXPECT_EQ(t.axes, 2) << a << " " << b;
      // The grid's axes are joints 6 and 7's values (the group's last two).
      for (int k = 0; k < t.axes; ++k) EXPECT_TRUE(t.variable[k] == data.group[5] || t.variable[k] == data.group[6]);
    }
    if (a == shoulder || b == shoulder) EXPECT_EQ(t.axes, -1) << a << " " << b;
    if (t.axes < 0) continue;
    ++gridded;
    int settled = 0;
    const int n = 20000;
    std::vector<double> full = data.held;
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < v.dimension; ++k)
        full[data.group[k]] = std::uniform_real_distribution<double>(data.low[k], data.high[k])(rng);
      settled += ompl_cuda::detail::self_pair_cell(t, v.self_table_bits, full.data()) != ompl_cuda::detail::kSelfPairEither;
    }
    // Three axes share fewer cells each (self_pair_table.cpp), so their grids settle fewer states.
    EXPECT_GT(settled, (t.axes == 3 ? 0.7 : 0.9) * n) << "pair " << a << " " << b << ", " << t.axes << " axes";
  }
  EXPECT_GE(gridded, 2);
}

// A base, a revolute joint, a prismatic one, and a joint mimicking the first (twice its value, plus an
// offset): every self pair moves with the two values, through each kind of joint.
const char* kSlider = R"(<robot name="slider">
  <link name="base"/><link name="turn"/><link name="slide"/><link name="tip"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="turn"/><axis xyz="0 0 1"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="j2" type="prismatic"><parent link="turn"/><child link="slide"/><origin xyz="0.1 0 0"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="0.4" effort="1" velocity="1"/></joint>
  <joint name="j3" type="revolute"><parent link="slide"/><child link="tip"/><origin xyz="0.05 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-9" upper="9" effort="1" velocity="1"/><mimic joint="j1" multiplier="-2" offset="0.3"/></joint>
</robot>
)";

TEST(SelfPairTable, PrismaticAndMimicJointsChangeNoAnswer) {
  const fs::path file = fs::temp_directory_path() / "ompl_cuda_self_pair_table_slider.urdf";
  std::ofstream(file) << kSlider;
  const ompl_cuda::RobotModel model = ompl_cuda::RobotModel::load(file.string());
  ASSERT_EQ(model.num_variables(), 2);
  std::vector<std::vector<ompl_cuda::Sphere>> spheres(4);
  spheres[model.link_index("base")] = {{{0.0, 0.0, 0.0}, 0.12}, {{0.0, 0.2, 0.0}, 0.05}};
  spheres[model.link_index("turn")] = {{{0.05, 0.0, 0.0}, 0.03}};
  spheres[model.link_index("slide")] = {{{0.0, 0.0, 0.0}, 0.04}, {{-0.1, 0.05, 0.0}, 0.03}};
  spheres[model.link_index("tip")] = {{{0.0, 0.0, -0.15}, 0.05}, {{0.0, 0.1, -0.3}, 0.06}, {{0.0, -0.2, 0.1}, 0.04}};
  const ompl_cuda::RobotCollisionModel robot(model, spheres);
  const RobotCheckData data(robot, ompl_cuda::Transform(), {0, 1}, {0.0, 0.0}, {-2.0, 0.0}, {2.0, 0.4}, true);
  ASSERT_FALSE(data.self_pairs.empty());
  for (const SelfPairTable& t : data.self_tables.tables) EXPECT_EQ(t.axes, 2);
  expect_same_answers(data, 200000, 300, 11);
}

// A chain whose spheres sit on their own joints' axes: a joint's value moves no sphere of its child,
// and that axis of a grid gets one cell while the others share the grid's cells (at most 2^20).
TEST(SelfPairTable, AxesThatMoveNothingKeepTheGridsSmall) {
  const fs::path file = fs::temp_directory_path() / "ompl_cuda_self_pair_table_chain.urdf";
  {
    std::ofstream urdf(file);
    urdf << "<robot name=\"chain\">\n<link name=\"l0\"/>\n";
    for (int k = 1; k < 8; ++k)
      urdf << "<link name=\"l" << k << "\"/><joint name=\"j" << k << "\" type=\"revolute\"><parent link=\"l" << k - 1
           << "\"/><child link=\"l" << k << "\"/><origin xyz=\"0.06 0 0\"/><axis xyz=\"0 0 1\"/>"
           << "<limit lower=\"-2.5\" upper=\"2.5\" effort=\"1\" velocity=\"1\"/></joint>\n";
    urdf << "</robot>\n";
  }
  const ompl_cuda::RobotModel model = ompl_cuda::RobotModel::load(file.string());
  std::vector<std::vector<ompl_cuda::Sphere>> spheres(model.links().size(), {{{0.0, 0.0, 0.0}, 0.025}});
  const ompl_cuda::RobotCollisionModel robot(model, spheres);
  const int n = model.num_variables();
  std::vector<int> group(n);
  for (int k = 0; k < n; ++k) group[k] = k;
  const RobotCheckData data(robot, ompl_cuda::Transform(), group, std::vector<double>(n, 0.0),
                            std::vector<double>(n, -2.5), std::vector<double>(n, 2.5), true);
  int gridded = 0;
  for (const SelfPairTable& t : data.self_tables.tables) {
    if (t.axes < 0) continue;
    ++gridded;
    EXPECT_LE(static_cast<long long>(t.cells[0]) * t.cells[1] * t.cells[2], 1 << 20);
    EXPECT_TRUE(t.cells[0] == 1 || t.cells[t.axes - 1] == 1) << "an axis that moves nothing has one cell";
  }
  EXPECT_GE(gridded, 5);
  expect_same_answers(data, 50000, 100, 13);
}

}  // namespace
