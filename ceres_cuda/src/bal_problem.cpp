// BAL reading and writing, and the synthetic generator.
//
// Reading: the whole file is decompressed into memory (bzip2 when it starts with "BZh", else read as
// text) and parsed with strtod/strtol, counting lines, so that every error names file:line. The
// format is whitespace-separated, so line breaks are not required where BAL puts them; only the
// number and validity of the values are checked.
#include "ceres_cuda/bal_problem.h"

#include <bzlib.h>
#include <ceres/autodiff_cost_function.h>
#include <ceres/problem.h>
#include <ceres/rotation.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

#include "ceres_cuda/snavely_reprojection_error.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/file_errors.h"
#include "snavely_autodiff.h"

namespace ceres_cuda {
namespace {

using linalg_cuda::InvalidArgument;
using linalg_cuda::ParseError;

// How many times its compressed size a .bz2 BAL file may expand to (its text compresses 3 to 5 times).
constexpr std::size_t kMaxBzip2Expansion = 50;

std::string read_file_contents(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file) throw linalg_cuda::Error(path + ": cannot open: " + std::strerror(errno));
  std::string raw;
  char buffer[1 << 16];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, file.get())) > 0;) raw.append(buffer, n);
  if (std::ferror(file.get())) throw linalg_cuda::Error(path + ": read error: " + std::strerror(errno));
  if (raw.size() < 3 || raw.compare(0, 3, "BZh") != 0) return raw;

  // bzip2 (possibly several concatenated streams, as pbzip2 writes them). BAL text compresses a few
  // times; data that expands far more is a decompression bomb, stopped before it fills the memory.
  const std::size_t limit = kMaxBzip2Expansion * raw.size() + (std::size_t(16) << 20);
  std::string text;
  std::size_t offset = 0;
  while (offset < raw.size()) {
    bz_stream stream{};
    if (BZ2_bzDecompressInit(&stream, 0, 0) != BZ_OK) throw linalg_cuda::Error(path + ": bzip2 init failed");
    stream.next_in = raw.data() + offset;
    std::size_t fed = 0;  // bytes handed to bzip2 so far (avail_in is 32-bit: feed at most 1 GiB at a time)
    auto feed = [&] {
      const std::size_t chunk = std::min<std::size_t>(raw.size() - offset - fed, 1u << 30);
      stream.avail_in = static_cast<unsigned>(chunk);
      fed += chunk;
    };
    feed();
    int status = BZ_OK;
    while (status == BZ_OK) {
      stream.next_out = buffer;
      stream.avail_out = sizeof buffer;
      status = BZ2_bzDecompress(&stream);
      text.append(buffer, sizeof buffer - stream.avail_out);
      if (text.size() > limit) {
        BZ2_bzDecompressEnd(&stream);
        throw ParseError(path, 0, "bzip2 data expands more than " + std::to_string(kMaxBzip2Expansion) +
                                      " times its size; not a BAL file (a decompression bomb?)");
      }
      if (status == BZ_OK && stream.avail_in == 0) {
        if (offset + fed < raw.size()) feed();
        else if (stream.avail_out != 0) status = BZ_UNEXPECTED_EOF;
      }
    }
    const std::size_t consumed = static_cast<std::size_t>(stream.next_in - raw.data()) - offset;
    BZ2_bzDecompressEnd(&stream);
    if (status == BZ_UNEXPECTED_EOF)
      throw ParseError(path, std::count(text.begin(), text.end(), '\n') + 1, "bzip2 stream ends early (truncated file)");
    if (status != BZ_STREAM_END) throw ParseError(path, 0, "corrupt bzip2 data (code " + std::to_string(status) + ")");
    offset += consumed;
    while (offset < raw.size() && raw[offset] == '\0') ++offset;  // padding some tools add
  }
  return text;
}

// Whitespace-separated numbers with line tracking. A NUL byte is not text: the input ends at its
// size, not at the first NUL.
class Tokenizer {
 public:
  Tokenizer(const std::string& path, const std::string& text)
      : path_(path), p_(text.c_str()), end_(text.c_str() + text.size()) {}

  long line() const { return line_; }
  std::size_t bytes_left() const { return static_cast<std::size_t>(end_ - p_); }

  double number(const char* what) {
    skip_blanks(what);
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(p_, &end);
    if (end == p_ || !ends_field(end)) fail(std::string("expected a number for ") + what);
    if (!std::isfinite(v)) fail(std::string(what) + " is not finite");
    p_ = end;
    return v;
  }

  long integer(const char* what) {
    skip_blanks(what);
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(p_, &end, 10);
    if (end == p_ || !ends_field(end) || errno == ERANGE) fail(std::string("expected an integer for ") + what);
    p_ = end;
    return v;
  }

