#pragma once
// The shared Panda (URDF, SRDF, meshes) and MotionBenchMaker's Panda problems for the robot tests,
// each loaded or covered once per process. Without the data the tests skip and say so.
#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "ompl_cuda/robot_collision_model.h"
#include "test_support.h"

namespace panda_test {

inline std::filesystem::path panda_dir() {
  return test_support::data_dir() / "robots" / "robowflex_resources" / "panda";
}

#define REQUIRE_PANDA()                                    \
  if (!std::filesystem::exists(panda_test::panda_dir()))   \
  GTEST_SKIP() << panda_test::panda_dir() << " not found (set CUDA_SOLVERS_DATA)"

inline const ompl_cuda::RobotModel& panda() {
  static const ompl_cuda::RobotModel model = ompl_cuda::RobotModel::load(
      (panda_dir() / "urdf" / "panda.urdf").string(), (panda_dir() / "config" / "panda.srdf").string(),
      {(test_support::data_dir() / "robots").string()});
  return model;
}

// The Panda with its spheres covering the meshes at `tolerance` metres.
inline const ompl_cuda::RobotCollisionModel& panda_spheres(double tolerance) {
  static std::mutex mutex;
  static std::map<double, ompl_cuda::RobotCollisionModel> covered;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = covered.find(tolerance);
  if (it == covered.end())
    it = covered.emplace(tolerance, ompl_cuda::RobotCollisionModel(panda(), ompl_cuda::cover_with_spheres(panda(), {tolerance}))).first;
  return it->second;
}

// Every <scene>_panda.problem.yaml of the shared scenes, in name order.
inline std::vector<std::filesystem::path> problem_files() {
  const std::string suffix = "_panda.problem.yaml";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(test_support::data_dir() / "scenes")) {
    const std::string name = entry.path().filename().string();
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace panda_test
