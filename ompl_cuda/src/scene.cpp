// Scene (scene.h): its objects, and MoveIt's PlanningScene YAML read with yaml-cpp (mesh files:
// scene_mesh.cpp).
#include "ompl_cuda/scene.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>

#include "linalg_cuda/errors.h"
#include "quoted_text.h"

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
    if (!root.IsMap()) fail(root, "not a map (planning_group, base_offset, scene)");
    if (!root["planning_group"]) throw ParseError(file_, 1, "no planning_group");
    problem.group = text(root["planning_group"], "planning_group");
    if (problem.group.empty()) fail(root["planning_group"], "planning_group is empty");
    // MotionBenchMaker moves the scene's objects by base_offset into the robot's frame (its
    // scene_sampler and generate programs): the robot's pose in the scene frame is the inverse.
    if (root["base_offset"]) problem.base = inverse(pose(root["base_offset"], "base_offset"));
    // MotionBenchMaker names its scene inside its package (configs/scenes/DIR/FILE); the scenes lie
    // beside the problem files as scenes/DIR/FILE do in MotionBenchMaker's layout and the shared data.
    if (root["scene"]) {
      const std::string name = text(root["scene"], "scene"), marker = "configs/scenes/";
      const std::size_t at = name.find(marker);
      const std::filesystem::path folder = std::filesystem::path(file_).parent_path();
      problem.scene_file = (at == std::string::npos ? folder / name : folder / name.substr(at + marker.size())).string();
    }
    return problem;
  }

  Scene read() {
    const YAML::Node root = load();
    Scene scene;
    if (!root.IsMap()) fail(root, "not a map (a MoveIt PlanningScene holds its objects in world.collision_objects)");
    const YAML::Node world = root["world"];
    if (!world) throw ParseError(file_, 1, "no 'world' (a MoveIt PlanningScene holds its objects in world.collision_objects)");
    if (!world.IsMap()) fail(world, "'world' is not a map (a MoveIt PlanningScene holds its objects in world.collision_objects)");
    const YAML::Node objects = world["collision_objects"];
    if (!objects) return scene;
    if (!objects.IsSequence()) fail(objects, "world.collision_objects is not a list");
    for (const YAML::Node& node : objects) {
      SceneObject object = read_object(node);
      if (object.id.empty()) fail(node, "a collision object has an empty id");
      if (scene.has(object.id)) fail(node, "a second collision object of id '" + detail::shown(object.id) + "'");
      scene.add(std::move(object));
    }
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

  // A scalar's text ("what" names it in the error where the node is a list or a map).
  std::string text(const YAML::Node& node, const std::string& what) const {
    if (!node.IsScalar()) fail(node, what + " is not a scalar");
    return node.Scalar();
  }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& message) const {
    throw ParseError(file_, at.Mark().is_null() ? 0 : at.Mark().line + 1, message);
  }

  std::vector<double> numbers(const YAML::Node& node, std::size_t count, const std::string& what) const {
    if (!node || !node.IsSequence() || node.size() != count)
      fail(node ? node : YAML::Node(), what + " needs " + std::to_string(count) + " numbers");
    std::vector<double> out;
    for (const YAML::Node& v : node) out.push_back(number(v, what));
    return out;
  }

  double number(const YAML::Node& v, const std::string& what) const {
    if (!v || !v.IsScalar()) fail(v ? v : YAML::Node(), what + " is not a number");
    double x = 0;
    try {
      x = v.as<double>();
    } catch (const YAML::Exception&) {
      fail(v, what + ": '" + detail::shown(v.Scalar()) + "' is not a number");
    }
    if (!std::isfinite(x)) fail(v, what + " is not finite");
    return x;
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
    object.id = text(node["id"], "a collision object's id");
    object.id.erase(object.id.find_last_not_of(" \t") + 1);
    if (node["planes"] && node["planes"].size() > 0)
      fail(node["planes"], "object '" + detail::shown(object.id) + "' has planes: ompl_cuda's scenes take primitives (box, cylinder, sphere) and meshes");
    const Transform object_pose = node["pose"] ? pose(node["pose"], "object '" + detail::shown(object.id) + "' pose") : Transform();
    const YAML::Node primitives = node["primitives"], poses = node["primitive_poses"];
    const YAML::Node meshes = node["meshes"], mesh_poses = node["mesh_poses"];
    if (!primitives && !meshes) fail(node, "object '" + detail::shown(object.id) + "' has neither primitives nor meshes");
    if (primitives && !primitives.IsSequence()) fail(primitives, "object '" + detail::shown(object.id) + "' primitives is not a list");
    if (meshes && !meshes.IsSequence()) fail(meshes, "object '" + detail::shown(object.id) + "' meshes is not a list");
    // An empty list needs no poses; any other one pose per entry, as MoveIt's CollisionObject.
    if (primitives && primitives.size() > 0 && (!poses || !poses.IsSequence() || poses.size() != primitives.size()))
      fail(node, "object '" + detail::shown(object.id) + "' needs one primitive_poses entry per primitive");
    if (meshes && meshes.size() > 0 && (!mesh_poses || !mesh_poses.IsSequence() || mesh_poses.size() != meshes.size()))
      fail(node, "object '" + detail::shown(object.id) + "' needs one mesh_poses entry per mesh");
    for (std::size_t k = 0; primitives && k < primitives.size(); ++k) {
      const YAML::Node p = primitives[k];
      if (!p.IsMap()) fail(p, "object '" + detail::shown(object.id) + "' primitive " + std::to_string(k) + " is not a map (type, dimensions)");
      const std::string type = p["type"] ? text(p["type"], "object '" + detail::shown(object.id) + "' primitive type") : "";
      const std::string what = "object '" + detail::shown(object.id) + "' " + (type.empty() ? "primitive" : detail::shown(type));
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
        fail(p, what + ": type '" + detail::shown(type) + "' is not taken (box, cylinder, sphere)");
      }
      for (const double v : prim.size)
        if (v < 0) fail(p, what + " has a negative dimension");
      prim.pose = compose(object_pose, pose(poses[k], what + " pose"));
      object.primitives.push_back(prim);
    }
    for (std::size_t k = 0; meshes && k < meshes.size(); ++k) {
      const std::string what = "object '" + detail::shown(object.id) + "' mesh " + std::to_string(k);
      SceneMesh mesh = read_mesh(meshes[k], what);
      mesh.pose = compose(object_pose, pose(mesh_poses[k], what + " pose"));
      object.meshes.push_back(std::move(mesh));
    }
    return object;
  }

  // A shape_msgs/Mesh as robowflex writes it (vertices [x, y, z], triangles [a, b, c]) or as ROS
  // messages print (vertices {x: , y: , z: }, triangles {vertex_indices: [a, b, c]}). The lists' sizes
  // come from the parsed file, which is bounded, so reserving them is bounded too.
  SceneMesh read_mesh(const YAML::Node& node, const std::string& what) const {
    if (!node.IsMap()) fail(node, what + " is not a map (vertices, triangles)");
    const YAML::Node vertices = node["vertices"], triangles = node["triangles"];
    if (!vertices || !vertices.IsSequence()) fail(vertices ? vertices : node, what + " has no vertices list");
    if (!triangles || !triangles.IsSequence()) fail(triangles ? triangles : node, what + " has no triangles list");
    SceneMesh mesh;
    mesh.vertices.reserve(3 * vertices.size());
    for (const YAML::Node& v : vertices) {
      if (v.IsMap()) {
        for (const char* axis : {"x", "y", "z"})
          mesh.vertices.push_back(number(v[axis] ? v[axis] : v, what + " vertex " + axis));
      } else {
        const std::vector<double> x = numbers(v, 3, what + " vertex [x y z]");
        mesh.vertices.insert(mesh.vertices.end(), x.begin(), x.end());
      }
    }
    const long long count = static_cast<long long>(vertices.size());
    mesh.triangles.reserve(3 * triangles.size());
    for (const YAML::Node& t : triangles) {
      const YAML::Node indices = t.IsMap() ? t["vertex_indices"] : t;
      if (!indices || !indices.IsSequence() || indices.size() != 3)
        fail(indices ? indices : t, what + ": a triangle needs 3 vertex indices");
      for (const YAML::Node& i : indices) {
        long long index = -1;
        try {
          index = i.as<long long>();
        } catch (const YAML::Exception&) {
          fail(i, what + ": vertex index '" + detail::shown(i.Scalar()) + "' is not an integer");
        }
        if (index < 0 || index >= count)
          fail(i, what + ": vertex index " + std::to_string(index) + " is not one of its " + std::to_string(count) + " vertices");
        mesh.triangles.push_back(static_cast<int>(index));
      }
    }
    return mesh;
  }

  std::string file_;
};

}  // namespace

