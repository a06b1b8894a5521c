#pragma once
// The world a robot moves in: named objects made of primitives (spheres, oriented boxes, cylinders,
// capsules) in the scene frame, added, moved and removed without touching the robot, as in a MoveIt
// PlanningScene. Scene::load reads MoveIt's PlanningScene YAML (MotionBenchMaker's scene files):
// world.collision_objects[] with id, primitives[] (box [x y z], cylinder [height radius], sphere
// [radius], cone and mesh refused) and primitive_poses[] (position [x y z], orientation [x y z w]),
// and an object pose where given. A point cloud (point_cloud.h reads PLY and PCD files) joins the
// primitives.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ompl_cuda/robot_model.h"

namespace ompl_cuda {

struct Primitive {
  enum class Kind { Sphere, Box, Cylinder, Capsule };
  Kind kind = Kind::Box;
  Transform pose;              // in the scene frame; a cylinder's and capsule's axis is its z
  double size[3] = {0, 0, 0};  // sphere: radius; box: x y z; cylinder and capsule: radius, length (of
                               // the axis; a capsule adds hemispheres at both ends)
};

struct SceneObject {
  std::string id;
  std::vector<Primitive> primitives;
};

class Scene {
 public:
  // Throws linalg_cuda::ParseError naming the file and line for what it cannot take.
  static Scene load(const std::string& yaml_file);

  // Adds an object (InvalidArgument for an id already there, an empty id, or a primitive of negative
  // or non-finite size or pose).
  void add(SceneObject object);
  // Moves every primitive of the object by `motion` (applied in the scene frame: new = motion * old).
  void move(const std::string& id, const Transform& motion);
  void remove(const std::string& id);
  bool has(const std::string& id) const;

  const std::vector<SceneObject>& objects() const { return objects_; }
  std::size_t num_primitives() const;

  // A point cloud (x y z per point, in the scene frame, metres), replacing any earlier one, as a sensor
  // gives it. The checks keep it as a distance field of `resolution`-metre voxels over its points
  // within the robot's reach, built where the checks run (GPU or CPU): conservative (a point inside a
  // robot sphere is always a collision) and reaching at most 2 sqrt(3) voxels beyond the points.
  // InvalidArgument for a coordinate that is not finite (sensors' NaN points must be dropped first),
  // a size that is not a multiple of 3, or a resolution that is not positive. Copies of the scene
  // share the points.
  void set_point_cloud(std::vector<float> xyz, double resolution = 0.01);
  void clear_point_cloud();
  const std::vector<float>& point_cloud() const;  // empty without one
  double point_cloud_resolution() const { return cloud_resolution_; }
  // Changes with every change: a number no other scene content has (copies share it), so that a copy
  // on the GPU knows when it is stale.
  std::uint64_t version() const { return version_; }

 private:
  int find(const std::string& id) const;
  std::vector<SceneObject> objects_;
  std::shared_ptr<const std::vector<float>> cloud_;
  double cloud_resolution_ = 0;
  std::uint64_t version_ = 0;
};

// What a MotionBenchMaker problem file (`<scene>_<robot>.problem.yaml`) says of the robot's placement:
// its planning group, its base's pose in the scene frame (the inverse of base_offset, by which
// MotionBenchMaker moves the scene into the robot's frame) and its scene file (the
// package's configs/scenes/DIR/FILE taken as DIR/FILE beside the problem file, the layout of
// MotionBenchMaker's configs folder; empty where the file names none). ParseError with file and line
// for what is missing or malformed.
struct MotionBenchMakerProblem {
  std::string group;
  Transform base;
  std::string scene_file;
};
MotionBenchMakerProblem read_motion_bench_maker_problem(const std::string& yaml_file);

}  // namespace ompl_cuda