  void expect_end() {
    while (p_ < end_ && std::isspace(static_cast<unsigned char>(*p_))) advance();
    if (p_ < end_) fail(*p_ ? "unexpected text after the last point" : "a NUL byte after the last point");
  }

  [[noreturn]] void fail(const std::string& message) const { throw ParseError(path_, line_, message); }

 private:
  static bool ends_field(const char* end) { return *end == '\0' || std::isspace(static_cast<unsigned char>(*end)); }
  void advance() {
    if (*p_ == '\n') ++line_;
    ++p_;
  }
  void skip_blanks(const char* what) {
    while (p_ < end_ && std::isspace(static_cast<unsigned char>(*p_))) advance();
    if (p_ == end_) fail(std::string("file ends before ") + what + " (truncated?)");
    if (!*p_) fail(std::string("a NUL byte where ") + what + " was expected");
  }

  std::string path_;
  const char* p_;
  const char* end_;
  long line_ = 1;
};

// Rotation matrix (row-major) -> angle-axis, through a unit quaternion (Shepperd's method), stable
// for every angle including pi.
void rotation_to_angle_axis(const double* R, double* aa) {
  double w, x, y, z;
  const double trace = R[0] + R[4] + R[8];
  if (trace > 0) {
    const double s = 2.0 * std::sqrt(trace + 1.0);
    w = 0.25 * s; x = (R[7] - R[5]) / s; y = (R[2] - R[6]) / s; z = (R[3] - R[1]) / s;
  } else if (R[0] > R[4] && R[0] > R[8]) {
    const double s = 2.0 * std::sqrt(1.0 + R[0] - R[4] - R[8]);
    w = (R[7] - R[5]) / s; x = 0.25 * s; y = (R[1] + R[3]) / s; z = (R[2] + R[6]) / s;
  } else if (R[4] > R[8]) {
    const double s = 2.0 * std::sqrt(1.0 + R[4] - R[0] - R[8]);
    w = (R[2] - R[6]) / s; x = (R[1] + R[3]) / s; y = 0.25 * s; z = (R[5] + R[7]) / s;
  } else {
    const double s = 2.0 * std::sqrt(1.0 + R[8] - R[0] - R[4]);
    w = (R[3] - R[1]) / s; x = (R[2] + R[6]) / s; y = (R[5] + R[7]) / s; z = 0.25 * s;
  }
  if (w < 0) { w = -w; x = -x; y = -y; z = -z; }
  const double v = std::sqrt(x * x + y * y + z * z);
  const double scale = v > 0 ? 2.0 * std::atan2(v, w) / v : 2.0;
  aa[0] = x * scale;
  aa[1] = y * scale;
  aa[2] = z * scale;
}

// Rodrigues (angle-axis -> row-major matrix).
void angle_axis_to_rotation(const double* aa, double* R) {
  const double theta = std::sqrt(aa[0] * aa[0] + aa[1] * aa[1] + aa[2] * aa[2]);
  if (theta == 0) {
    for (int k = 0; k < 9; ++k) R[k] = k % 4 == 0 ? 1.0 : 0.0;
    return;
  }
  const double w[3] = {aa[0] / theta, aa[1] / theta, aa[2] / theta};
  const double c = std::cos(theta), s = std::sin(theta), oc = 1.0 - c;
  R[0] = c + w[0] * w[0] * oc;        R[1] = w[0] * w[1] * oc - w[2] * s; R[2] = w[0] * w[2] * oc + w[1] * s;
  R[3] = w[1] * w[0] * oc + w[2] * s; R[4] = c + w[1] * w[1] * oc;        R[5] = w[1] * w[2] * oc - w[0] * s;
  R[6] = w[2] * w[0] * oc - w[1] * s; R[7] = w[2] * w[1] * oc + w[0] * s; R[8] = c + w[2] * w[2] * oc;
}

// Ceres' examples/snavely_reprojection_error.h, as users write it (BALProblem::Cost::AutoDiff).
struct SnavelyReprojection {
  SnavelyReprojection(double x, double y) : observed_x(x), observed_y(y) {}
  template <typename T>
  bool operator()(const T* camera, const T* point, T* residuals) const {
    T p[3];
    ceres::AngleAxisRotatePoint(camera, point, p);
    p[0] += camera[3];
    p[1] += camera[4];
    p[2] += camera[5];
    detail::snavely_autodiff_residuals(p, camera + 6, observed_x, observed_y, residuals);
    return true;
  }
  double observed_x, observed_y;
};

}  // namespace

