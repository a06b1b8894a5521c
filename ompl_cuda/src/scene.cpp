// Scene (scene.h): its objects, and MoveIt's PlanningScene YAML read with yaml-cpp.
#include "ompl_cuda/scene.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>

#include "linalg_cuda/errors.h"

namespace ompl_cuda {

using linalg_cuda::InvalidArgument;
using linalg_cuda::ParseError;

namespace {

// Every change of any scene gets a number of its own, so that no two different contents share a
// version (a scene assigned over another one included).
std::uint64_t next_scene_version() {
  static std::atomic<std::uint64_t> counter{0};
  return ++counter;
}

constexpr std::uintmax_t kMaxSceneFileBytes = 64u << 20;  // scene files are kilobytes: a bound, not a limit in use

// Reads a MoveIt PlanningScene or a MotionBenchMaker problem; `file` names the errors, lines counted from 1.
class SceneReader {
 public:
  explicit SceneReader(std::string file) : file_(std::move(file)) {}

  MotionBenchMakerProblem read_problem() {
    const YAML::Node root = load();
    MotionBenchMakerProblem problem;
    if (!root["planning_group"]) throw ParseError(file_, 1, "no planning_group");
    problem.group = root["planning_group"].as<std::string>();
    // MotionBenchMaker moves the scene's objects by base_offset into the robot's frame (its
    // scene_sampler and generate programs): the robot's pose in the scene frame is the inverse.
    if (root["base_offset"]) problem.base = inverse(pose(root["base_offset"], "base_offset"));
    // MotionBenchMaker names its scene inside its package (configs/scenes/DIR/FILE); the scenes lie
    // beside the problem files as scenes/DIR/FILE do in MotionBenchMaker's layout and the shared data.
    if (root["scene"]) {
      const std::string name = root["scene"].as<std::string>(), marker = "configs/scenes/";
      const std::size_t at = name.find(marker);
      const std::filesystem::path folder = std::filesystem::path(file_).parent_path();
      problem.scene_file = (at == std::string::npos ? folder / name : folder / name.substr(at + marker.size())).string();
    }
    return problem;
  }

  Scene read() {
    const YAML::Node root = load();
    Scene scene;
    const YAML::Node world = root["world"];
    if (!world) throw ParseError(file_, 1, "no 'world' (a MoveIt PlanningScene holds its objects in world.collision_objects)");
    const YAML::Node objects = world["collision_objects"];
    if (!objects) return scene;
    if (!objects.IsSequence()) fail(objects, "world.collision_objects is not a list");
    for (const YAML::Node& object : objects) scene.add(read_object(object));
    return scene;
  }

 private:
  YAML::Node load() const {
    std::error_code error;
    const std::uintmax_t bytes = std::filesystem::file_size(file_, error);
    if (error) throw ParseError(file_, 0, "cannot read the file: " + error.message());
    if (bytes > kMaxSceneFileBytes)
      throw ParseError(file_, 0, "the file has " + std::to_string(bytes) + " bytes, more than the " +
                                     std::to_string(kMaxSceneFileBytes) + " a scene or problem may have");
    try {
      return YAML::LoadFile(file_);
    } catch (const YAML::Exception& e) {
      throw ParseError(file_, e.mark.line + 1, "not YAML: " + e.msg);
    }
  }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& message) const {
    throw ParseError(file_, at.Mark().is_null() ? 0 : at.Mark().line + 1, message);
  }

  std::vector<double> numbers(const YAML::Node& node, std::size_t count, const std::string& what) const {
    if (!node || !node.IsSequence() || node.size() != count)
      fail(node ? node : YAML::Node(), what + " needs " + std::to_string(count) + " numbers");
    std::vector<double> out;
    for (const YAML::Node& v : node) {
      double x = 0;
      try {
        x = v.as<double>();
      } catch (const YAML::Exception&) {
        fail(v, what + ": '" + v.Scalar() + "' is not a number");
      }
      if (!std::isfinite(x)) fail(v, what + " is not finite");
      out.push_back(x);
    }
    return out;
  }

