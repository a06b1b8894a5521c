// ColmapModel's binary form, as COLMAP 3.8's Reconstruction::ReadBinary and WriteBinary, little-endian:
//   cameras.bin   uint64 count; per camera: uint32 id, int32 model id, uint64 width, height, doubles
//   images.bin    uint64 count; per image: uint32 id, 4 doubles qvec, 3 doubles tvec, uint32 camera id,
//                 the name and a NUL, uint64 point count, per point: double x, y, uint64 point3D id
//   points3D.bin  uint64 count; per point: uint64 id, 3 doubles, 3 uint8 colour, double error,
//                 uint64 track length, per element: uint32 image id, uint32 point index
// Every count is checked against the bytes left in the file before memory is reserved for it, and a
// file must end where its last record does.
#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ceres_cuda/colmap_model.h"
#include "colmap_model_io.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/file_errors.h"

namespace ceres_cuda {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "COLMAP's binary models are little-endian, as this host");

class Input {
 public:
  explicit Input(const std::string& path) : path_(path), file_(std::fopen(path.c_str(), "rb"), &std::fclose) {
    if (!file_) throw linalg_cuda::Error(path + ": cannot open: " + std::strerror(errno));
    struct stat info {};
    if (fstat(fileno(file_.get()), &info) != 0 || !S_ISREG(info.st_mode))
      throw linalg_cuda::Error(path + ": not a regular file");
    size_ = static_cast<std::uint64_t>(info.st_size);
  }

  template <typename T>
  T read(const char* what) {
    T value;
    bytes(&value, sizeof value, what);
    return value;
  }

  double finite(const char* what) {
    const std::uint64_t at = offset_;
    const double value = read<double>(what);
    if (!std::isfinite(value)) fail_at(at, std::string(what) + " is not a finite number");
    return value;
  }

  void bytes(void* out, std::size_t n, const char* what) {
    if (n > size_ - offset_) fail("the file ends where " + std::string(what) + " was expected");
    if (std::fread(out, 1, n, file_.get()) != n) fail("cannot read " + std::string(what) + ": " + std::strerror(errno));
    offset_ += n;
  }

  // A count of records of at least `bytes_each` bytes, checked against what the file has left.
  std::uint64_t count(std::uint64_t bytes_each, const char* what) {
    const std::uint64_t at = offset_;
    const std::uint64_t n = read<std::uint64_t>(what);
    const std::uint64_t left = size_ - offset_;
    if (n > left / bytes_each)
      fail_at(at, "declares " + std::to_string(n) + " " + what + ", which the " + std::to_string(left) +
                      " bytes left cannot hold (" + std::to_string(bytes_each) + " or more each)");
    return n;
  }

  void expect_end(const char* last) {
    if (offset_ != size_)
      fail(std::to_string(size_ - offset_) + " bytes follow the last " + std::string(last) + "; expected the file's end");
  }

  std::uint64_t offset() const { return offset_; }
  [[noreturn]] void fail(const std::string& message) const { fail_at(offset_, message); }
  [[noreturn]] void fail_at(std::uint64_t at, const std::string& message) const {
    throw linalg_cuda::ParseError::at_byte(path_, at, message);
  }

 private:
  std::string path_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
  std::uint64_t size_ = 0, offset_ = 0;
};

void read_cameras(const std::string& path, ColmapModel* model, std::map<std::uint64_t, std::uint64_t>* offset_of) {
  Input in(path);
  const std::uint64_t n = in.count(24, "cameras");
  for (std::uint64_t c = 0; c < n; ++c) {
    const std::uint64_t at = in.offset();
    const auto id = in.read<std::uint32_t>("a camera id");
    const auto model_id = in.read<std::int32_t>("a camera model id");
    ColmapCamera camera;
    if (!colmap_camera_model_from_id(model_id, &camera.model))
      in.fail_at(at, "camera " + std::to_string(id) + ": unknown camera model id " + std::to_string(model_id));
    camera.width = in.read<std::uint64_t>("a width");
    camera.height = in.read<std::uint64_t>("a height");
    camera.params.resize(static_cast<std::size_t>(colmap_camera_model_num_params(camera.model)));
    for (double& p : camera.params) p = in.finite("a camera parameter");
    if (!model->cameras.emplace(id, std::move(camera)).second) in.fail_at(at, "camera " + std::to_string(id) + " again");
    (*offset_of)[id] = at;
  }
  in.expect_end("camera");
}

