// read_scene_mesh (scene.h): a mesh file read with assimp into a SceneMesh, the nodes' transforms
// applied, as the robot's meshes are read for the sphere cover (collision_geometry.cpp).
#include <assimp/config.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>

#include <assimp/Importer.hpp>
#include <climits>
#include <cmath>
#include <filesystem>

#include "linalg_cuda/errors.h"
#include "ompl_cuda/scene.h"

namespace ompl_cuda {

namespace {

using linalg_cuda::ParseError;

// Mesh files of scenes are megabytes; a bound on what assimp is handed keeps a wrong file from taking
// the machine's memory.
constexpr std::uintmax_t kMaxMeshFileBytes = 1ull << 30;

struct MeshBuilder {
  const aiScene& scene;
  double scale;
  const std::string& file;
  SceneMesh* out;

  void add_node(const aiNode& node, const aiMatrix4x4& parent) const {
    const aiMatrix4x4 frame = parent * node.mTransformation;
    for (unsigned m = 0; m < node.mNumMeshes; ++m) {
      const aiMesh& mesh = *scene.mMeshes[node.mMeshes[m]];
      const std::size_t first = out->vertices.size() / 3;
      if (first + mesh.mNumVertices > static_cast<std::size_t>(INT_MAX))
        throw ParseError(file, 0, "the mesh has more than " + std::to_string(INT_MAX) + " vertices");
      out->vertices.reserve(out->vertices.size() + 3 * static_cast<std::size_t>(mesh.mNumVertices));
      for (unsigned i = 0; i < mesh.mNumVertices; ++i) {
        const aiVector3D p = frame * mesh.mVertices[i];
        for (const double x : {double(p.x) * scale, double(p.y) * scale, double(p.z) * scale}) {
          if (!std::isfinite(x)) throw ParseError(file, 0, "the mesh has a vertex that is not finite");
          out->vertices.push_back(x);
        }
      }
      out->triangles.reserve(out->triangles.size() + 3 * static_cast<std::size_t>(mesh.mNumFaces));
      for (unsigned f = 0; f < mesh.mNumFaces; ++f) {
        const aiFace& face = mesh.mFaces[f];
        if (face.mNumIndices != 3) continue;  // points and lines, which the importer was asked to drop
        for (unsigned k = 0; k < 3; ++k) {
          if (face.mIndices[k] >= mesh.mNumVertices) throw ParseError(file, 0, "a face names a vertex the mesh lacks");
          out->triangles.push_back(static_cast<int>(first + face.mIndices[k]));
        }
      }
    }
    for (unsigned c = 0; c < node.mNumChildren; ++c) add_node(*node.mChildren[c], frame);
  }
};

}  // namespace

SceneMesh read_scene_mesh(const std::string& file, double scale) {
  if (!(scale > 0) || !std::isfinite(scale))
    throw linalg_cuda::InvalidArgument("read_scene_mesh: the scale of " + file + " must be a positive number");
  std::error_code error;
  const std::uintmax_t bytes = std::filesystem::file_size(file, error);
  if (error) throw ParseError(file, 0, "cannot read the mesh: " + error.message());
  if (bytes > kMaxMeshFileBytes)
    throw ParseError(file, 0, "the mesh file has " + std::to_string(bytes) + " bytes, more than the " +
                                  std::to_string(kMaxMeshFileBytes) + " a scene mesh may have");
  Assimp::Importer importer;
  // Points and lines bound no surface a sphere could touch: dropped. Units as the file has them.
  importer.SetPropertyInteger(AI_CONFIG_PP_SBP_REMOVE, aiPrimitiveType_POINT | aiPrimitiveType_LINE);
  const aiScene* scene = importer.ReadFile(file, aiProcess_Triangulate | aiProcess_SortByPType);
  if (!scene || !scene->mRootNode) throw ParseError(file, 0, std::string("the mesh does not read: ") + importer.GetErrorString());
  SceneMesh mesh;
  MeshBuilder{*scene, scale, file, &mesh}.add_node(*scene->mRootNode, aiMatrix4x4());
  return mesh;
}

}  // namespace ompl_cuda
