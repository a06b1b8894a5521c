#include "collision_geometry.h"

#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <assimp/Importer.hpp>
#include <cmath>

#include "linalg_cuda/errors.h"

namespace ompl_cuda::detail {
namespace {

Vec3 apply(const Transform& t, const Vec3& p) {
  Vec3 out;
  for (int i = 0; i < 3; ++i)
    out[i] = t.rotation[3 * i] * p[0] + t.rotation[3 * i + 1] * p[1] + t.rotation[3 * i + 2] * p[2] + t.translation[i];
  return out;
}

void add_quad(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d, std::vector<Triangle>* out) {
  out->push_back({a, b, c});
  out->push_back({a, c, d});
}

void add_box(const CollisionShape& s, std::vector<Triangle>* out) {
  const double x = s.size[0] / 2, y = s.size[1] / 2, z = s.size[2] / 2;
  Vec3 v[8];
  for (int k = 0; k < 8; ++k) v[k] = apply(s.origin, {k & 1 ? x : -x, k & 2 ? y : -y, k & 4 ? z : -z});
  add_quad(v[0], v[1], v[3], v[2], out);  // z = -z
  add_quad(v[4], v[5], v[7], v[6], out);  // z = +z
  add_quad(v[0], v[1], v[5], v[4], out);  // y = -y
  add_quad(v[2], v[3], v[7], v[6], out);  // y = +y
  add_quad(v[0], v[2], v[6], v[4], out);  // x = -x
  add_quad(v[1], v[3], v[7], v[5], out);  // x = +x
}

// A prism of 32 sides whose polygon circumscribes the circle (its sides touch it), so it holds the cylinder.
void add_cylinder(const CollisionShape& s, std::vector<Triangle>* out) {
  constexpr int kSides = 32;
  const double r = s.size[0] / std::cos(M_PI / kSides), h = s.size[1] / 2;
  const Vec3 bottom_center = apply(s.origin, {0, 0, -h}), top_center = apply(s.origin, {0, 0, h});
  for (int k = 0; k < kSides; ++k) {
    const double a0 = 2 * M_PI * k / kSides, a1 = 2 * M_PI * (k + 1) / kSides;
    const Vec3 b0 = apply(s.origin, {r * std::cos(a0), r * std::sin(a0), -h}),
               b1 = apply(s.origin, {r * std::cos(a1), r * std::sin(a1), -h}),
               t0 = apply(s.origin, {r * std::cos(a0), r * std::sin(a0), h}),
               t1 = apply(s.origin, {r * std::cos(a1), r * std::sin(a1), h});
    add_quad(b0, b1, t1, t0, out);
    out->push_back({bottom_center, b1, b0});
    out->push_back({top_center, t0, t1});
  }
}

void add_node(const aiScene& scene, const aiNode& node, const aiMatrix4x4& parent, const CollisionShape& s,
              std::vector<Triangle>* out) {
  const aiMatrix4x4 frame = parent * node.mTransformation;
  for (unsigned m = 0; m < node.mNumMeshes; ++m) {
    const aiMesh& mesh = *scene.mMeshes[node.mMeshes[m]];
    auto vertex = [&](unsigned i) {
      const aiVector3D p = frame * mesh.mVertices[i];
      return apply(s.origin, {p.x * s.mesh_scale[0], p.y * s.mesh_scale[1], p.z * s.mesh_scale[2]});
    };
    for (unsigned f = 0; f < mesh.mNumFaces; ++f) {
      const aiFace& face = mesh.mFaces[f];
      if (face.mNumIndices == 3) out->push_back({vertex(face.mIndices[0]), vertex(face.mIndices[1]), vertex(face.mIndices[2])});
    }
  }
  for (unsigned c = 0; c < node.mNumChildren; ++c) add_node(scene, *node.mChildren[c], frame, s, out);
}

void add_mesh(const CollisionShape& s, std::vector<Triangle>* out) {
  Assimp::Importer importer;
  // Points and lines bound no solid: dropped. Units as the file has them (URDF meshes are in metres).
  importer.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE, aiPrimitiveType_POINT | aiPrimitiveType_LINE);
  const aiScene* scene = importer.ReadFile(s.mesh_file, aiProcess_Triangulate | aiProcess_SortByPType);
  if (!scene || !scene->mRootNode)
    throw linalg_cuda::ParseError(s.mesh_file, 0, std::string("the mesh does not read: ") + importer.GetErrorString());
  const std::size_t before = out->size();
  add_node(*scene, *scene->mRootNode, aiMatrix4x4(), s, out);
  for (std::size_t k = before; k < out->size(); ++k)
    for (const Vec3* v : {&(*out)[k].a, &(*out)[k].b, &(*out)[k].c})
      for (const double x : *v)
        if (!std::isfinite(x)) throw linalg_cuda::ParseError(s.mesh_file, 0, "the mesh has a vertex that is not finite");
}

}  // namespace

LinkGeometry link_geometry(const RobotLink& link) {
  LinkGeometry g;
  for (const CollisionShape& s : link.collision) {
    switch (s.kind) {
      case CollisionShape::Kind::Box: add_box(s, &g.triangles); break;
      case CollisionShape::Kind::Cylinder: add_cylinder(s, &g.triangles); break;
      case CollisionShape::Kind::Mesh: add_mesh(s, &g.triangles); break;
      case CollisionShape::Kind::Sphere: {
        Sphere sphere;
        for (int i = 0; i < 3; ++i) sphere.center[i] = s.origin.translation[i];
        sphere.radius = s.size[0];
        g.spheres.push_back(sphere);
        break;
      }
    }
  }
  return g;
}

}  // namespace ompl_cuda::detail
