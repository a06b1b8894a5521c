// Scene meshes: read from MoveIt's YAML (and refused with file and line where malformed), from mesh
// files through assimp, added, moved and removed; their triangles rasterized into the distance field's
// voxels: every point of a triangle (random, huge, degenerate, axis-aligned on voxel faces) lies in a
// marked voxel, every marked voxel lies within half a voxel's diagonal of its triangle, and the
// field's sphere test never misses a point of a triangle.
#include <gtest/gtest.h>

#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <assimp/Importer.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "cloud_field_build.h"
#include "linalg_cuda/errors.h"
#include "mesh_voxels.h"
#include "ompl_cuda/scene.h"
#include "test_support.h"

namespace {

namespace fs = std::filesystem;
using ompl_cuda::Scene;
using ompl_cuda::SceneMesh;
using ompl_cuda::Transform;
namespace detail = ompl_cuda::detail;

std::string write(const std::string& name, const std::string& text) {
  const fs::path dir = fs::temp_directory_path() / "ompl_cuda_scene_mesh_test";
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << text;
  return (dir / name).string();
}

fs::path panda_mesh(const std::string& name) {
  return test_support::data_dir() / "robots" / "robowflex_resources" / "panda" / "meshes" / "collision" / name;
}

TEST(SceneMeshes, ReadFromMoveItYaml) {
  // robowflex's form (lists) and the ROS message form (maps), with an object pose and a mesh pose.
  const std::string file = write("meshes.yaml",
                                 "world:\n"
                                 "  collision_objects:\n"
                                 "    - id: tent\n"
                                 "      pose:\n"
                                 "        position: [1, 0, 0]\n"
                                 "      meshes:\n"
                                 "        - vertices: [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]\n"
                                 "          triangles: [[0, 1, 2], [0, 1, 3]]\n"
                                 "        - vertices:\n"
                                 "            - {x: 0, y: 0, z: 0}\n"
                                 "            - {x: 0.5, y: 0, z: 0}\n"
                                 "            - {x: 0, y: 0.5, z: 0}\n"
                                 "          triangles:\n"
                                 "            - vertex_indices: [2, 1, 0]\n"
                                 "      mesh_poses:\n"
                                 "        - position: [0, 0, 2]\n"
                                 "          orientation: [0, 0, 0, 1]\n"
                                 "        - position: [0, 3, 0]\n"
                                 "    - id: both\n"
                                 "      primitives:\n"
                                 "        - type: sphere\n"
                                 "          dimensions: [0.1]\n"
                                 "      primitive_poses:\n"
                                 "        - position: [0, 0, 0]\n"
                                 "      meshes:\n"
                                 "        - vertices: [[0, 0, 0], [1, 0, 0], [0, 1, 0]]\n"
                                 "          triangles: [[0, 1, 2]]\n"
                                 "      mesh_poses:\n"
                                 "        - position: [0, 0, 0]\n"
                                 "    - id: no_meshes\n"  // empty lists need no poses
                                 "      primitives: []\n"
                                 "      meshes: []\n");
  const Scene scene = Scene::load(file);
  ASSERT_EQ(scene.objects().size(), 3u);
  const ompl_cuda::SceneObject& tent = scene.objects()[0];
  ASSERT_EQ(tent.meshes.size(), 2u);
  EXPECT_EQ(tent.meshes[0].vertices, (std::vector<double>{0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(tent.meshes[0].triangles, (std::vector<int>{0, 1, 2, 0, 1, 3}));
  EXPECT_EQ(tent.meshes[1].vertices, (std::vector<double>{0, 0, 0, 0.5, 0, 0, 0, 0.5, 0}));
  EXPECT_EQ(tent.meshes[1].triangles, (std::vector<int>{2, 1, 0}));
  // The object's pose composed with the mesh's.
  EXPECT_DOUBLE_EQ(tent.meshes[0].pose.translation[0], 1);
  EXPECT_DOUBLE_EQ(tent.meshes[0].pose.translation[2], 2);
  EXPECT_DOUBLE_EQ(tent.meshes[1].pose.translation[1], 3);
  EXPECT_EQ(scene.objects()[1].primitives.size(), 1u);
  EXPECT_EQ(scene.num_mesh_triangles(), 4u);
}

TEST(SceneMeshes, MalformedYamlIsRefusedWithFileAndLine) {
  auto error = [](const std::string& mesh, const std::string& poses = "      mesh_poses:\n        - position: [0, 0, 0]\n") {
    const std::string file = write("bad_mesh.yaml", "world:\n  collision_objects:\n    - id: m\n      meshes:\n" + mesh + poses);
    try {
      Scene::load(file);
    } catch (const linalg_cuda::ParseError& e) {
      EXPECT_EQ(e.file(), file);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  auto expect = [&](const std::string& mesh, const std::string& what) {
    const std::string message = error(mesh);
    EXPECT_NE(message.find(what), std::string::npos) << message << " (expected: " << what << ")";
  };
  // Lines: 1 world, 2 collision_objects, 3 id, 4 meshes, 5 the mesh's first line.
  const std::string triangle = "          triangles: [[0, 1, 2]]\n";
  expect("        - vertices: [[0, 0, 0], [1, 0, 0], [0, 1]]\n" + triangle, "bad_mesh.yaml:5: object 'm' mesh 0 vertex [x y z] needs 3 numbers");
  expect("        - vertices: [[0, 0, 0], [1, 0, 0], [0, 1, .nan]]\n" + triangle, "bad_mesh.yaml:5: object 'm' mesh 0 vertex [x y z] is not finite");
  expect("        - vertices: [[0, 0, 0], [1, 0, 0], [0, 1, a]]\n" + triangle, "'a' is not a number");
  expect("        - vertices: [[0, 0, 0], [1, 0, 0], [0, 1, 0]]\n          triangles:\n            - [0, 1, 3]\n",
         "bad_mesh.yaml:7: object 'm' mesh 0: vertex index 3 is not one of its 3 vertices");
  expect("        - vertices: [[0, 0, 0], [1, 0, 0], [0, 1, 0]]\n          triangles: [[0, -1, 2]]\n", "vertex index -1 is not one");
  expect("        - vertices: [[0, 0, 0], [1, 0, 0], [0, 1, 0]]\n          triangles: [[0, 1.5, 2]]\n", "'1.5' is not an integer");
  expect("        - vertices: [[0, 0, 0], [1, 0, 0], [0, 1, 0]]\n          triangles:\n            - [0, 1]\n",
         "bad_mesh.yaml:7: object 'm' mesh 0: a triangle needs 3 vertex indices");
  expect("        - vertices: [[0, 0, 0]]\n", "bad_mesh.yaml:5: object 'm' mesh 0 has no triangles list");
  expect("        - vertices:\n            - {x: 0, y: 0}\n" + triangle, "bad_mesh.yaml:6: object 'm' mesh 0 vertex z is not a number");
  expect("        - [1, 2, 3]\n", "bad_mesh.yaml:5: object 'm' mesh 0 is not a map");
  const std::string ok = "        - vertices: [[0, 0, 0], [1, 0, 0], [0, 1, 0]]\n" + triangle;
  EXPECT_NE(error(ok, "").find("bad_mesh.yaml:3: object 'm' needs one mesh_poses entry per mesh"), std::string::npos) << error(ok, "");
  EXPECT_NE(error(ok, "      mesh_poses:\n        - position: [0, 0]\n").find("bad_mesh.yaml:8: object 'm' mesh 0 pose.position needs 3 numbers"),
            std::string::npos)
      << error(ok, "      mesh_poses:\n        - position: [0, 0]\n");
  EXPECT_EQ(error(ok), "accepted");
}

SceneMesh triangle_mesh() {
  SceneMesh m;
  m.vertices = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  m.triangles = {0, 1, 2};
  return m;
}

TEST(SceneMeshes, AreAddedMovedAndRemovedAndValidated) {
  Scene scene;
  const std::uint64_t empty = scene.version();
  scene.add({"tri", {}, {triangle_mesh()}});
  EXPECT_NE(scene.version(), empty);
  EXPECT_EQ(scene.num_mesh_triangles(), 1u);
  const std::uint64_t added = scene.version();
  Transform up;
  up.translation[2] = 0.5;
  scene.move("tri", up);
  EXPECT_NE(scene.version(), added);
  EXPECT_DOUBLE_EQ(scene.objects()[0].meshes[0].pose.translation[2], 0.5);
  scene.remove("tri");
  EXPECT_EQ(scene.num_mesh_triangles(), 0u);

  auto refused = [&](const SceneMesh& m, const std::string& what) {
    try {
      scene.add({"bad", {}, {m}});
      ADD_FAILURE() << "accepted: " << what;
    } catch (const linalg_cuda::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
  };
  SceneMesh m = triangle_mesh();
  m.vertices[4] = NAN;
  refused(m, "not finite");
  m = triangle_mesh();
  m.vertices.pop_back();
  refused(m, "multiple of 3");
  m = triangle_mesh();
  m.triangles.push_back(1);
  refused(m, "multiple of 3");
  m = triangle_mesh();
  m.triangles[2] = 3;
  refused(m, "vertex index 3, not one of its 3 vertices");
  m = triangle_mesh();
  m.triangles[0] = -1;
  refused(m, "vertex index -1");
  m = triangle_mesh();
  m.pose.translation[1] = INFINITY;
  refused(m, "pose that is not finite");
  EXPECT_FALSE(scene.has("bad"));
  scene.add({"nothing", {}, {SceneMesh()}});  // a mesh without triangles touches nothing, and is taken

  EXPECT_DOUBLE_EQ(scene.field_resolution(), 0.01);
  scene.set_field_resolution(0.02);
  EXPECT_DOUBLE_EQ(scene.field_resolution(), 0.02);
  scene.set_point_cloud({0, 0, 0}, 0.05);
  EXPECT_DOUBLE_EQ(scene.field_resolution(), 0.05);
  scene.clear_point_cloud();
  EXPECT_DOUBLE_EQ(scene.field_resolution(), 0.05);
  EXPECT_THROW(scene.set_field_resolution(0), linalg_cuda::InvalidArgument);
  EXPECT_THROW(scene.set_field_resolution(NAN), linalg_cuda::InvalidArgument);
}

TEST(SceneMeshes, ReadFromAMeshFileThroughAssimp) {
  const fs::path stl = panda_mesh("link3.stl");
  if (!fs::exists(stl)) GTEST_SKIP() << stl << " not found (set CUDA_SOLVERS_DATA)";
  const SceneMesh mesh = ompl_cuda::read_scene_mesh(stl.string());
  // As assimp reads it: every face a triangle of the file's vertices.
  Assimp::Importer importer;
  const aiScene* direct = importer.ReadFile(stl.string(), aiProcess_Triangulate);
  ASSERT_NE(direct, nullptr);
  unsigned faces = 0;
  for (unsigned m = 0; m < direct->mNumMeshes; ++m) faces += direct->mMeshes[m]->mNumFaces;
  EXPECT_EQ(mesh.num_triangles(), faces);
  EXPECT_GT(faces, 100u);
  EXPECT_EQ(mesh.vertices.size() % 3, 0u);
  for (const int i : mesh.triangles) ASSERT_LT(static_cast<std::size_t>(i), mesh.vertices.size() / 3);
  // The Panda's link meshes are in metres, a few tens of centimetres across; scaled, as asked.
  double extent = 0;
  for (const double v : mesh.vertices) extent = std::max(extent, std::fabs(v));
  EXPECT_GT(extent, 0.05);
  EXPECT_LT(extent, 0.5);
  const SceneMesh doubled = ompl_cuda::read_scene_mesh(stl.string(), 2.0);
  ASSERT_EQ(doubled.vertices.size(), mesh.vertices.size());
  for (std::size_t k = 0; k < mesh.vertices.size(); ++k) ASSERT_DOUBLE_EQ(doubled.vertices[k], 2 * mesh.vertices[k]);
  Scene scene;
  scene.add({"link3", {}, {mesh}});

  auto fails = [](const std::string& file) {
    try {
      ompl_cuda::read_scene_mesh(file);
      ADD_FAILURE() << file << " was read";
    } catch (const linalg_cuda::ParseError& e) {
      EXPECT_EQ(e.file(), file);
    }
  };
  fails("/no/such/mesh.stl");
  fails(write("garbage.stl", "solid nothing\n this is not an STL facet\n"));
  fails(write("garbage.obj", std::string("\x01\x02\x03 not a mesh", 15)));
  EXPECT_THROW(ompl_cuda::read_scene_mesh(stl.string(), 0.0), linalg_cuda::InvalidArgument);
}

// --- Voxels ---

// The distance from p to the triangle: the closest point by Ericson's regions, or for a degenerate
// triangle the nearest of its edges.
double segment_distance(const double* p, const double* a, const double* b) {
  double ab[3], ap[3], ab2 = 0, t = 0;
  for (int k = 0; k < 3; ++k) ab[k] = b[k] - a[k], ap[k] = p[k] - a[k], ab2 += ab[k] * ab[k], t += ap[k] * ab[k];
  t = ab2 > 0 ? std::clamp(t / ab2, 0.0, 1.0) : 0.0;
  double d2 = 0;
  for (int k = 0; k < 3; ++k) d2 += std::pow(ap[k] - t * ab[k], 2);
  return std::sqrt(d2);
}

double triangle_distance(const double* p, const double* a, const double* b, const double* c) {
  double ab[3], ac[3], n[3], ap[3], n2 = 0, e2 = 0;
  for (int k = 0; k < 3; ++k) ab[k] = b[k] - a[k], ac[k] = c[k] - a[k], ap[k] = p[k] - a[k];
  n[0] = ab[1] * ac[2] - ab[2] * ac[1], n[1] = ab[2] * ac[0] - ab[0] * ac[2], n[2] = ab[0] * ac[1] - ab[1] * ac[0];
  for (int k = 0; k < 3; ++k) n2 += n[k] * n[k], e2 += ab[k] * ab[k] + ac[k] * ac[k];
  const double edges = std::min({segment_distance(p, a, b), segment_distance(p, b, c), segment_distance(p, c, a)});
  if (!(n2 > 1e-20 * e2 * e2)) return edges;
  // Inside the prism over the triangle: the distance to its plane; else to the nearest edge.
  double bc[3], cp[3], bp[3];
  for (int k = 0; k < 3; ++k) bc[k] = c[k] - b[k], cp[k] = p[k] - c[k], bp[k] = p[k] - b[k];
  auto side = [&](const double* e, const double* q) {
    const double x[3] = {e[1] * q[2] - e[2] * q[1], e[2] * q[0] - e[0] * q[2], e[0] * q[1] - e[1] * q[0]};
    return x[0] * n[0] + x[1] * n[1] + x[2] * n[2];
  };
  const double ca[3] = {-ac[0], -ac[1], -ac[2]};
  if (side(ab, ap) >= 0 && side(bc, bp) >= 0 && side(ca, cp) >= 0)
    return std::fabs(ap[0] * n[0] + ap[1] * n[1] + ap[2] * n[2]) / std::sqrt(n2);
  return edges;
}

// Triangles of every kind for the grid [-0.5, 0.5]^3 at `voxel`: ordinary, huge (reaching 1 km out),
// slivers, segments, points, and axis-aligned ones lying on the voxels' faces.
std::vector<double> test_triangles(const detail::CloudGrid& grid, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> in(-0.55, 0.55), far(-1000, 1000), unit(0, 1);
  std::vector<double> out;
  auto add = [&](const double* a, const double* b, const double* c) {
    out.insert(out.end(), a, a + 3);
    out.insert(out.end(), b, b + 3);
    out.insert(out.end(), c, c + 3);
  };
  for (int k = 0; k < 400; ++k) {
    double a[3], b[3], c[3];
    const int kind = k % 8;
    const double size = std::pow(10.0, -3 + 3 * unit(rng));  // 1 mm to 1 m
    for (int i = 0; i < 3; ++i) {
      a[i] = in(rng);
      b[i] = a[i] + size * (unit(rng) - 0.5);
      c[i] = a[i] + size * (unit(rng) - 0.5);
    }
    if (kind == 1)  // huge: two vertices far away
      for (int i = 0; i < 3; ++i) b[i] = far(rng), c[i] = far(rng);
    if (kind == 2)  // a segment: c on the line ab
      for (int i = 0; i < 3; ++i) c[i] = a[i] + 0.37 * (b[i] - a[i]);
    if (kind == 3)  // a point
      for (int i = 0; i < 3; ++i) b[i] = c[i] = a[i];
    if (kind == 4) {  // axis-aligned, on a voxel face: one coordinate on the grid's planes
      const int axis = static_cast<int>(rng() % 3);
      const double plane = double(grid.origin[axis]) + double(grid.voxel) * static_cast<double>(1 + rng() % (grid.n[axis] - 1));
      a[axis] = b[axis] = c[axis] = plane;
    }
    if (kind == 5) {  // a right triangle along voxel edges: two coordinates on grid planes
      for (int axis = 0; axis < 3; ++axis) {
        const double plane = double(grid.origin[axis]) + double(grid.voxel) * static_cast<double>(1 + rng() % (grid.n[axis] - 1));
        a[axis] = plane;
        b[axis] = axis == 0 ? plane + 5 * double(grid.voxel) : plane;
        c[axis] = axis == 1 ? plane + 3 * double(grid.voxel) : plane;
      }
    }
    if (kind == 6)  // a sliver: c a hair off the line ab
      for (int i = 0; i < 3; ++i) c[i] = a[i] + 0.6 * (b[i] - a[i]) + (i == 0 ? 1e-9 : 0.0);
    add(a, b, c);
  }
  return out;
}

struct Marked {
  detail::CloudGrid grid;
  std::set<long long> voxels;
};

// The voxels one triangle marks.
std::set<long long> marked_by(const double* tri, const detail::CloudGrid& grid) {
  std::vector<float> points;
  detail::append_triangle_voxels(std::vector<double>(tri, tri + 9), grid, &points);
  std::set<long long> out;
  for (std::size_t i = 0; i < points.size(); i += 3) {
    const long long v = detail::voxel_of_point(grid, &points[i]);
    EXPECT_GE(v, 0);
    EXPECT_TRUE(out.insert(v).second) << "voxel " << v << " twice";
  }
  return out;
}

TEST(MeshVoxels, EveryPointOfATriangleLiesInAMarkedVoxelAndNoOtherIsMarked) {
  const double lo[3] = {-0.5, -0.5, -0.5}, hi[3] = {0.5, 0.5, 0.5};
  for (const double voxel : {0.05, 0.013}) {
    SCOPED_TRACE(voxel);
    const detail::CloudGrid grid = detail::plan_grid_over(lo, hi, voxel);
    const std::vector<double> triangles = test_triangles(grid, 17);
    std::mt19937_64 rng(23);
    std::uniform_real_distribution<double> unit(0, 1);
    const double v = grid.voxel;
    std::size_t samples = 0, total = 0;
    for (std::size_t t = 0; t < triangles.size(); t += 9) {
      const double* tri = &triangles[t];
      const std::set<long long> marked = marked_by(tri, grid);
      total += marked.size();
      // Points of the triangle: its vertices, points on its edges and inside; each voxel whose closed box
      // holds one (two or more where it lies on a face) must be marked.
      for (int s = 0; s < 300; ++s) {
        double w[3] = {unit(rng), unit(rng), unit(rng)};
        if (s < 3) w[0] = s == 0, w[1] = s == 1, w[2] = s == 2;
        else if (s < 30) w[s % 3] = 0;
        const double sum = w[0] + w[1] + w[2];
        double p[3];
        for (int k = 0; k < 3; ++k) p[k] = (w[0] * tri[k] + w[1] * tri[k + 3] + w[2] * tri[k + 6]) / sum;
        int first[3], last[3];
        bool inside = true;
        for (int k = 0; k < 3; ++k) {
          const double u = (p[k] - double(grid.origin[k])) / v;
          first[k] = static_cast<int>(std::floor(u)), last[k] = first[k];
          if (u == std::floor(u)) first[k] -= 1;  // on a face: both voxels hold it
          first[k] = std::max(first[k], 0), last[k] = std::min(last[k], grid.n[k] - 1);
          inside = inside && u >= 0 && u <= grid.n[k];
        }
        if (!inside) continue;
        ++samples;
        for (int z = first[2]; z <= last[2]; ++z)
          for (int y = first[1]; y <= last[1]; ++y)
            for (int x = first[0]; x <= last[0]; ++x)
              ASSERT_TRUE(marked.count(x + grid.n[0] * (y + static_cast<long long>(grid.n[1]) * z)))
                  << "triangle " << t / 9 << " point " << s << " voxel " << x << " " << y << " " << z;
      }
      // And no more: a marked voxel meets the triangle, so its centre is within half its diagonal.
      for (const long long m : marked) {
        const long long idx[3] = {m % grid.n[0], (m / grid.n[0]) % grid.n[1], m / (grid.n[0] * static_cast<long long>(grid.n[1]))};
        double centre[3];
        for (int k = 0; k < 3; ++k) centre[k] = double(grid.origin[k]) + (idx[k] + 0.5) * v;
        ASSERT_LE(triangle_distance(centre, tri, tri + 3, tri + 6), std::sqrt(3.0) / 2 * v * (1 + 1e-6) + 1e-9)
            << "triangle " << t / 9 << " voxel " << m;
      }
    }
    EXPECT_GT(samples, 20000u);
    EXPECT_GT(total, 1000u);
  }
}

TEST(MeshVoxels, TheFieldNeverMissesAPointOfATriangle) {
  const double low[3] = {-0.5, -0.5, -0.5}, high[3] = {0.5, 0.5, 0.5};
  double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  const detail::CloudGrid box = detail::plan_grid_over(low, high, 0.03);
  std::vector<double> triangles = test_triangles(box, 29);
  triangles.resize(9 * 60);  // a field the brute force below can afford
  detail::add_triangles_within(triangles, low, high, lo, hi);
  const detail::CloudGrid grid = detail::plan_grid_over(lo, hi, 0.03);
  std::vector<float> points;
  detail::append_triangle_voxels(triangles, grid, &points);
  const std::vector<float> field = detail::build_distance_field_cpu(points, grid);
  const detail::CloudView view{grid, field.data()};
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> unit(0, 1), where(-0.5, 0.5);
  int touching = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    // A sphere through a point of a triangle within reach, and one anywhere.
    const double* tri = &triangles[9 * (rng() % 60)];
    double w[3] = {unit(rng), unit(rng), unit(rng)}, p[3];
    for (int k = 0; k < 3; ++k) p[k] = (w[0] * tri[k] + w[1] * tri[k + 3] + w[2] * tri[k + 6]) / (w[0] + w[1] + w[2]);
    if (std::fabs(p[0]) > 0.5 || std::fabs(p[1]) > 0.5 || std::fabs(p[2]) > 0.5) continue;
    const float r = static_cast<float>(0.2 * unit(rng)) + 1e-4f;
    double dir[3] = {where(rng), where(rng), where(rng)}, norm = std::hypot(dir[0], dir[1], dir[2]);
    const float c[3] = {static_cast<float>(p[0] + dir[0] / norm * r * 0.999 * unit(rng)),
                        static_cast<float>(p[1] + dir[1] / norm * r * 0.999 * unit(rng)),
                        static_cast<float>(p[2] + dir[2] / norm * r * 0.999 * unit(rng))};
    ASSERT_TRUE(detail::sphere_touches_cloud(c, r, view)) << trial;
    ++touching;
  }
  EXPECT_GT(touching, 5000);
}

TEST(MeshVoxels, TriangleBoxTestSeparatesOnEveryAxis) {
  const double centre[3] = {0, 0, 0}, half[3] = {1, 1, 1};
  auto meets = [&](std::vector<double> t) { return detail::triangle_meets_box(&t[0], &t[3], &t[6], centre, half); };
  EXPECT_TRUE(meets({-5, 0, 0, 5, 0.5, 0, 0, 5, 0}));              // through the box, no vertex inside
  EXPECT_TRUE(meets({1, 1, 1, 3, 3, 3, 3, 1, 5}));                 // a vertex on a corner
  EXPECT_TRUE(meets({1, 0, 0, 3, 0, 0, 3, 1, 0}));                 // a vertex on a face
  EXPECT_FALSE(meets({1.001, 0, 0, 3, 0, 0, 3, 1, 0}));            // beyond a face
  EXPECT_FALSE(meets({2.1, 0, 0, 0, 2.1, 0, 3, 3, 0}));            // past an edge: only z x (b - a) separates
  EXPECT_TRUE(meets({2, 0, 0, 0, 2, 0, 3, 3, 0}));                 // on that edge
  EXPECT_FALSE(meets({2.1, 0, -0.5, 0, 2.1, -0.5, 2.1, 0, 0.5}));  // upright, past an edge
  EXPECT_TRUE(meets({2, 0, -0.5, 0, 2, -0.5, 2, 0, 0.5}));         // upright, through that edge
  EXPECT_FALSE(meets({3.01, 0, 0, 0, 3.01, 0, 0, 0, 3.01}));       // past a corner: only the normal separates
  EXPECT_TRUE(meets({3, 0, 0, 0, 3, 0, 0, 0, 3}));                 // the plane x + y + z = 3 holds the corner
  EXPECT_TRUE(meets({-3, -3, -3, 3, 3, 3, 3, 3, 3}));              // degenerate: a segment through the box
  EXPECT_FALSE(meets({2.1, 0, 0, 0, 2.1, 0, 0, 2.1, 0}));          // a segment past an edge
  EXPECT_TRUE(meets({0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5}));  // a point inside
  EXPECT_FALSE(meets({0.5, 1.5, 0.5, 0.5, 1.5, 0.5, 0.5, 1.5, 0.5}));  // a point outside
}

TEST(MeshVoxels, AGridBeyondTheLimitNamesAResolutionThatFits) {
  // A flat 2 m square of two triangles within reach: its volume is nothing, its voxels many.
  const std::vector<double> wall = {-1, -1, 0, 1, -1, 0, 1, 1, 0, -1, -1, 0, 1, 1, 0, -1, 1, 0};
  const double low[3] = {-2, -2, -2}, high[3] = {2, 2, 2};
  double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  detail::add_triangles_within(wall, low, high, lo, hi);
  EXPECT_EQ(lo[2], 0);
  EXPECT_EQ(hi[0], 1);
  try {
    detail::plan_grid_over(lo, hi, 5e-5);
    FAIL() << "a grid of 1.6e9 voxels was planned";
  } catch (const linalg_cuda::InvalidArgument& e) {
    const std::string message = e.what();
    const std::size_t at = message.find("a resolution of ");
    ASSERT_NE(at, std::string::npos) << message;
    const double fits = std::stod(message.substr(at + 16));
    EXPECT_LE(detail::plan_grid_over(lo, hi, fits).voxels(), detail::kMaxCloudVoxels) << message;
    EXPECT_LT(fits, 3.05e-4) << message;  // not coarser than needed: 2 m / 6686 voxels a side is 2.99e-4
  }
  // Triangles out of reach make no grid.
  const double far_low[3] = {5, 5, 5}, far_high[3] = {6, 6, 6};
  double flo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, fhi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
  detail::add_triangles_within(wall, far_low, far_high, flo, fhi);
  EXPECT_EQ(detail::plan_grid_over(flo, fhi, 0.01).voxels(), 0);
}

}  // namespace
