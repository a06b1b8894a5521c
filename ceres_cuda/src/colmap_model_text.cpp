// ColmapModel's text form, as COLMAP 3.8's Reconstruction::ReadText and WriteText: one line per camera,
// two per image (its pose, camera and name; then its points as x y point3D_id triples, -1 for none,
// the line empty when it has none), one per 3-D point (position, colour, error, then its track as
// image_id point2D_idx pairs); lines starting with '#' are comments. Fields are separated by blanks.
// Reading goes a line at a time, so that a read takes the model and its longest line.
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ceres_cuda/colmap_model.h"
#include "colmap_model_io.h"
#include "linalg_cuda/errors.h"
#include "linalg_cuda/internal/file_errors.h"

namespace ceres_cuda {
namespace {

// A text file's lines, numbered from 1.
class Lines {
 public:
  explicit Lines(const std::string& path) : path_(path), in_(path) {
    if (!in_) throw linalg_cuda::Error(path + ": cannot open: " + std::strerror(errno));
  }

  // The next line with data (comments and blank lines skipped), trimmed; false at the end.
  bool next_record(std::string* line) {
    while (next_line(line))
      if (!line->empty() && (*line)[0] != '#') return true;
    return false;
  }

  // The next line whatever it holds, trimmed; false at the end.
  bool next_line(std::string* line) {
    if (!std::getline(in_, *line)) {
      if (in_.bad()) fail("cannot read on: " + std::string(std::strerror(errno)));
      return false;
    }
    ++number_;
    if (line->find('\0') != std::string::npos) fail("the line holds a NUL byte; expected text");
    // Trimmed in place: a model's text has millions of lines.
    const std::size_t first = line->find_first_not_of(" \t\r");
    if (first == std::string::npos) {
      line->clear();
      return true;
    }
    line->erase(line->find_last_not_of(" \t\r") + 1);
    line->erase(0, first);
    return true;
  }

  long number() const { return number_; }
  const std::string& path() const { return path_; }
  [[noreturn]] void fail(const std::string& message) const { throw linalg_cuda::ParseError(path_, number_, message); }

 private:
  std::string path_;
  std::ifstream in_;
  long number_ = 0;
};

std::vector<std::string_view> fields_of(const std::string& line) {
  std::vector<std::string_view> fields;
  std::size_t at = 0;
  while (at < line.size()) {
    const std::size_t start = line.find_first_not_of(" \t", at);
    if (start == std::string::npos) break;
    const std::size_t end = std::min(line.find_first_of(" \t", start), line.size());
    fields.emplace_back(line.data() + start, end - start);
    at = end;
  }
  return fields;
}

std::string quoted(std::string_view field) {
  return "\"" + std::string(field.substr(0, 40)) + (field.size() > 40 ? "...\"" : "\"");
}

double finite_number(const Lines& lines, std::string_view field, const char* what) {
  double value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc() || end != field.data() + field.size())
    lines.fail("expected " + std::string(what) + " (a number), found " + quoted(field));
  if (!std::isfinite(value)) lines.fail(std::string(what) + " is " + quoted(field) + ", not a finite number");
  return value;
}

template <typename T>
T whole_number(const Lines& lines, std::string_view field, const char* what) {
  T value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc() || end != field.data() + field.size())
    lines.fail("expected " + std::string(what) + " (a whole number from 0 to " +
               std::to_string(std::numeric_limits<T>::max()) + "), found " + quoted(field));
  return value;
}

// A point's id in an image's points, where -1 says it observes none.
std::uint64_t observed_point(const Lines& lines, std::string_view field) {
  if (field == "-1") return kColmapNoPoint3D;
  const std::uint64_t id = whole_number<std::uint64_t>(lines, field, "a 3-D point id or -1");
  if (id == kColmapNoPoint3D) lines.fail("3-D point id " + std::to_string(id) + " is COLMAP's \"none\"; write -1");
  return id;
}

void read_cameras(const std::string& path, ColmapModel* model, std::map<std::uint64_t, std::uint64_t>* line_of) {
  Lines lines(path);
  std::string line;
  while (lines.next_record(&line)) {
    const std::vector<std::string_view> f = fields_of(line);
    if (f.size() < 4) lines.fail("expected CAMERA_ID MODEL WIDTH HEIGHT PARAMS[], found " + std::to_string(f.size()) + " fields");
    const auto id = whole_number<std::uint32_t>(lines, f[0], "a camera id");
    ColmapCamera camera;
    if (!colmap_camera_model_from_name(std::string(f[1]), &camera.model))
      lines.fail("camera " + std::to_string(id) + ": unknown camera model " + quoted(f[1]));
    camera.width = whole_number<std::uint64_t>(lines, f[2], "a width");
    camera.height = whole_number<std::uint64_t>(lines, f[3], "a height");
    const std::size_t expected = static_cast<std::size_t>(colmap_camera_model_num_params(camera.model));
    if (f.size() - 4 != expected)
      lines.fail("camera " + std::to_string(id) + ": " + colmap_camera_model_name(camera.model) + " takes " +
                 std::to_string(expected) + " parameters, the line has " + std::to_string(f.size() - 4));
    for (std::size_t k = 4; k < f.size(); ++k) camera.params.push_back(finite_number(lines, f[k], "a parameter"));
    if (!model->cameras.emplace(id, std::move(camera)).second) lines.fail("camera " + std::to_string(id) + " again");
    (*line_of)[id] = static_cast<std::uint64_t>(lines.number());
  }
}

