// ColmapModel's camera models and the choice between its two forms (the readers and writers are in
// colmap_model_text.cpp and colmap_model_binary.cpp, the validation in colmap_model_validation.cpp).
#include "ceres_cuda/colmap_model.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "colmap_model_io.h"
#include "linalg_cuda/errors.h"

namespace ceres_cuda {
namespace {

struct ModelInfo {
  ColmapCameraModel model;
  const char* name;
  int num_params;
};

// COLMAP's names and parameter counts (src/base/camera_models.h), in the order of their ids.
constexpr ModelInfo kModels[] = {
    {ColmapCameraModel::SimplePinhole, "SIMPLE_PINHOLE", 3},
    {ColmapCameraModel::Pinhole, "PINHOLE", 4},
    {ColmapCameraModel::SimpleRadial, "SIMPLE_RADIAL", 4},
    {ColmapCameraModel::Radial, "RADIAL", 5},
    {ColmapCameraModel::OpenCV, "OPENCV", 8},
    {ColmapCameraModel::OpenCVFisheye, "OPENCV_FISHEYE", 8},
    {ColmapCameraModel::FullOpenCV, "FULL_OPENCV", 12},
    {ColmapCameraModel::Fov, "FOV", 5},
    {ColmapCameraModel::SimpleRadialFisheye, "SIMPLE_RADIAL_FISHEYE", 4},
    {ColmapCameraModel::RadialFisheye, "RADIAL_FISHEYE", 5},
    {ColmapCameraModel::ThinPrismFisheye, "THIN_PRISM_FISHEYE", 12},
};

const ModelInfo& info(ColmapCameraModel model) {
  const int id = static_cast<int>(model);
  if (id < 0 || id >= static_cast<int>(std::size(kModels)))
    throw linalg_cuda::InvalidArgument("ColmapCameraModel: no model has id " + std::to_string(id));
  return kModels[id];
}

}  // namespace

const char* colmap_camera_model_name(ColmapCameraModel model) { return info(model).name; }
int colmap_camera_model_num_params(ColmapCameraModel model) { return info(model).num_params; }

bool colmap_camera_model_from_name(const std::string& name, ColmapCameraModel* model) {
  for (const ModelInfo& m : kModels)
    if (name == m.name) {
      *model = m.model;
      return true;
    }
  return false;
}

bool colmap_camera_model_from_id(int id, ColmapCameraModel* model) {
  if (id < 0 || id >= static_cast<int>(std::size(kModels))) return false;
  *model = kModels[id].model;
  return true;
}

namespace detail {

bool normalize_qvec(std::array<double, 4>* qvec) {
  const double squared =
      (*qvec)[0] * (*qvec)[0] + (*qvec)[1] * (*qvec)[1] + (*qvec)[2] * (*qvec)[2] + (*qvec)[3] * (*qvec)[3];
  if (!std::isfinite(squared) || squared < 1e-300) return false;
  // A quaternion unit to rounding stays as it is, so that a model written and read again is the same.
  if (std::fabs(squared - 1.0) <= 32 * std::numeric_limits<double>::epsilon()) return true;
  const double norm = std::sqrt(squared);
  for (double& q : *qvec) q /= norm;
  return true;
}

ColmapOutputFile::ColmapOutputFile(const std::string& path, const char* mode)
    : path_(path), file_(std::fopen(path.c_str(), mode), &std::fclose) {
  if (!file_) throw linalg_cuda::Error(path + ": cannot write: " + std::strerror(errno));
}

void ColmapOutputFile::close() {
  const bool failed = std::ferror(file_.get()) != 0;
  if (std::fclose(file_.release()) != 0 || failed) throw linalg_cuda::Error(path_ + ": writing failed: " + std::strerror(errno));
}

}  // namespace detail

void ColmapModel::validate() const {
  if (const auto problem = detail::first_colmap_problem(*this)) throw linalg_cuda::InvalidArgument(problem->message);
}

std::size_t ColmapModel::num_observations() const {
  std::size_t n = 0;
  for (const auto& [id, image] : images)
    for (const ColmapImagePoint& p : image.points2D) n += p.point3D_id != kColmapNoPoint3D;
  return n;
}

std::vector<std::uint32_t> ColmapModel::registration_order() const {
  std::vector<std::uint32_t> order;
  order.reserve(images.size());
  std::set<std::uint32_t> listed;
  for (const std::uint32_t id : image_file_order)
    if (images.count(id) && listed.insert(id).second) order.push_back(id);
  for (const auto& [id, image] : images)
    if (!listed.count(id)) order.push_back(id);
  return order;
}

ColmapModel ColmapModel::read(const std::string& folder) {
  struct stat info {};
  if (stat(folder.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    throw linalg_cuda::Error(folder + ": not a folder (a COLMAP model is a folder of cameras, images and points3D files)");
  auto all_there = [&](const char* extension) {
    for (const char* name : {"cameras", "images", "points3D"})
      if (stat((folder + "/" + name + extension).c_str(), &info) != 0) return false;
    return true;
  };
  if (all_there(".bin")) return read_binary(folder);
  if (all_there(".txt")) return read_text(folder);
  throw linalg_cuda::Error(folder + ": holds no COLMAP model (cameras, images and points3D, all .bin or all .txt)");
}

}  // namespace ceres_cuda
