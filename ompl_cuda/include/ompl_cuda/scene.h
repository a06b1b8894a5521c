#pragma once
// The world a robot moves in: named objects made of primitives (spheres, oriented boxes, cylinders,
// capsules) and triangle meshes in the scene frame, added, moved and removed without touching the
// robot, as in a MoveIt PlanningScene. Scene::load reads MoveIt's PlanningScene YAML (MotionBenchMaker's
// scene files): world.collision_objects[] with id, primitives[] (box [x y z], cylinder [height radius],
// sphere [radius], cone refused) and primitive_poses[] (position [x y z], orientation [x y z w]),
// meshes[] (vertices [[x, y, z] ...], triangles [[a, b, c] ...]) and mesh_poses[], and an object pose
// where given. A point cloud (point_cloud.h reads PLY and PCD files) joins them.
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

// A triangle mesh taken as its surface, as FCL and MoveIt take meshes: a robot sphere collides with it
// when it holds a point of a triangle, not when it lies wholly inside a closed mesh.
struct SceneMesh {
  Transform pose;                 // of the mesh's frame in the scene frame
  std::vector<double> vertices;   // x y z per vertex, in the mesh's frame
  std::vector<int> triangles;     // three vertex indices per triangle
  std::size_t num_triangles() const { return triangles.size() / 3; }
};

struct SceneObject {
  std::string id;
  std::vector<Primitive> primitives;
  std::vector<SceneMesh> meshes;
};

// A mesh file as assimp reads it (STL, OBJ, COLLADA, PLY, ...): every triangle of every node, placed by
// the nodes' transforms and scaled by `scale` (metres per file unit), at the identity pose; points and
// lines are dropped. ParseError naming the file where it does not read, has a vertex that is not
// finite, or has more vertices than an int counts; InvalidArgument for a scale that is not positive.
SceneMesh read_scene_mesh(const std::string& file, double scale = 1.0);

class Scene {
 public:
  // Throws linalg_cuda::ParseError naming the file and line for what it cannot take.
  static Scene load(const std::string& yaml_file);

  // Adds an object (InvalidArgument for an id already there, an empty id, a primitive of negative or
  // non-finite size or pose, or a mesh with a pose or vertex that is not finite, a size that is not a
  // multiple of 3 or a triangle whose index is not one of its vertices).
  void add(SceneObject object);
  // Moves every primitive and mesh of the object by `motion` (applied in the scene frame: new = motion * old).
  void move(const std::string& id, const Transform& motion);
  void remove(const std::string& id);
  bool has(const std::string& id) const;

  const std::vector<SceneObject>& objects() const { return objects_; }
  std::size_t num_primitives() const;
  std::size_t num_mesh_triangles() const;

  // A point cloud (x y z per point, in the scene frame, metres), replacing any earlier one, as a sensor
  // gives it, and the field's resolution set to `resolution`. The checks keep the cloud and the meshes
  // as one distance field of voxels over their points within the robot's reach, built where the checks
  // run (GPU or CPU): conservative (a point of the cloud or of a mesh inside a robot sphere is always a
  // collision) and reaching at most 2 sqrt(3) voxels beyond them. InvalidArgument for a coordinate that
  // is not finite (sensors' NaN points must be dropped first), a size that is not a multiple of 3, or a
  // resolution that is not positive. Copies of the scene share the points.
  void set_point_cloud(std::vector<float> xyz, double resolution = 0.01);
  void clear_point_cloud();  // keeps the field's resolution
  const std::vector<float>& point_cloud() const;  // empty without one
  // The side of the field's voxels in metres, for the cloud and the meshes alike (default 0.01); a finer
  // one costs memory and time as the cube of its inverse. InvalidArgument where not positive.
  void set_field_resolution(double resolution);
  double field_resolution() const { return field_resolution_; }
  // Changes with every change: a number no other scene content has (copies share it), so that a copy
  // on the GPU knows when it is stale.
  std::uint64_t version() const { return version_; }

 private:
  int find(const std::string& id) const;
  std::vector<SceneObject> objects_;
  std::shared_ptr<const std::vector<float>> cloud_;
  double field_resolution_ = 0.01;
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