void read_images(const std::string& path, ColmapModel* model, std::map<std::uint64_t, std::uint64_t>* line_of) {
  Lines lines(path);
  std::string line;
  while (lines.next_record(&line)) {
    const std::vector<std::string_view> f = fields_of(line);
    if (f.size() != 10)
      lines.fail("expected IMAGE_ID QW QX QY QZ TX TY TZ CAMERA_ID NAME, found " + std::to_string(f.size()) + " fields");
    const auto id = whole_number<std::uint32_t>(lines, f[0], "an image id");
    ColmapImage image;
    for (int k = 0; k < 4; ++k) image.qvec[k] = finite_number(lines, f[1 + k], "a quaternion value");
    for (int k = 0; k < 3; ++k) image.tvec[k] = finite_number(lines, f[5 + k], "a translation");
    if (!detail::normalize_qvec(&image.qvec)) lines.fail("image " + std::to_string(id) + ": its quaternion has no length");
    image.camera_id = whole_number<std::uint32_t>(lines, f[8], "a camera id");
    image.name = std::string(f[9]);
    if (image.name.find('\r') != std::string::npos)
      lines.fail("image " + std::to_string(id) + ": its name holds a carriage return");
    const long first_line = lines.number();
    if (!lines.next_line(&line)) lines.fail("image " + std::to_string(id) + " has no line of points (X Y POINT3D_ID ...)");
    const std::vector<std::string_view> p = fields_of(line);
    if (p.size() % 3 != 0)
      lines.fail("image " + std::to_string(id) + ": expected X Y POINT3D_ID triples, found " + std::to_string(p.size()) +
                 " fields");
    image.points2D.resize(p.size() / 3);
    for (std::size_t k = 0; k < image.points2D.size(); ++k) {
      image.points2D[k].x = finite_number(lines, p[3 * k], "an x coordinate");
      image.points2D[k].y = finite_number(lines, p[3 * k + 1], "a y coordinate");
      image.points2D[k].point3D_id = observed_point(lines, p[3 * k + 2]);
    }
    if (!model->images.emplace(id, std::move(image)).second) lines.fail("image " + std::to_string(id) + " again");
    model->image_file_order.push_back(id);
    (*line_of)[id] = static_cast<std::uint64_t>(first_line);
  }
}

void read_points(const std::string& path, ColmapModel* model, std::map<std::uint64_t, std::uint64_t>* line_of) {
  Lines lines(path);
  std::string line;
  while (lines.next_record(&line)) {
    const std::vector<std::string_view> f = fields_of(line);
    if (f.size() < 8 || (f.size() - 8) % 2 != 0)
      lines.fail("expected POINT3D_ID X Y Z R G B ERROR then IMAGE_ID POINT2D_IDX pairs, found " +
                 std::to_string(f.size()) + " fields");
    const std::uint64_t id = whole_number<std::uint64_t>(lines, f[0], "a 3-D point id");
    if (id == kColmapNoPoint3D) lines.fail("3-D point id " + std::to_string(id) + " is COLMAP's \"none\"");
    ColmapPoint3D point;
    for (int k = 0; k < 3; ++k) point.xyz[k] = finite_number(lines, f[1 + k], "a coordinate");
    for (int k = 0; k < 3; ++k) point.rgb[k] = whole_number<std::uint8_t>(lines, f[4 + k], "a colour value");
    point.error = finite_number(lines, f[7], "an error");
    point.track.resize((f.size() - 8) / 2);
    for (std::size_t k = 0; k < point.track.size(); ++k) {
      point.track[k].image_id = whole_number<std::uint32_t>(lines, f[8 + 2 * k], "an image id");
      point.track[k].point2D_idx = whole_number<std::uint32_t>(lines, f[9 + 2 * k], "an image point index");
    }
    if (!model->points3D.emplace(id, std::move(point)).second) lines.fail("3-D point " + std::to_string(id) + " again");
    (*line_of)[id] = static_cast<std::uint64_t>(lines.number());
  }
}

}  // namespace