  Transform pose(const YAML::Node& node, const std::string& what) const {
    if (!node || !node.IsMap()) fail(node, what + " is not a pose (position, orientation)");
    const std::vector<double> p = numbers(node["position"], 3, what + ".position");
    const YAML::Node o = node["orientation"];
    const std::vector<double> q = o ? numbers(o, 4, what + ".orientation [x y z w]") : std::vector<double>{0, 0, 0, 1};
    if (std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]) < 1e-9)
      fail(o, what + ".orientation is a zero quaternion");
    return transform_from(p.data(), q.data());
  }

  SceneObject read_object(const YAML::Node& node) const {
    if (!node.IsMap()) fail(node, "a collision object is not a map");
    SceneObject object;
    if (!node["id"]) fail(node, "a collision object has no id");
    object.id = node["id"].as<std::string>();
    object.id.erase(object.id.find_last_not_of(" \t") + 1);
    for (const char* unsupported : {"meshes", "planes"})
      if (node[unsupported] && node[unsupported].size() > 0)
        fail(node[unsupported], "object '" + object.id + "' has " + unsupported + ": ompl_cuda's scenes take primitives (box, cylinder, sphere)");
    const Transform object_pose = node["pose"] ? pose(node["pose"], "object '" + object.id + "' pose") : Transform();
    const YAML::Node primitives = node["primitives"], poses = node["primitive_poses"];
    if (!primitives || !primitives.IsSequence()) fail(node, "object '" + object.id + "' has no primitives list");
    if (!poses || !poses.IsSequence() || poses.size() != primitives.size())
      fail(node, "object '" + object.id + "' needs one primitive_poses entry per primitive");
    for (std::size_t k = 0; k < primitives.size(); ++k) {
      const YAML::Node p = primitives[k];
      const std::string type = p["type"] ? p["type"].as<std::string>() : "";
      const std::string what = "object '" + object.id + "' " + (type.empty() ? "primitive" : type);
      Primitive prim;
      if (type == "box") {
        const std::vector<double> d = numbers(p["dimensions"], 3, what + " dimensions [x y z]");
        prim.kind = Primitive::Kind::Box;
        std::copy(d.begin(), d.end(), prim.size);
      } else if (type == "cylinder") {
        const std::vector<double> d = numbers(p["dimensions"], 2, what + " dimensions [height radius]");
        prim.kind = Primitive::Kind::Cylinder;
        prim.size[0] = d[1], prim.size[1] = d[0];
      } else if (type == "sphere") {
        const std::vector<double> d = numbers(p["dimensions"], 1, what + " dimensions [radius]");
        prim.kind = Primitive::Kind::Sphere;
        prim.size[0] = d[0];
      } else {
        fail(p, what + ": type '" + type + "' is not taken (box, cylinder, sphere)");
      }
      for (const double v : prim.size)
        if (v < 0) fail(p, what + " has a negative dimension");
      prim.pose = compose(object_pose, pose(poses[k], what + " pose"));
      object.primitives.push_back(prim);
    }
    return object;
  }

  std::string file_;
};

}  // namespace

Scene Scene::load(const std::string& yaml_file) { return SceneReader(yaml_file).read(); }

MotionBenchMakerProblem read_motion_bench_maker_problem(const std::string& yaml_file) {
  return SceneReader(yaml_file).read_problem();
}

int Scene::find(const std::string& id) const {
  for (std::size_t k = 0; k < objects_.size(); ++k)
    if (objects_[k].id == id) return static_cast<int>(k);
  return -1;
}

bool Scene::has(const std::string& id) const { return find(id) >= 0; }

void Scene::add(SceneObject object) {
  if (object.id.empty()) throw InvalidArgument("Scene::add: an object needs an id");
  if (has(object.id)) throw InvalidArgument("Scene::add: there is already an object '" + object.id + "'");
  for (const Primitive& p : object.primitives) {
    for (const double v : p.size)
      if (!std::isfinite(v) || v < 0) throw InvalidArgument("Scene::add: object '" + object.id + "' has a primitive of negative or non-finite size");
    if (!is_finite(p.pose)) throw InvalidArgument("Scene::add: object '" + object.id + "' has a primitive pose that is not finite");
  }
  objects_.push_back(std::move(object));
  version_ = next_scene_version();
}

void Scene::move(const std::string& id, const Transform& motion) {
  const int k = find(id);
  if (k < 0) throw InvalidArgument("Scene::move: no object '" + id + "'");
  if (!is_finite(motion)) throw InvalidArgument("Scene::move: the motion of '" + id + "' is not finite");
  for (Primitive& p : objects_[k].primitives) p.pose = compose(motion, p.pose);
  version_ = next_scene_version();
}

void Scene::remove(const std::string& id) {
  const int k = find(id);
  if (k < 0) throw InvalidArgument("Scene::remove: no object '" + id + "'");
  objects_.erase(objects_.begin() + k);
  version_ = next_scene_version();
}

void Scene::set_point_cloud(std::vector<float> xyz, double resolution) {
  if (!(resolution > 0) || !std::isfinite(resolution))
    throw InvalidArgument("Scene::set_point_cloud: the resolution must be a positive number of metres");
  if (xyz.size() % 3 != 0)
    throw InvalidArgument("Scene::set_point_cloud: " + std::to_string(xyz.size()) + " values are not x y z triples");
  for (std::size_t i = 0; i < xyz.size(); ++i)
    if (!std::isfinite(xyz[i]))
      throw InvalidArgument("Scene::set_point_cloud: point " + std::to_string(i / 3) + " has a coordinate that is not finite");
  cloud_ = std::make_shared<const std::vector<float>>(std::move(xyz));
  cloud_resolution_ = resolution;
  version_ = next_scene_version();
}

void Scene::clear_point_cloud() {
  cloud_.reset();
  cloud_resolution_ = 0;
  version_ = next_scene_version();
}

const std::vector<float>& Scene::point_cloud() const {
  static const std::vector<float> none;
  return cloud_ ? *cloud_ : none;
}

std::size_t Scene::num_primitives() const {
  std::size_t n = 0;
  for (const SceneObject& o : objects_) n += o.primitives.size();
  return n;
}

}  // namespace ompl_cuda