BALProblem::BALProblem(int num_cameras, int num_points, std::vector<int> camera_index, std::vector<int> point_index,
                       std::vector<double> observations, std::vector<double> cameras, std::vector<double> points)
    : num_cameras_(num_cameras), num_points_(num_points), camera_index_(std::move(camera_index)),
      point_index_(std::move(point_index)), observations_(std::move(observations)), cameras_(std::move(cameras)),
      points_(std::move(points)) {
  validate();
}

void BALProblem::validate() const {
  if (num_cameras_ < 0 || num_points_ < 0) throw InvalidArgument("BALProblem: negative camera or point count");
  const std::size_t m = camera_index_.size();
  if (point_index_.size() != m || observations_.size() != 2 * m)
    throw InvalidArgument("BALProblem: " + std::to_string(m) + " camera indices, " +
                          std::to_string(point_index_.size()) + " point indices and " +
                          std::to_string(observations_.size()) + " observation values (need 2 per observation)");
  if (cameras_.size() != static_cast<std::size_t>(kCameraSize) * num_cameras_ ||
      points_.size() != static_cast<std::size_t>(kPointSize) * num_points_)
    throw InvalidArgument("BALProblem: camera/point arrays do not have 9 values per camera and 3 per point");
  for (std::size_t i = 0; i < m; ++i) {
    if (camera_index_[i] < 0 || camera_index_[i] >= num_cameras_ || point_index_[i] < 0 ||
        point_index_[i] >= num_points_)
      throw InvalidArgument("BALProblem: observation " + std::to_string(i) + " refers to camera " +
                            std::to_string(camera_index_[i]) + " / point " + std::to_string(point_index_[i]) +
                            " out of range");
    if (!std::isfinite(observations_[2 * i]) || !std::isfinite(observations_[2 * i + 1]))
      throw InvalidArgument("BALProblem: observation " + std::to_string(i) + " is not finite");
  }
  for (std::size_t i = 0; i < cameras_.size(); ++i)
    if (!std::isfinite(cameras_[i])) throw InvalidArgument("BALProblem: camera " + std::to_string(i / 9) + " is not finite");
  for (std::size_t i = 0; i < points_.size(); ++i)
    if (!std::isfinite(points_[i])) throw InvalidArgument("BALProblem: point " + std::to_string(i / 3) + " is not finite");
}

BALProblem BALProblem::read(const std::string& path) try {
  const std::string text = read_file_contents(path);
  Tokenizer in(path, text);
  BALProblem p;
  const long cameras = in.integer("the number of cameras");
  const long points = in.integer("the number of points");
  const long observations = in.integer("the number of observations");
  if (cameras < 0 || points < 0 || observations < 0 || cameras > (1L << 28) || points > (1L << 30) ||
      observations > (1L << 31) - 1)
    in.fail("header counts out of range: " + std::to_string(cameras) + " " + std::to_string(points) + " " +
            std::to_string(observations));
  // Before any memory is reserved: every value the header promises takes at least two bytes (a digit
  // and a separator), so a header that promises more than the rest of the file holds fails here, not
  // after gigabytes of reservations.
  const long long least = 8LL * observations + 2LL * kCameraSize * cameras + 2LL * kPointSize * points;
  if (static_cast<unsigned long long>(least) > in.bytes_left() + 1)
    in.fail("the header declares " + std::to_string(cameras) + " cameras, " + std::to_string(points) + " points and " +
            std::to_string(observations) + " observations, at least " + std::to_string(least) +
            " bytes of values, but the file has " + std::to_string(in.bytes_left()) + " bytes after it (truncated?)");
  p.num_cameras_ = static_cast<int>(cameras);
  p.num_points_ = static_cast<int>(points);
  p.camera_index_.resize(observations);
  p.point_index_.resize(observations);
  p.observations_.resize(2 * observations);
  for (long i = 0; i < observations; ++i) {
    const long c = in.integer("an observation's camera index");
    const long q = in.integer("an observation's point index");
    if (c < 0 || c >= cameras) in.fail("camera index " + std::to_string(c) + " out of range [0, " + std::to_string(cameras) + ")");
    if (q < 0 || q >= points) in.fail("point index " + std::to_string(q) + " out of range [0, " + std::to_string(points) + ")");
    p.camera_index_[i] = static_cast<int>(c);
    p.point_index_[i] = static_cast<int>(q);
    p.observations_[2 * i] = in.number("an observation's x");
    p.observations_[2 * i + 1] = in.number("an observation's y");
  }
  p.cameras_.resize(static_cast<std::size_t>(kCameraSize) * cameras);
  for (double& v : p.cameras_) v = in.number("a camera parameter");
  p.points_.resize(static_cast<std::size_t>(kPointSize) * points);
  for (double& v : p.points_) v = in.number("a point coordinate");
  in.expect_end();
  return p;
} catch (...) {
  linalg_cuda::detail::rethrow_with_file_context(path);
}