ColmapModel ColmapModel::read_text(const std::string& folder) try {
  ColmapModel model;
  detail::ColmapRecordPlaces read{{folder + "/cameras.txt", folder + "/images.txt", folder + "/points3D.txt"}, {}};
  read_cameras(read.files[0], &model, &read.places[0]);
  read_images(read.files[1], &model, &read.places[1]);
  read_points(read.files[2], &model, &read.places[2]);
  detail::throw_first_colmap_problem(model, read, [](const std::string& file, std::uint64_t line, const std::string& message) {
    return linalg_cuda::ParseError(file, static_cast<long>(line), message);
  });
  return model;
} catch (const linalg_cuda::Error&) {
  throw;
} catch (...) {
  linalg_cuda::detail::rethrow_with_file_context(folder);
}

void ColmapModel::write_text(const std::string& folder) const {
  for (const auto& [id, image] : images)
    if (image.name.empty() || image.name.find_first_of(std::string(" \t\r\n\0", 5)) != std::string::npos)
      throw linalg_cuda::InvalidArgument("ColmapModel::write_text: image " + std::to_string(id) +
                                         "'s name is empty or holds blanks or a NUL, which the text form cannot hold");
  detail::ColmapOutputFile cameras_file(folder + "/cameras.txt", "w");
  std::FILE* out = cameras_file.get();
  std::fprintf(out, "# Camera list with one line of data per camera:\n#   CAMERA_ID, MODEL, WIDTH, HEIGHT, PARAMS[]\n");
  std::fprintf(out, "# Number of cameras: %zu\n", cameras.size());
  for (const auto& [id, camera] : cameras) {
    std::fprintf(out, "%u %s %llu %llu", id, colmap_camera_model_name(camera.model),
                 static_cast<unsigned long long>(camera.width), static_cast<unsigned long long>(camera.height));
    for (const double p : camera.params) std::fprintf(out, " %.17g", p);
    std::fputc('\n', out);
  }
  cameras_file.close();

  detail::ColmapOutputFile images_file(folder + "/images.txt", "w");
  out = images_file.get();
  std::fprintf(out, "# Image list with two lines of data per image:\n");
  std::fprintf(out, "#   IMAGE_ID, QW, QX, QY, QZ, TX, TY, TZ, CAMERA_ID, NAME\n#   POINTS2D[] as (X, Y, POINT3D_ID)\n");
  std::fprintf(out, "# Number of images: %zu, mean observations per image: %.17g\n", images.size(),
               images.empty() ? 0.0 : static_cast<double>(num_observations()) / static_cast<double>(images.size()));
  for (const std::uint32_t id : registration_order()) {
    const ColmapImage& image = images.at(id);
    std::fprintf(out, "%u %.17g %.17g %.17g %.17g %.17g %.17g %.17g %u %s\n", id, image.qvec[0], image.qvec[1],
                 image.qvec[2], image.qvec[3], image.tvec[0], image.tvec[1], image.tvec[2], image.camera_id,
                 image.name.c_str());
    for (std::size_t k = 0; k < image.points2D.size(); ++k) {
      const ColmapImagePoint& p = image.points2D[k];
      std::fprintf(out, k == 0 ? "%.17g %.17g " : " %.17g %.17g ", p.x, p.y);
      if (p.point3D_id == kColmapNoPoint3D)
        std::fputs("-1", out);
      else
        std::fprintf(out, "%llu", static_cast<unsigned long long>(p.point3D_id));
    }
    std::fputc('\n', out);
  }
  images_file.close();

  detail::ColmapOutputFile points_file(folder + "/points3D.txt", "w");
  out = points_file.get();
  std::fprintf(out, "# 3D point list with one line of data per point:\n");
  std::fprintf(out, "#   POINT3D_ID, X, Y, Z, R, G, B, ERROR, TRACK[] as (IMAGE_ID, POINT2D_IDX)\n");
  std::size_t track_elements = 0;
  for (const auto& [id, point] : points3D) track_elements += point.track.size();
  std::fprintf(out, "# Number of points: %zu, mean track length: %.17g\n", points3D.size(),
               points3D.empty() ? 0.0 : static_cast<double>(track_elements) / static_cast<double>(points3D.size()));
  for (const auto& [id, point] : points3D) {
    std::fprintf(out, "%llu %.17g %.17g %.17g %d %d %d %.17g", static_cast<unsigned long long>(id), point.xyz[0],
                 point.xyz[1], point.xyz[2], point.rgb[0], point.rgb[1], point.rgb[2], point.error);
    for (const ColmapTrackElement& e : point.track) std::fprintf(out, " %u %u", e.image_id, e.point2D_idx);
    std::fputc('\n', out);
  }
  points_file.close();
}

}  // namespace ceres_cuda