void read_images(const std::string& path, ColmapModel* model, std::map<std::uint64_t, std::uint64_t>* offset_of) {
  Input in(path);
  const std::uint64_t n = in.count(4 + 7 * 8 + 4 + 1 + 8, "images");
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t at = in.offset();
    const auto id = in.read<std::uint32_t>("an image id");
    ColmapImage image;
    for (double& q : image.qvec) q = in.finite("a quaternion value");
    for (double& t : image.tvec) t = in.finite("a translation");
    if (!detail::normalize_qvec(&image.qvec)) in.fail_at(at, "image " + std::to_string(id) + ": its quaternion has no length");
    image.camera_id = in.read<std::uint32_t>("a camera id");
    for (char c; (c = in.read<char>("the rest of the image's name and its NUL")) != '\0';) image.name.push_back(c);
    image.points2D.resize(in.count(24, "image points"));
    for (ColmapImagePoint& p : image.points2D) {
      p.x = in.finite("an x coordinate");
      p.y = in.finite("a y coordinate");
      p.point3D_id = in.read<std::uint64_t>("a 3-D point id");
    }
    if (!model->images.emplace(id, std::move(image)).second) in.fail_at(at, "image " + std::to_string(id) + " again");
    model->image_file_order.push_back(id);
    (*offset_of)[id] = at;
  }
  in.expect_end("image");
}

void read_points(const std::string& path, ColmapModel* model, std::map<std::uint64_t, std::uint64_t>* offset_of) {
  Input in(path);
  const std::uint64_t n = in.count(8 + 3 * 8 + 3 + 8 + 8, "3-D points");
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t at = in.offset();
    const auto id = in.read<std::uint64_t>("a 3-D point id");
    if (id == kColmapNoPoint3D) in.fail_at(at, "3-D point id " + std::to_string(id) + " is COLMAP's \"none\"");
    ColmapPoint3D point;
    for (double& x : point.xyz) x = in.finite("a coordinate");
    in.bytes(point.rgb.data(), 3, "a colour");
    point.error = in.finite("an error");
    point.track.resize(in.count(8, "track elements"));
    for (ColmapTrackElement& e : point.track) {
      e.image_id = in.read<std::uint32_t>("an image id");
      e.point2D_idx = in.read<std::uint32_t>("an image point index");
    }
    if (!model->points3D.emplace(id, std::move(point)).second) in.fail_at(at, "3-D point " + std::to_string(id) + " again");
    (*offset_of)[id] = at;
  }
  in.expect_end("3-D point");
}

}  // namespace

ColmapModel ColmapModel::read_binary(const std::string& folder) try {
  ColmapModel model;
  detail::ColmapRecordPlaces read{{folder + "/cameras.bin", folder + "/images.bin", folder + "/points3D.bin"}, {}};
  read_cameras(read.files[0], &model, &read.places[0]);
  read_images(read.files[1], &model, &read.places[1]);
  read_points(read.files[2], &model, &read.places[2]);
  detail::throw_first_colmap_problem(model, read, [](const std::string& file, std::uint64_t byte, const std::string& message) {
    return linalg_cuda::ParseError::at_byte(file, byte, message);
  });
  return model;
} catch (const linalg_cuda::Error&) {
  throw;
} catch (...) {
  linalg_cuda::detail::rethrow_with_file_context(folder);
}

void ColmapModel::write_binary(const std::string& folder) const {
  for (const auto& [id, image] : images)
    if (image.name.find('\0') != std::string::npos)
      throw linalg_cuda::InvalidArgument("ColmapModel::write_binary: image " + std::to_string(id) +
                                         "'s name holds a NUL, which ends a name in the binary form");
  detail::ColmapOutputFile cameras_file(folder + "/cameras.bin", "wb");
  cameras_file.put(static_cast<std::uint64_t>(cameras.size()));
  for (const auto& [id, camera] : cameras) {
    cameras_file.put(id);
    cameras_file.put(static_cast<std::int32_t>(camera.model));
    cameras_file.put(camera.width);
    cameras_file.put(camera.height);
    for (const double p : camera.params) cameras_file.put(p);
  }
  cameras_file.close();

  detail::ColmapOutputFile images_file(folder + "/images.bin", "wb");
  images_file.put(static_cast<std::uint64_t>(images.size()));
  for (const std::uint32_t id : registration_order()) {
    const ColmapImage& image = images.at(id);
    images_file.put(id);
    for (const double q : image.qvec) images_file.put(q);
    for (const double t : image.tvec) images_file.put(t);
    images_file.put(image.camera_id);
    for (const char c : image.name) images_file.put(c);
    images_file.put('\0');
    images_file.put(static_cast<std::uint64_t>(image.points2D.size()));
    for (const ColmapImagePoint& p : image.points2D) {
      images_file.put(p.x);
      images_file.put(p.y);
      images_file.put(p.point3D_id);
    }
  }
  images_file.close();

  detail::ColmapOutputFile points_file(folder + "/points3D.bin", "wb");
  points_file.put(static_cast<std::uint64_t>(points3D.size()));
  for (const auto& [id, point] : points3D) {
    points_file.put(id);
    for (const double x : point.xyz) points_file.put(x);
    for (const std::uint8_t c : point.rgb) points_file.put(c);
    points_file.put(point.error);
    points_file.put(static_cast<std::uint64_t>(point.track.size()));
    for (const ColmapTrackElement& e : point.track) {
      points_file.put(e.image_id);
      points_file.put(e.point2D_idx);
    }
  }
  points_file.close();
}

}  // namespace ceres_cuda
