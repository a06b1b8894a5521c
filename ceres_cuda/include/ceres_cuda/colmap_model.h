#pragma once
// ColmapModel: a COLMAP sparse model (a reconstruction's cameras, images and 3-D points) as COLMAP 3.8
// reads and writes it, in its text form (cameras.txt, images.txt, points3D.txt) or its binary form
// (cameras.bin, images.bin, points3D.bin, little-endian), e.g. `colmap mapper`'s sparse/0 folder.
//
// An image's pose maps the world into its camera: X_cam = R(qvec) X + tvec, qvec = (w, x, y, z). Pixel
// coordinates have their origin at the top-left corner of the top-left pixel, as COLMAP's.
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ceres_cuda {

// COLMAP's camera models with their ids (src/base/camera_models.h).
enum class ColmapCameraModel : int {
  SimplePinhole = 0,        // f, cx, cy
  Pinhole = 1,              // fx, fy, cx, cy
  SimpleRadial = 2,         // f, cx, cy, k
  Radial = 3,               // f, cx, cy, k1, k2
  OpenCV = 4,               // fx, fy, cx, cy, k1, k2, p1, p2
  OpenCVFisheye = 5,        // fx, fy, cx, cy, k1, k2, k3, k4
  FullOpenCV = 6,           // fx, fy, cx, cy, k1, k2, p1, p2, k3, k4, k5, k6
  Fov = 7,                  // fx, fy, cx, cy, omega
  SimpleRadialFisheye = 8,  // f, cx, cy, k
  RadialFisheye = 9,        // f, cx, cy, k1, k2
  ThinPrismFisheye = 10,    // fx, fy, cx, cy, k1, k2, p1, p2, k3, k4, sx1, sy1
};

// The model's name as COLMAP writes it ("SIMPLE_RADIAL"), and its number of parameters.
const char* colmap_camera_model_name(ColmapCameraModel model);
int colmap_camera_model_num_params(ColmapCameraModel model);
// The model of a name or an id, false when COLMAP has none such.
bool colmap_camera_model_from_name(const std::string& name, ColmapCameraModel* model);
bool colmap_camera_model_from_id(int id, ColmapCameraModel* model);

struct ColmapCamera {
  ColmapCameraModel model = ColmapCameraModel::SimplePinhole;
  std::uint64_t width = 0, height = 0;
  std::vector<double> params;  // colmap_camera_model_num_params(model) values, in the order above
};

// No 3-D point: an image point's point3D_id when it observes none (COLMAP's kInvalidPoint3DId,
// written -1 in the text form).
constexpr std::uint64_t kColmapNoPoint3D = ~std::uint64_t(0);

struct ColmapImagePoint {
  double x = 0, y = 0;
  std::uint64_t point3D_id = kColmapNoPoint3D;
};

struct ColmapImage {
  std::array<double, 4> qvec{1, 0, 0, 0};  // w, x, y, z
  std::array<double, 3> tvec{0, 0, 0};
  std::uint32_t camera_id = 0;
  std::string name;
  std::vector<ColmapImagePoint> points2D;
};

// An observation of a 3-D point: the image, and the index of the point in its points2D.
struct ColmapTrackElement {
  std::uint32_t image_id = 0, point2D_idx = 0;
};

struct ColmapPoint3D {
  std::array<double, 3> xyz{0, 0, 0};
  std::array<std::uint8_t, 3> rgb{0, 0, 0};
  double error = -1;  // mean reprojection error in pixels, as the last bundle adjustment left it
  std::vector<ColmapTrackElement> track;
};

class ColmapModel {
 public:
  // By id. Cameras and points are written in the ids' order, images in registration_order().
  std::map<std::uint32_t, ColmapCamera> cameras;
  std::map<std::uint32_t, ColmapImage> images;
  std::map<std::uint64_t, ColmapPoint3D> points3D;
  // The images in the order the images file lists them, which is COLMAP's registration order: its
  // bundle adjustment fixes the first image's pose and the second's x translation. Empty for a model
  // built in code.
  std::vector<std::uint32_t> image_file_order;

  // image_file_order's ids that the model has (each once), then its other images in id order.
  std::vector<std::uint32_t> registration_order() const;

  // Reads the model in `folder`: the binary files when all three are there, else the text files, as
  // COLMAP does. Quaternions are scaled to unit length, as COLMAP scales them. Throws
  // linalg_cuda::ParseError naming the file and its line (text) or byte offset (binary) and what was
  // expected: a malformed or truncated file, an unknown camera model, a count
  // the file's bytes cannot hold, a duplicate id, a non-finite value; or naming what does not agree
  // between the files (validate()). Throws linalg_cuda::Error when a file cannot be opened.
  static ColmapModel read(const std::string& folder);
  static ColmapModel read_text(const std::string& folder);
  static ColmapModel read_binary(const std::string& folder);

  // Writes the three files in `folder` (which must exist), numbers at full precision; COLMAP and
  // read() read them back.
  void write_text(const std::string& folder) const;
  void write_binary(const std::string& folder) const;

  // Throws linalg_cuda::InvalidArgument naming the first disagreement: an image whose camera is not in
  // the model, a camera whose parameters do not match its model's count, an image point naming a
  // 3-D point that is not in the model or whose track does not name that image point, a track element
  // naming an image or image point that is not there or that observes another 3-D point.
  void validate() const;

  // Observations: the image points that observe a 3-D point (the sum of the tracks' lengths once
  // validate() holds).
  std::size_t num_observations() const;
};

class BALProblem;

// The COLMAP model of a BAL problem, for COLMAP's tools and colmap_ba: BAL camera i becomes camera and
// image i + 1 (RADIAL: f, cx, cy, k1, k2), point j becomes 3-D point j + 1, each observation an image
// point. BAL's cameras look down -z with y up and pixels from the principal point; COLMAP's look down
// +z with y down and pixels from the image's corner. So each pose turns half a turn about its camera's
// x axis, and an observation (x, y) becomes (cx + x, cy - y), with (cx, cy) the centre of an image
// that holds every observation of the problem. Each COLMAP reprojection error is then BAL's, its y
// negated, to rounding; each point's error is the mean length of its observations' errors.
ColmapModel colmap_model_from_bal(const BALProblem& bal);

}  // namespace ceres_cuda
