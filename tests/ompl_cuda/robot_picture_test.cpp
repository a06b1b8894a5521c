// write_robot_png: the Panda moving in MotionBenchMaker's box scene, rendered and read back with
// libpng: the size, the robot's start (green) and goal (blue) colours, the scene's colours and the
// tip's orange line are there; a path that goes elsewhere gives another picture, the same path the
// same bytes; bad input is refused.
#include <gtest/gtest.h>
#include <png.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <filesystem>
#include <string>
#include <vector>

#include "linalg_cuda/errors.h"
#include "ompl_cuda/robot_picture.h"
#include "panda_test_support.h"

namespace {

namespace fs = std::filesystem;

struct Image {
  int width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
};

Image read_png(const fs::path& file) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  Image out;
  if (!png_image_begin_read_from_file(&image, file.c_str())) {
    ADD_FAILURE() << file << ": " << image.message;
    return out;
  }
  image.format = PNG_FORMAT_RGB;
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  out.rgb.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.rgb.data(), 0, nullptr)) ADD_FAILURE() << file << ": " << image.message;
  return out;
}

// Pixels whose colour passes `test` (r, g, b in 0 .. 255).
template <typename Test>
int count(const Image& image, Test test) {
  int n = 0;
  for (std::size_t p = 0; p + 2 < image.rgb.size(); p += 3) n += test(image.rgb[p], image.rgb[p + 1], image.rgb[p + 2]) ? 1 : 0;
  return n;
}
bool greenish(int r, int g, int b) { return g > 60 && g > r * 1.6 && g > b * 1.4; }
bool blueish(int r, int g, int b) { return b > 80 && b > r * 1.8 && b > g * 1.3; }
bool orange(int r, int g, int b) { return r > 200 && g > 80 && g < 170 && b < 70; }
bool scene_tan(int r, int g, int b) { return r > 100 && r > b + 25 && b > r * 0.45 && g > b; }  // the scene's warm colours

struct BoxScene {
  ompl_cuda::Scene scene;
  ompl_cuda::Transform base;
};

const BoxScene& box_scene() {
  static const BoxScene box = [] {
    const ompl_cuda::MotionBenchMakerProblem problem =
        ompl_cuda::read_motion_bench_maker_problem((test_support::data_dir() / "scenes" / "box_panda.problem.yaml").string());
    return BoxScene{ompl_cuda::Scene::load(problem.scene_file), problem.base};
  }();
  return box;
}

// From the ready state, joints 1 and 2 (0-based 0 and 1) turned by the given angles, in 40 steps.
std::vector<std::vector<double>> path(double joint0, double joint1) {
  const ompl_cuda::RobotModel& panda = panda_test::panda();
  const std::vector<double> ready = panda.named_state("panda_arm", "ready", panda.default_state());
  std::vector<std::vector<double>> states;
  for (int k = 0; k <= 40; ++k) {
    std::vector<double> s = ready;
    s[0] += joint0 * k / 40;
    s[1] += joint1 * k / 40;
    states.push_back(s);
  }
  return states;
}

fs::path temp_file(const std::string& name) { return fs::temp_directory_path() / ("ompl_cuda_robot_picture_" + name + ".png"); }

std::vector<char> bytes(const fs::path& file) {
  std::vector<char> out(fs::file_size(file));
  std::FILE* f = std::fopen(file.c_str(), "rb");
  EXPECT_EQ(std::fread(out.data(), 1, out.size(), f), out.size());
  std::fclose(f);
  return out;
}

TEST(RobotPicture, ShowsTheSceneTheStartTheGoalAndTheTipsLine) {
  REQUIRE_PANDA();
  const fs::path file = temp_file("box");
  ompl_cuda::RobotPictureOptions options;
  options.title = "Panda in the box";
  options.elevation_deg = 80;  // from above, where the hand's arc about the first joint lies in the open
  ompl_cuda::write_robot_png(file.string(), panda_test::panda_spheres(0.03), box_scene().scene, box_scene().base,
                             path(2.5, 0), options);
  const Image image = read_png(file);
  EXPECT_EQ(image.width, 960);
  EXPECT_EQ(image.height, 720);
  EXPECT_GT(count(image, greenish), 2000);
  EXPECT_GT(count(image, blueish), 2000);
  EXPECT_GT(count(image, orange), 200);
  EXPECT_GT(count(image, scene_tan), 5000);
  if (HasFailure()) std::cout << "the picture is kept for a look: " << file << "\n";
  else fs::remove(file);
}