// What the reader does not check itself (yaml-cpp's exceptions for a node of another kind than the
// one asked for) is reported as a ParseError at the node yaml-cpp names.
template <typename Read>
auto read_yaml(const std::string& file, Read read) {
  try {
    return read(SceneReader(file));
  } catch (const YAML::Exception& e) {
    throw ParseError(file, e.mark.is_null() ? 0 : e.mark.line + 1, "unexpected YAML: " + detail::shown(e.msg, 200));
  }
}

Scene Scene::load(const std::string& yaml_file) {
  return read_yaml(yaml_file, [](SceneReader reader) { return reader.read(); });
}

MotionBenchMakerProblem read_motion_bench_maker_problem(const std::string& yaml_file) {
  return read_yaml(yaml_file, [](SceneReader reader) { return reader.read_problem(); });
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
  for (std::size_t k = 0; k < object.meshes.size(); ++k) {
    const SceneMesh& m = object.meshes[k];
    const std::string what = "Scene::add: object '" + object.id + "' mesh " + std::to_string(k);
    if (!is_finite(m.pose)) throw InvalidArgument(what + " has a pose that is not finite");
    if (m.vertices.size() % 3 != 0 || m.triangles.size() % 3 != 0)
      throw InvalidArgument(what + " has " + std::to_string(m.vertices.size()) + " vertex coordinates and " +
                            std::to_string(m.triangles.size()) + " triangle indices: each must be a multiple of 3");
    for (const double v : m.vertices)
      if (!std::isfinite(v)) throw InvalidArgument(what + " has a vertex that is not finite");
    const long long count = static_cast<long long>(m.vertices.size() / 3);
    for (const int i : m.triangles)
      if (i < 0 || i >= count)
        throw InvalidArgument(what + " has a triangle with vertex index " + std::to_string(i) + ", not one of its " +
                              std::to_string(count) + " vertices");
  }
  objects_.push_back(std::move(object));
  version_ = next_scene_version();
}

