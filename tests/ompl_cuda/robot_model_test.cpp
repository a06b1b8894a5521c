// RobotModel on the shared Panda (URDF, SRDF, collision meshes): its tree, variables, limits, groups,
// named states and disabled pairs; its forward kinematics against KDL's (kdl_parser builds KDL's tree
// from the same URDF independently) on random states; and the errors on descriptions it cannot take.
#include <gtest/gtest.h>
#include <kdl/frames.hpp>
#include <kdl/treefksolverpos_recursive.hpp>
#include <kdl_parser/kdl_parser.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "linalg_cuda/errors.h"
#include "ompl_cuda/robot_model.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using ompl_cuda::RobotModel;

fs::path panda_dir() { return test_support::data_dir() / "robots" / "robowflex_resources" / "panda"; }
std::string panda_urdf() { return (panda_dir() / "urdf" / "panda.urdf").string(); }
std::string panda_srdf() { return (panda_dir() / "config" / "panda.srdf").string(); }
std::vector<std::string> package_path() { return {(test_support::data_dir() / "robots").string()}; }

#define REQUIRE_PANDA()                                                                     \
  if (!fs::exists(panda_urdf())) GTEST_SKIP() << panda_urdf() << " not found (set CUDA_SOLVERS_DATA)"

TEST(RobotModel, ReadsThePandaAsMoveItDoes) {
  REQUIRE_PANDA();
  const RobotModel panda = RobotModel::load(panda_urdf(), panda_srdf(), package_path());
  EXPECT_EQ(panda.name(), "panda");
  ASSERT_EQ(panda.links().size(), 12u);
  ASSERT_EQ(panda.joints().size(), 11u);
  EXPECT_EQ(panda.links()[0].name, "panda_link0");
  // Seven arm joints and the first finger; the second finger mimics the first.
  ASSERT_EQ(panda.num_variables(), 8);
  for (int v = 0; v < 7; ++v) EXPECT_EQ(panda.variable_name(v), "panda_joint" + std::to_string(v + 1));
  EXPECT_EQ(panda.variable_name(7), "panda_finger_joint1");
  EXPECT_DOUBLE_EQ(panda.lower_bound(3), -3.1416);
  EXPECT_DOUBLE_EQ(panda.upper_bound(3), 0.0873);
  const ompl_cuda::RobotJoint& mimic = panda.joints()[panda.joint_index("panda_finger_joint2")];
  EXPECT_EQ(mimic.variable, -1);
  EXPECT_EQ(mimic.mimic_of, panda.joint_index("panda_finger_joint1"));
  // Parents before children.
  for (const ompl_cuda::RobotJoint& j : panda.joints()) EXPECT_LT(j.parent_link, j.child_link) << j.name;
  // Every link but the hand's fixed frame has a collision mesh, found through the package path.
  int meshes = 0;
  for (const ompl_cuda::RobotLink& link : panda.links())
    for (const ompl_cuda::CollisionShape& shape : link.collision) {
      EXPECT_EQ(shape.kind, ompl_cuda::CollisionShape::Kind::Mesh);
      EXPECT_TRUE(fs::exists(shape.mesh_file)) << shape.mesh_file;
      ++meshes;
    }
  EXPECT_EQ(meshes, 11);

  const ompl_cuda::PlanningGroup arm = panda.group("panda_arm");
  EXPECT_EQ(arm.variables, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(panda.group("hand").variables, std::vector<int>{7});
  EXPECT_EQ(panda.group("panda_arm_hand").variables.size(), 8u);
  EXPECT_THROW(panda.group("left_arm"), linalg_cuda::InvalidArgument);
  const std::vector<double> ready = panda.named_state("panda_arm", "ready", panda.default_state());
  EXPECT_DOUBLE_EQ(ready[3], -2.356);
  EXPECT_DOUBLE_EQ(ready[7], 0.0);
  EXPECT_EQ(panda.disabled_collisions().size(), 34u);  // the SRDF's pairs, none repeated
  for (const auto& [a, b] : panda.disabled_collisions()) EXPECT_LT(a, b);
}

// The pose of every link by KDL, for the model's full state (mimic joints set as the model sets them).
std::vector<KDL::Frame> kdl_link_poses(const KDL::Tree& tree, const RobotModel& model, const std::vector<double>& state) {
  KDL::JntArray q(tree.getNrOfJoints());
  for (const auto& [name, element] : tree.getSegments()) {
    const KDL::Joint& joint = element.segment.getJoint();
    if (joint.getType() == KDL::Joint::None) continue;
    const ompl_cuda::RobotJoint& ours = model.joints()[model.joint_index(joint.getName())];
    const ompl_cuda::RobotJoint& source = ours.mimic_of >= 0 ? model.joints()[ours.mimic_of] : ours;
    const double value = state[source.variable];
    q(element.q_nr) = ours.mimic_of >= 0 ? ours.mimic_multiplier * value + ours.mimic_offset : value;
  }
  KDL::TreeFkSolverPos_recursive solver(tree);
  std::vector<KDL::Frame> poses;
  for (const ompl_cuda::RobotLink& link : model.links()) {
    KDL::Frame frame;
    EXPECT_GE(solver.JntToCart(q, frame, link.name), 0) << link.name;
    poses.push_back(frame);
  }
  return poses;
}

TEST(RobotModel, ForwardKinematicsMatchesKdl) {
  REQUIRE_PANDA();
  const RobotModel panda = RobotModel::load(panda_urdf(), "", package_path());
  KDL::Tree tree;
  ASSERT_TRUE(kdl_parser::treeFromFile(panda_urdf(), tree));
  std::mt19937 rng(3);
  std::vector<ompl_cuda::Transform> ours;
  double worst = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<double> state(panda.num_variables());
    for (int v = 0; v < panda.num_variables(); ++v)
      state[v] = std::uniform_real_distribution<double>(panda.lower_bound(v), panda.upper_bound(v))(rng);
    panda.link_poses(state.data(), &ours);
    const std::vector<KDL::Frame> expected = kdl_link_poses(tree, panda, state);
    ASSERT_EQ(ours.size(), expected.size());
    for (std::size_t l = 0; l < ours.size(); ++l)
      for (int i = 0; i < 3; ++i) {
        worst = std::max(worst, std::fabs(ours[l].translation[i] - expected[l].p(i)));
        for (int j = 0; j < 3; ++j) worst = std::max(worst, std::fabs(ours[l].rotation[3 * i + j] - expected[l].M(i, j)));
      }
  }
  EXPECT_LT(worst, 1e-12);
}

