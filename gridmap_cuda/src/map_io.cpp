// Map output: ROS map_server files (PGM + YAML) and a PNG for people.
//
// Both images are written top-down (image row r shows grid row height - 1 - r), their rows made on all
// threads: the PGM whole in memory (a byte a cell), the PNG in bands deflated in parallel
// (parallel_png.h).
#include "gridmap_cuda/map_io.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gridmap_cuda/grid_mapper.h"
#include "linalg_cuda/errors.h"
#include "parallel_png.h"
#include "value_codec.h"

namespace gridmap_cuda {
namespace {

using detail::kRosFree;
using detail::kRosOccupied;
using detail::kRosUnknown;
constexpr std::uint8_t kUnknownRgb[3] = {200, 215, 230};

// The shortest "%.Ng" text that reads back as the same double (at most 17 digits), with ".0" added to
// whole numbers so that YAML readers see a float.
std::string format_double(double v) {
  char buf[64];
  for (int precision = 15; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string text = buf;
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // n: inf / nan (rejected earlier)
  return text;
}

std::string errno_text(int err) { return err != 0 ? std::string(": ") + std::strerror(err) : std::string(); }

void check_not_empty(const GridSpec& spec, const char* function) {
  if (spec.width <= 0 || spec.height <= 0) {
    throw linalg_cuda::InvalidArgument(std::string(function) + ": the grid is empty (" + std::to_string(spec.width) +
                                       " x " + std::to_string(spec.height) + " cells)");
  }
}

void check_grid(const OccupancyGrid& grid, const char* function) {
  const GridSpec& spec = grid.spec;
  const std::string where = std::string(function) + ": ";
  check_not_empty(spec, function);
  if (!std::isfinite(spec.resolution) || spec.resolution <= 0.0 || !std::isfinite(spec.origin_x) ||
      !std::isfinite(spec.origin_y)) {
    throw linalg_cuda::InvalidArgument(where + "the grid's resolution must be positive and its origin finite");
  }
  if (grid.evidence.size() != spec.cells() || grid.known.size() != spec.cells()) {
    throw linalg_cuda::InvalidArgument(where + "the grid holds " + std::to_string(grid.evidence.size()) +
                                       " evidence values and " + std::to_string(grid.known.size()) +
                                       " known flags for " + std::to_string(spec.cells()) + " cells");
  }
}

// A FILE* that closes itself; close() reports whether everything reached the file.
class OutputFile {
 public:
  OutputFile(const std::string& path, const char* function) : path_(path), function_(function) {
    errno = 0;
    file_ = std::fopen(path.c_str(), "wb");
    if (file_ == nullptr) fail("cannot open", errno);
  }
  ~OutputFile() {
    if (file_ != nullptr) std::fclose(file_);
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::FILE* get() const { return file_; }

  void write(const void* data, std::size_t bytes) {
    errno = 0;
    if (bytes != 0 && std::fwrite(data, 1, bytes, file_) != bytes) fail("cannot write", errno);
  }
  void write(const std::string& text) { write(text.data(), text.size()); }

  void close() {
    errno = 0;
    const bool had_error = std::ferror(file_) != 0;
    const int rc = std::fclose(file_);
    const int err = errno;
    file_ = nullptr;
    if (had_error || rc != 0) fail("cannot write", err);
  }

  [[noreturn]] void fail(const std::string& what, int err) const {
    throw linalg_cuda::Error(std::string(function_) + ": " + what + " '" + path_ + "'" + errno_text(err));
  }

 private:
  std::string path_;
  const char* function_;
  std::FILE* file_ = nullptr;
};

// One image row (grid row y) in ROS trinary values.
void ros_row(const OccupancyGrid& grid, int y, const RosMapOptions& options, std::uint8_t* out) {
  for (int x = 0; x < grid.spec.width; ++x) {
    const std::size_t cell = grid.index(x, y);
    std::uint8_t value = kRosUnknown;
    if (grid.known[cell] != 0) {
      const double p = grid.probability(cell);
      if (p > options.occupied_thresh) {
        value = kRosOccupied;
      } else if (p < options.free_thresh) {
        value = kRosFree;
      }
    }
    out[x] = value;
  }
}

// One image row (grid row y) in RGB.
void rgb_row(const OccupancyGrid& grid, int y, std::uint8_t* out) {
  for (int x = 0; x < grid.spec.width; ++x) {
    const std::size_t cell = grid.index(x, y);
    std::uint8_t* px = out + 3 * static_cast<std::size_t>(x);
    if (grid.known[cell] != 0) {
      const double p = std::clamp(grid.probability(cell), 0.0, 1.0);
      const auto grey = static_cast<std::uint8_t>(std::lround(255.0 * (1.0 - p)));
      px[0] = px[1] = px[2] = grey;
    } else {
      px[0] = kUnknownRgb[0];
      px[1] = kUnknownRgb[1];
      px[2] = kUnknownRgb[2];
    }
  }
}

// A YAML scalar for a file name: plain when that is safe, else double-quoted.
std::string yaml_string(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.' || c == '+';
    plain = plain && ok;
  }
  if (plain && s[0] != '-' && s[0] != '.') return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// PREFIX.pgm from `image` (top-down rows, a byte a cell) and PREFIX.yaml.
void write_ros_map(const GridSpec& spec, const std::uint8_t* image, const std::string& prefix,
                   const RosMapOptions& options) {
  const std::string pgm_path = prefix + ".pgm";
  const std::string yaml_path = prefix + ".yaml";
  const std::string image_name = std::filesystem::path(prefix).filename().string() + ".pgm";
  {
    OutputFile pgm(pgm_path, "save_ros_map");
    pgm.write("P5\n# CREATOR: cuda_solvers gridmap_cuda " + format_double(spec.resolution) + " m/pix\n" +
              std::to_string(spec.width) + " " + std::to_string(spec.height) + "\n255\n");
    pgm.write(image, spec.cells());
    pgm.close();
  }
  OutputFile yaml(yaml_path, "save_ros_map");
  yaml.write("image: " + yaml_string(image_name) + "\n" +
             "resolution: " + format_double(spec.resolution) + "\n" +
             "origin: [" + format_double(spec.origin_x) + ", " + format_double(spec.origin_y) + ", 0.0]\n" +
             "negate: 0\n" +
             "occupied_thresh: " + format_double(options.occupied_thresh) + "\n" +
             "free_thresh: " + format_double(options.free_thresh) + "\n" +
             "mode: trinary\n");
  yaml.close();
}

// The picture's palette for nav_msgs values: entry v (0..100) is the grey of probability v / 100,
// entry 101 the unknown colour.
constexpr int kUnknownIndex = 101;

std::vector<std::uint8_t> percent_palette() {
  std::vector<std::uint8_t> palette;
  for (int v = 0; v <= 100; ++v)
    palette.insert(palette.end(), 3, static_cast<std::uint8_t>(std::lround(2.55 * (100 - v))));
  palette.insert(palette.end(), kUnknownRgb, kUnknownRgb + 3);
  return palette;
}

}  // namespace

void save_ros_map(const OccupancyGrid& grid, const std::string& prefix, const RosMapOptions& options) {
  check_grid(grid, "save_ros_map");
  detail::validate_ros_options(options, "save_ros_map");
  if (prefix.empty()) throw linalg_cuda::InvalidArgument("save_ros_map: empty prefix");
  // The image at once, its rows on all threads (a probability per cell), then one write.
  const GridSpec& spec = grid.spec;
  const auto width = static_cast<std::size_t>(spec.width);
  std::vector<std::uint8_t> image(width * static_cast<std::size_t>(spec.height));
#pragma omp parallel for schedule(static)
  for (int r = 0; r < spec.height; ++r) ros_row(grid, spec.height - 1 - r, options, image.data() + r * width);
  write_ros_map(spec, image.data(), prefix, options);
}

void save_ros_map(const GridMapper& mapper, const std::string& prefix, const RosMapOptions& options) {
  detail::validate_ros_options(options, "save_ros_map");
  if (prefix.empty()) throw linalg_cuda::InvalidArgument("save_ros_map: empty prefix");
  const GridSpec extent = mapper.extent();
  check_not_empty(extent, "save_ros_map");
  const std::vector<std::uint8_t> image = mapper.ros_image(options);
  write_ros_map(extent, image.data(), prefix, options);
}

void save_png(const OccupancyGrid& grid, const std::string& path) {
  check_grid(grid, "save_png");
  if (path.empty()) throw linalg_cuda::InvalidArgument("save_png: empty path");
  OutputFile file(path, "save_png");
  const int height = grid.spec.height;
  const std::string error = detail::write_parallel_png(
      file.get(), grid.spec.width, height, [&](int row, std::uint8_t* rgb) { rgb_row(grid, height - 1 - row, rgb); });
  if (!error.empty()) file.fail(error, errno);
  file.close();
}

void save_png(const GridMapper& mapper, const std::string& path) {
  if (path.empty()) throw linalg_cuda::InvalidArgument("save_png: empty path");
  const OccupancyValues values = mapper.occupancy_values();
  check_not_empty(values.spec, "save_png");
  const int width = values.spec.width, height = values.spec.height;
  OutputFile file(path, "save_png");
  const std::string error = detail::write_parallel_indexed_png(
      file.get(), width, height, percent_palette(), [&](int row, std::uint8_t* indices) {
        const std::int8_t* v = values.data.data() + static_cast<std::size_t>(height - 1 - row) * width;
        for (int x = 0; x < width; ++x) indices[x] = v[x] < 0 ? kUnknownIndex : static_cast<std::uint8_t>(v[x]);
      });
  if (!error.empty()) file.fail(error, errno);
  file.close();
}

}  // namespace gridmap_cuda
