// libFuzzer harness of ompl_cuda's YAML readers (yaml-cpp): Scene::load (MoveIt's PlanningScene, as
// MotionBenchMaker's scene files have it) and read_motion_bench_maker_problem (MotionBenchMaker's
// problem files), both on the same input, the whole file written to a scratch .yaml. A scene that is
// read must have objects of distinct non-empty ids, each found by has(), with boxes, cylinders and
// spheres only (no capsule: the file has none), finite non-negative sizes (the ones a kind does not
// use 0), meshes of finite vertices in triples and triangles of three of their vertices, and finite
// poses whose rotations are rotations (their quaternions normalised); a problem
// must name a group and a finite pose. Bad input must end in linalg_cuda's typed errors
// (fuzz_support.h says which still count as findings).
#include <cmath>
#include <cstdint>
#include <string>

#include "fuzz_support.h"
#include "ompl_cuda_fuzz_robot.h"
#include "ompl_cuda/scene.h"

namespace {

using ompl_cuda::Primitive;

void check_scene(const ompl_cuda::Scene& scene) {
  std::size_t primitives = 0, triangles = 0;
  for (std::size_t k = 0; k < scene.objects().size(); ++k) {
    const ompl_cuda::SceneObject& object = scene.objects()[k];
    if (object.id.empty()) fuzz::finding("an object without an id");
    if (!scene.has(object.id)) fuzz::finding("object '" + object.id + "' is not found by its id");
    for (std::size_t i = 0; i < k; ++i)
      if (scene.objects()[i].id == object.id) fuzz::finding("two objects of id '" + object.id + "'");
    for (const Primitive& p : object.primitives) {
      const int used = p.kind == Primitive::Kind::Box ? 3 : p.kind == Primitive::Kind::Cylinder ? 2 : p.kind == Primitive::Kind::Sphere ? 1 : 0;
      if (used == 0) fuzz::finding("object '" + object.id + "' has a primitive a scene file cannot hold");
      for (int i = 0; i < 3; ++i)
        if (!std::isfinite(p.size[i]) || p.size[i] < 0 || (i >= used && p.size[i] != 0))
          fuzz::finding("object '" + object.id + "' has a primitive of negative, non-finite or stray size");
      fuzz::check_pose(p.pose, "object '" + object.id + "' primitive pose");
    }
    for (const ompl_cuda::SceneMesh& m : object.meshes) {
      if (m.vertices.size() % 3 != 0 || m.triangles.size() % 3 != 0) fuzz::finding("a mesh whose vertices or triangles are not triples");
      for (const double v : m.vertices)
        if (!std::isfinite(v)) fuzz::finding("object '" + object.id + "' has a mesh vertex that is not finite");
      for (const int i : m.triangles)
        if (i < 0 || static_cast<std::size_t>(i) >= m.vertices.size() / 3) fuzz::finding("a triangle of a vertex the mesh has not");
      fuzz::check_pose(m.pose, "object '" + object.id + "' mesh pose");
      triangles += m.num_triangles();
    }
    primitives += object.primitives.size();
  }
  if (scene.num_primitives() != primitives) fuzz::finding("num_primitives() does not count the primitives");
  if (scene.num_mesh_triangles() != triangles) fuzz::finding("num_mesh_triangles() does not count the triangles");
}

// yaml-cpp counts "\r\n", "\n" and a lone "\r" as line ends, and reads UTF-16 and UTF-32 too: a line
// it names is at most one more than the bytes 0x0a and 0x0d.
long yaml_lines(const uint8_t* data, size_t size) {
  long ends = 0;
  for (size_t i = 0; i < size; ++i) ends += data[i] == '\n' || data[i] == '\r';
  return ends + 1;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fuzz::ScratchFile file(".yaml");
  const std::string& path = file.write(data, size);
  const long lines = yaml_lines(data, size);
  try {
    check_scene(ompl_cuda::Scene::load(path));
  } catch (const linalg_cuda::Error& error) {
    fuzz::checked_message(error, path, lines, data, size);
  }
  try {
    const ompl_cuda::MotionBenchMakerProblem problem = ompl_cuda::read_motion_bench_maker_problem(path);
    if (problem.group.empty()) fuzz::finding("a problem without a planning group");
    fuzz::check_pose(problem.base, "the problem's base");
  } catch (const linalg_cuda::Error& error) {
    fuzz::checked_message(error, path, lines, data, size);
  }
  return 0;
}