// A file in the test's temporary folder.
std::string write(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / "ompl_cuda_robot_model_test";
  fs::create_directories(dir);
  const fs::path file = dir / name;
  std::ofstream(file) << text;
  return file.string();
}

// The message of the ParseError that loading throws ("" when it throws none).
std::string load_error(const std::string& urdf, const std::string& srdf = "", std::vector<std::string> packages = {}) {
  try {
    RobotModel::load(urdf, srdf, packages);
  } catch (const linalg_cuda::ParseError& e) {
    return e.what();
  }
  return "";
}

const char* kTwoLinks = R"(<robot name="r">
  <link name="base"/>
  <link name="arm"><collision><geometry><box size="0.1 0.2 0.3"/></geometry></collision></link>
  <joint name="j" type="%s">
    <parent link="base"/><child link="arm"/>
    <axis xyz="0 0 2"/><limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
</robot>
)";

std::string two_links(const std::string& type) {
  char text[1024];
  std::snprintf(text, sizeof text, kTwoLinks, type.c_str());
  return text;
}

TEST(RobotModel, TakesEachJointTypeAndNormalisesTheAxis) {
  for (const char* type : {"revolute", "continuous", "prismatic", "fixed"}) {
    const RobotModel m = RobotModel::load(write(std::string(type) + ".urdf", two_links(type)));
    ASSERT_EQ(m.links().size(), 2u) << type;
    EXPECT_EQ(m.num_variables(), std::string(type) == "fixed" ? 0 : 1) << type;
    if (std::string(type) != "fixed") EXPECT_DOUBLE_EQ(m.joints()[0].axis[2], 1.0) << type;
    if (std::string(type) == "continuous") EXPECT_DOUBLE_EQ(m.upper_bound(0), M_PI);
    ASSERT_EQ(m.links()[1].collision.size(), 1u);
    EXPECT_EQ(m.links()[1].collision[0].kind, ompl_cuda::CollisionShape::Kind::Box);
    EXPECT_DOUBLE_EQ(m.links()[1].collision[0].size[2], 0.3);
  }
}