void BALProblem::write(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw linalg_cuda::Error(path + ": cannot write");
  char line[128];
  out << num_cameras_ << ' ' << num_points_ << ' ' << num_observations() << '\n';
  for (int i = 0; i < num_observations(); ++i) {
    std::snprintf(line, sizeof line, "%d %d %.17g %.17g\n", camera_index_[i], point_index_[i], observations_[2 * i],
                  observations_[2 * i + 1]);
    out << line;
  }
  for (const double v : cameras_) {
    std::snprintf(line, sizeof line, "%.17g\n", v);
    out << line;
  }
  for (const double v : points_) {
    std::snprintf(line, sizeof line, "%.17g\n", v);
    out << line;
  }
  if (!out) throw linalg_cuda::Error(path + ": write failed");
}

void BALProblem::write_ply(const std::string& path) const {
  std::ofstream out(path);
  if (!out) throw linalg_cuda::Error(path + ": cannot write");
  out << "ply\nformat ascii 1.0\nelement vertex " << num_cameras_ + num_points_
      << "\nproperty float x\nproperty float y\nproperty float z\nproperty uchar red\nproperty uchar green\n"
         "property uchar blue\nend_header\n";
  for (int i = 0; i < num_cameras_; ++i) {
    const double* c = cameras_.data() + kCameraSize * static_cast<std::size_t>(i);
    double R[9];
    angle_axis_to_rotation(c, R);
    // centre = -R' t
    const double x = -(R[0] * c[3] + R[3] * c[4] + R[6] * c[5]);
    const double y = -(R[1] * c[3] + R[4] * c[4] + R[7] * c[5]);
    const double z = -(R[2] * c[3] + R[5] * c[4] + R[8] * c[5]);
    out << x << ' ' << y << ' ' << z << " 0 255 0\n";
  }
  for (int i = 0; i < num_points_; ++i) {
    const double* q = points_.data() + kPointSize * static_cast<std::size_t>(i);
    out << q[0] << ' ' << q[1] << ' ' << q[2] << " 255 255 255\n";
  }
  if (!out) throw linalg_cuda::Error(path + ": write failed");
}

void BALProblem::add_to(ceres::Problem* problem, ceres::LossFunction* loss, Cost cost) {
  for (int i = 0; i < num_observations(); ++i) {
    const double x = observations_[2 * i], y = observations_[2 * i + 1];
    ceres::CostFunction* function =
        cost == Cost::Library
            ? SnavelyReprojectionError::Create(x, y)
            : new ceres::AutoDiffCostFunction<SnavelyReprojection, 2, 9, 3>(new SnavelyReprojection(x, y));
    problem->AddResidualBlock(function, loss, mutable_camera(camera_index_[i]), mutable_point(point_index_[i]));
  }
}