void Scene::move(const std::string& id, const Transform& motion) {
  const int k = find(id);
  if (k < 0) throw InvalidArgument("Scene::move: no object '" + id + "'");
  if (!is_finite(motion)) throw InvalidArgument("Scene::move: the motion of '" + id + "' is not finite");
  for (Primitive& p : objects_[k].primitives) p.pose = compose(motion, p.pose);
  for (SceneMesh& m : objects_[k].meshes) m.pose = compose(motion, m.pose);
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
  field_resolution_ = resolution;
  version_ = next_scene_version();
}

void Scene::clear_point_cloud() {
  cloud_.reset();
  version_ = next_scene_version();
}

const std::vector<float>& Scene::point_cloud() const {
  static const std::vector<float> none;
  return cloud_ ? *cloud_ : none;
}

void Scene::set_field_resolution(double resolution) {
  if (!(resolution > 0) || !std::isfinite(resolution))
    throw InvalidArgument("Scene::set_field_resolution: the resolution must be a positive number of metres");
  field_resolution_ = resolution;
  version_ = next_scene_version();
}

std::size_t Scene::num_primitives() const {
  std::size_t n = 0;
  for (const SceneObject& o : objects_) n += o.primitives.size();
  return n;
}

std::size_t Scene::num_mesh_triangles() const {
  std::size_t n = 0;
  for (const SceneObject& o : objects_)
    for (const SceneMesh& m : o.meshes) n += m.num_triangles();
  return n;
}

}  // namespace ompl_cuda