TEST(RobotModel, SaysWhatItCannotTake) {
  EXPECT_NE(load_error("/no/such/robot.urdf").find("cannot open the URDF: No such file"), std::string::npos);
  EXPECT_NE(load_error("/tmp").find("is a directory, not a URDF"), std::string::npos);
  const std::string broken = write("broken.urdf", "<robot name=\"r\">\n  <link name=\"a\">\n</robot>\n");
  EXPECT_NE(load_error(broken).find("broken.urdf:"), std::string::npos) << load_error(broken);
  EXPECT_NE(load_error(broken).find("not well-formed XML"), std::string::npos);
  const std::string floating = write("floating.urdf", two_links("floating"));
  EXPECT_NE(load_error(floating).find("floating.urdf:4: joint 'j' is floating"), std::string::npos) << load_error(floating);
  const std::string planar = write("planar.urdf", two_links("planar"));
  EXPECT_NE(load_error(planar).find("joint 'j' is planar"), std::string::npos) << load_error(planar);
  const std::string not_urdf = write("not_urdf.urdf", "<robot name=\"r\"><joint name=\"j\" type=\"revolute\"/></robot>");
  EXPECT_NE(load_error(not_urdf).find("not a valid URDF"), std::string::npos) << load_error(not_urdf);

  std::string mesh = two_links("revolute");
  mesh.replace(mesh.find("<box size=\"0.1 0.2 0.3\"/>"), 25, "<mesh filename=\"package://nowhere/arm.stl\"/>");
  const std::string missing_mesh = write("missing_mesh.urdf", mesh);
  const std::string error = load_error(missing_mesh, "", {"/tmp/no_packages_here"});
  EXPECT_NE(error.find("mesh 'package://nowhere/arm.stl' not found"), std::string::npos) << error;
  EXPECT_NE(error.find("/tmp/no_packages_here/nowhere/arm.stl"), std::string::npos) << error;

  const std::string urdf = write("good.urdf", two_links("revolute"));
  const std::string missing_joint = write("missing_joint.srdf", "<robot name=\"r\">\n<group name=\"g\">\n  <joint name=\"elbow\"/>\n</group>\n</robot>\n");
  EXPECT_NE(load_error(urdf, missing_joint).find("missing_joint.srdf:3: group 'g' names joint 'elbow', which the URDF does not have"),
            std::string::npos)
      << load_error(urdf, missing_joint);
  const std::string bad_chain = write("bad_chain.srdf", "<robot name=\"r\">\n<group name=\"g\"><chain base_link=\"arm\" tip_link=\"base\"/></group>\n</robot>\n");
  EXPECT_NE(load_error(urdf, bad_chain).find("is not an ancestor of"), std::string::npos) << load_error(urdf, bad_chain);
  const std::string loop = write("loop.srdf", "<robot name=\"r\">\n<group name=\"g\"><group name=\"h\"/></group>\n<group name=\"h\"><group name=\"g\"/></group>\n</robot>\n");
  EXPECT_NE(load_error(urdf, loop).find("contains itself"), std::string::npos) << load_error(urdf, loop);
}