BALProblem make_synthetic_bal(const SyntheticBalOptions& o) {
  if (o.num_cameras < 2 || o.num_points < 1)
    throw InvalidArgument("make_synthetic_bal: need >= 2 cameras and >= 1 point");
  // Cameras per point: `base`, and one more for the first `extra` points.
  const long long total =
      o.num_observations > 0 ? o.num_observations : static_cast<long long>(o.num_points) * o.observations_per_point;
  const long long base = total / o.num_points, extra = total % o.num_points;
  if (base < 2 || base + (extra > 0 ? 1 : 0) > o.num_cameras)
    throw InvalidArgument(o.num_observations > 0
                              ? "make_synthetic_bal: num_observations must give every point 2 to num_cameras observations"
                              : "make_synthetic_bal: need 2 <= observations_per_point <= cameras");
  if (total > (1LL << 31) - 1) throw InvalidArgument("make_synthetic_bal: more than 2^31 - 1 observations");
  if (!(o.pixel_noise >= 0) || !(o.outlier_fraction >= 0 && o.outlier_fraction <= 1) || !(o.camera_perturbation >= 0) ||
      !(o.point_perturbation >= 0))
    throw InvalidArgument("make_synthetic_bal: noise, perturbations and outlier fraction must be >= 0 (fraction <= 1)");
  std::mt19937_64 rng(o.seed);
  std::normal_distribution<double> gauss(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  constexpr double kRadius = 10.0, kSceneRadius = 3.0, kPi = 3.14159265358979323846;

  // True cameras on a circle (with a gentle height wave), looking at the origin; BAL cameras look
  // down their -z axis, so the camera's z axis points away from the scene.
  std::vector<double> cameras(9 * static_cast<std::size_t>(o.num_cameras));
  for (int i = 0; i < o.num_cameras; ++i) {
    const double a = 2.0 * kPi * i / o.num_cameras;
    const double C[3] = {kRadius * std::cos(a), kRadius * std::sin(a), 1.5 * std::sin(3.0 * a)};
    const double norm = std::sqrt(C[0] * C[0] + C[1] * C[1] + C[2] * C[2]);
    const double z[3] = {C[0] / norm, C[1] / norm, C[2] / norm};
    double x[3] = {-z[1], z[0], 0.0};  // up (0, 0, 1) x z
    const double xn = std::sqrt(x[0] * x[0] + x[1] * x[1]);
    x[0] /= xn;
    x[1] /= xn;
    const double y[3] = {z[1] * x[2] - z[2] * x[1], z[2] * x[0] - z[0] * x[2], z[0] * x[1] - z[1] * x[0]};
    const double R[9] = {x[0], x[1], x[2], y[0], y[1], y[2], z[0], z[1], z[2]};
    double* cam = cameras.data() + 9 * static_cast<std::size_t>(i);
    rotation_to_angle_axis(R, cam);
    for (int r = 0; r < 3; ++r) cam[3 + r] = -(R[3 * r] * C[0] + R[3 * r + 1] * C[1] + R[3 * r + 2] * C[2]);
    cam[6] = 800.0 * (1.0 + 0.1 * uniform(rng));
    cam[7] = -0.05 + 0.02 * uniform(rng);
    cam[8] = 0.01 + 0.005 * uniform(rng);
  }
  std::vector<double> points(3 * static_cast<std::size_t>(o.num_points));
  for (int j = 0; j < o.num_points; ++j) {
    double* X = points.data() + 3 * static_cast<std::size_t>(j);
    do {
      for (int k = 0; k < 3; ++k) X[k] = kSceneRadius * uniform(rng);
    } while (X[0] * X[0] + X[1] * X[1] + X[2] * X[2] > kSceneRadius * kSceneRadius);
  }

  // Observations sorted by point, like the BAL files; each point seen by a run of neighbouring
  // cameras starting at a random one (as in a video sequence).
  std::vector<int> camera_index, point_index;
  std::vector<double> observations;
  camera_index.reserve(static_cast<std::size_t>(total));
  point_index.reserve(static_cast<std::size_t>(total));
  observations.reserve(2 * static_cast<std::size_t>(total));
  std::uniform_int_distribution<int> first_camera(0, o.num_cameras - 1);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<int> seen;
  for (int j = 0; j < o.num_points; ++j) {
    const int first = first_camera(rng);
    seen.resize(static_cast<std::size_t>(base + (j < extra ? 1 : 0)));
    for (std::size_t k = 0; k < seen.size(); ++k) seen[k] = (first + static_cast<int>(k)) % o.num_cameras;
    std::sort(seen.begin(), seen.end());
    for (const int c : seen) {
      double residual[2];
      // observed = 0 gives the prediction itself
      SnavelyReprojectionError model(0.0, 0.0);
      const double* params[2] = {cameras.data() + 9 * static_cast<std::size_t>(c),
                                 points.data() + 3 * static_cast<std::size_t>(j)};
      model.Evaluate(params, residual, nullptr);
      double u = residual[0] + o.pixel_noise * gauss(rng), v = residual[1] + o.pixel_noise * gauss(rng);
      if (unit(rng) < o.outlier_fraction) {
        u = 500.0 * uniform(rng);
        v = 500.0 * uniform(rng);
      }
      camera_index.push_back(c);
      point_index.push_back(j);
      observations.push_back(u);
      observations.push_back(v);
    }
  }

  // The initial estimate: the truth, perturbed.
  for (int i = 0; i < o.num_cameras; ++i) {
    double* cam = cameras.data() + 9 * static_cast<std::size_t>(i);
    for (int k = 0; k < 3; ++k) cam[k] += o.camera_perturbation * gauss(rng);
    for (int k = 3; k < 6; ++k) cam[k] += o.camera_perturbation * kRadius * gauss(rng);
    cam[6] *= 1.0 + o.camera_perturbation * gauss(rng);
  }
  for (double& v : points) v += o.point_perturbation * gauss(rng);
  return BALProblem(o.num_cameras, o.num_points, std::move(camera_index), std::move(point_index),
                    std::move(observations), std::move(cameras), std::move(points));
}

}  // namespace ceres_cuda