TEST(RobotPicture, TheSceneAloneHasNoRobot) {
  REQUIRE_PANDA();
  const fs::path file = temp_file("scene");
  ompl_cuda::RobotPictureOptions options;
  options.width = 320;
  options.height = 200;
  ompl_cuda::write_robot_png(file.string(), panda_test::panda_spheres(0.03), box_scene().scene, box_scene().base, {}, options);
  const Image image = read_png(file);
  EXPECT_EQ(image.width, 320);
  EXPECT_EQ(image.height, 200);
  EXPECT_EQ(count(image, greenish), 0);
  EXPECT_EQ(count(image, blueish), 0);
  EXPECT_GT(count(image, scene_tan), 1000);
  fs::remove(file);
}

TEST(RobotPicture, AnotherPathGivesAnotherPictureAndTheSamePathTheSameBytes) {
  REQUIRE_PANDA();
  const ompl_cuda::RobotCollisionModel& robot = panda_test::panda_spheres(0.03);
  ompl_cuda::RobotPictureOptions options;
  options.width = 480;
  options.height = 360;
  const fs::path a = temp_file("a"), again = temp_file("again"), b = temp_file("b");
  ompl_cuda::write_robot_png(a.string(), robot, box_scene().scene, box_scene().base, path(1.2, 0.3), options);
  ompl_cuda::write_robot_png(again.string(), robot, box_scene().scene, box_scene().base, path(1.2, 0.3), options);
  ompl_cuda::write_robot_png(b.string(), robot, box_scene().scene, box_scene().base, path(-1.2, -0.3), options);
  EXPECT_EQ(bytes(a), bytes(again));
  const Image image_a = read_png(a), image_b = read_png(b);
  ASSERT_EQ(image_a.rgb.size(), image_b.rgb.size());
  int changed = 0;
  for (std::size_t p = 0; p < image_a.rgb.size(); p += 3)
    changed += image_a.rgb[p] != image_b.rgb[p] || image_a.rgb[p + 1] != image_b.rgb[p + 1] || image_a.rgb[p + 2] != image_b.rgb[p + 2];
  EXPECT_GT(changed, 480 * 360 / 20);
  // The goal moved: its blue is elsewhere.
  int blue_a_only = 0;
  for (std::size_t p = 0; p < image_a.rgb.size(); p += 3)
    blue_a_only += blueish(image_a.rgb[p], image_a.rgb[p + 1], image_a.rgb[p + 2]) &&
                   !blueish(image_b.rgb[p], image_b.rgb[p + 1], image_b.rgb[p + 2]);
  EXPECT_GT(blue_a_only, 200);
  for (const fs::path& file : {a, again, b}) fs::remove(file);
}

TEST(RobotPicture, RefusesBadInput) {
  REQUIRE_PANDA();
  const ompl_cuda::RobotCollisionModel& robot = panda_test::panda_spheres(0.03);
  const ompl_cuda::Scene& scene = box_scene().scene;
  const ompl_cuda::Transform& base = box_scene().base;
  const std::string file = temp_file("bad").string();
  EXPECT_THROW(ompl_cuda::write_robot_png(file, robot, scene, base, {{0.0, 1.0}}), linalg_cuda::InvalidArgument);
  std::vector<std::vector<double>> not_finite = path(1, 0);
  not_finite[7][2] = std::nan("");
  EXPECT_THROW(ompl_cuda::write_robot_png(file, robot, scene, base, not_finite), linalg_cuda::InvalidArgument);
  ompl_cuda::RobotPictureOptions options;
  options.width = 0;
  EXPECT_THROW(ompl_cuda::write_robot_png(file, robot, scene, base, path(1, 0), options), linalg_cuda::InvalidArgument);
  options = {};
  options.supersampling = 9;
  EXPECT_THROW(ompl_cuda::write_robot_png(file, robot, scene, base, path(1, 0), options), linalg_cuda::InvalidArgument);
  options = {};
  options.tip_link = "no_such_link";
  EXPECT_THROW(ompl_cuda::write_robot_png(file, robot, scene, base, path(1, 0), options), linalg_cuda::InvalidArgument);
  try {
    ompl_cuda::write_robot_png("/no/such/folder/picture.png", robot, scene, base, path(1, 0));
    ADD_FAILURE() << "no error for a file that cannot be written";
  } catch (const linalg_cuda::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/no/such/folder/picture.png"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(file));
}

}  // namespace