// Inputs that its fuzzer (fuzz/ompl_cuda_urdf_fuzzer.cpp) found: each is refused with its line, and
// what a file holds is quoted short.
TEST(RobotModel, RefusesLoopsAndValuesBeyondItsBounds) {
  const std::string loop = write("loop.urdf",
                                 "<robot name=\"r\">\n<link name=\"root\"/>\n<link name=\"a\"/>\n<link name=\"b\"/>\n"
                                 "<joint name=\"ab\" type=\"fixed\"><parent link=\"a\"/><child link=\"b\"/></joint>\n"
                                 "<joint name=\"ba\" type=\"fixed\"><parent link=\"b\"/><child link=\"a\"/></joint>\n</robot>\n");
  EXPECT_NE(load_error(loop).find("loop.urdf:6: the joints close a loop through link 'a'"), std::string::npos) << load_error(loop);
  std::string text = two_links("prismatic");
  text.replace(text.find("</robot>"), 8,
               "<link name=\"c\"/><joint name=\"k\" type=\"fixed\"><parent link=\"base\"/><child link=\"arm\"/></joint>\n</robot>");
  const std::string two_parents = write("two_parents.urdf", text);
  EXPECT_NE(load_error(two_parents).find("link 'arm' is the child of joints 'j' and 'k'"), std::string::npos) << load_error(two_parents);

  auto with = [](const std::string& type, const std::string& from, const std::string& to) {
    std::string t = two_links(type);
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  // A revolute joint at 1e300 rad would give sin and cos of no meaning; a prismatic one at 1e308 m
  // link poses that overflow.
  const std::string angle = write("angle.urdf", with("revolute", "lower=\"-1\"", "lower=\"-1e300\""));
  EXPECT_NE(load_error(angle).find("angle.urdf:4: joint 'j' has limits beyond 100000 rad"), std::string::npos) << load_error(angle);
  const std::string length = write("length.urdf", with("prismatic", "upper=\"1\"", "upper=\"1e308\""));
  EXPECT_NE(load_error(length).find("joint 'j' has limits beyond 1000000 m"), std::string::npos) << load_error(length);
  const std::string origin = write("origin.urdf", with("fixed", "<axis", "<origin xyz=\"0 1e308 0\"/><axis"));
  EXPECT_NE(load_error(origin).find("joint 'j' has an origin that is not finite or beyond"), std::string::npos) << load_error(origin);
  const std::string mimic = write("mimic.urdf", with("revolute", "</robot>",
                                                     "<link name=\"c\"/><joint name=\"m\" type=\"revolute\"><parent link=\"arm\"/>"
                                                     "<child link=\"c\"/><limit lower=\"-1\" upper=\"1\" effort=\"1\" velocity=\"1\"/>"
                                                     "<mimic joint=\"j\" multiplier=\"1e300\"/></joint></robot>"));
  EXPECT_NE(load_error(mimic).find("joint 'm' mimics 'j' with values that are not finite or beyond 100000 rad"), std::string::npos)
      << load_error(mimic);
  const std::string scale = write("scale.urdf", with("fixed", "<box size=\"0.1 0.2 0.3\"/>", "<mesh filename=\"scale.urdf\" scale=\"1 1e9 1\"/>"));
  EXPECT_NE(load_error(scale).find("link 'arm': a mesh scale that is not finite or beyond"), std::string::npos) << load_error(scale);

  const std::string long_name = write("long_name.urdf", with("floating", "name=\"j\"", "name=\"" + std::string(2000, 'j') + "\""));
  const std::string error = load_error(long_name);
  EXPECT_NE(error.find("joint '" + std::string(80, 'j') + "...' is floating"), std::string::npos) << error;
  EXPECT_LT(error.size(), 300u);
}

// Quaternions are normalised whatever their scale, where the sum of squares leaves the range of double.
TEST(Transform, NormalisesQuaternionsOfAnyScale) {
  const double position[3] = {0, 0, 0};
  for (const double scale : {1.0, 1e200, 1e-200}) {
    const double q[4] = {scale, 0, 0, 0};  // half a turn about x
    const ompl_cuda::Transform t = ompl_cuda::transform_from(position, q);
    const double expected[9] = {1, 0, 0, 0, -1, 0, 0, 0, -1};
    for (int i = 0; i < 9; ++i) EXPECT_EQ(t.rotation[i], expected[i]) << scale << " " << i;
  }
}

TEST(RobotModel, ResolvesMeshesRelativeToTheUrdfAndThroughThePackagePath) {
  const fs::path dir = fs::temp_directory_path() / "ompl_cuda_robot_model_test" / "pkgs" / "my_robot";
  fs::create_directories(dir / "meshes");
  std::ofstream(dir / "meshes" / "arm.stl") << "solid arm\nendsolid arm\n";
  std::string text = two_links("revolute");
  text.replace(text.find("<box size=\"0.1 0.2 0.3\"/>"), 25, "<mesh filename=\"meshes/arm.stl\" scale=\"2 2 2\"/>");
  const std::string relative = (dir / "relative.urdf").string();
  std::ofstream(relative) << text;
  const RobotModel a = RobotModel::load(relative);
  EXPECT_EQ(fs::path(a.links()[1].collision[0].mesh_file), dir / "meshes" / "arm.stl");
  EXPECT_DOUBLE_EQ(a.links()[1].collision[0].mesh_scale[1], 2.0);
  text.replace(text.find("meshes/arm.stl"), 14, "package://my_robot/meshes/arm.stl");
  const std::string packaged = write("packaged.urdf", text);
  const RobotModel b = RobotModel::load(packaged, "", {dir.parent_path().string()});
  EXPECT_EQ(fs::path(b.links()[1].collision[0].mesh_file), dir / "meshes" / "arm.stl");
  const RobotModel c = RobotModel::load(packaged, "", {dir.string()});  // the package's own folder
  EXPECT_EQ(fs::path(c.links()[1].collision[0].mesh_file), dir / "meshes" / "arm.stl");
}

}  // namespace
