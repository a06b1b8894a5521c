// Map output: ROS map_server PGM/YAML and the PNG, checked byte by byte on small hand-made grids.
#include "gridmap_cuda/map_io.h"

#include <png.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gridmap_cuda/occupancy_grid.h"
#include "linalg_cuda/errors.h"

namespace gridmap_cuda {
namespace {

namespace fs = std::filesystem;

double logit(double p) { return std::log(p / (1.0 - p)); }

// A folder of its own under the system's temporary folder, removed at the end of the test.
class MapIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("gridmap_map_io_" + std::string(info->name()) + "_" +
            std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "_" +
            std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

// A width x height grid with prior 0, every cell unknown at log-odds 0.
OccupancyGrid make_grid(int width, int height, double resolution = 0.05, double origin_x = 0.0,
                        double origin_y = 0.0) {
  OccupancyGrid grid;
  grid.spec.resolution = resolution;
  grid.spec.origin_x = origin_x;
  grid.spec.origin_y = origin_y;
  grid.spec.width = width;
  grid.spec.height = height;
  grid.prior_log_odds = 0.0;
  grid.evidence.assign(grid.spec.cells(), 0);
  grid.known.assign(grid.spec.cells(), 0);
  return grid;
}

void set_cell(OccupancyGrid& grid, int x, int y, double log_odds) {
  const std::size_t cell = grid.index(x, y);
  grid.evidence[cell] = std::llround(log_odds * kEvidenceScale);
  grid.known[cell] = 1;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

struct Pgm {
  std::string header;
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels;
};

// Splits a P5 file in the exact layout save_ros_map writes (four header lines).
Pgm read_pgm(const fs::path& path) {
  const std::string bytes = read_file(path);
  Pgm pgm;
  std::size_t pos = 0;
  for (int line = 0; line < 4; ++line) {
    const std::size_t end = bytes.find('\n', pos);
    if (end == std::string::npos) return pgm;
    pos = end + 1;
  }
  pgm.header = bytes.substr(0, pos);
  std::istringstream lines(pgm.header);
  std::string magic, comment;
  std::getline(lines, magic);
  std::getline(lines, comment);
  lines >> pgm.width >> pgm.height;
  pgm.pixels.assign(bytes.begin() + static_cast<std::ptrdiff_t>(pos), bytes.end());
  return pgm;
}

std::map<std::string, std::string> read_yaml(const fs::path& path) {
  std::map<std::string, std::string> values;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const std::size_t colon = line.find(": ");
    if (colon == std::string::npos) continue;
    values[line.substr(0, colon)] = line.substr(colon + 2);
  }
  return values;
}

struct Rgb {
  int width = 0, height = 0;
  std::vector<std::uint8_t> pixels;  // row-major, top row first, 3 bytes per pixel
  const std::uint8_t* at(int col, int row) const { return &pixels[3 * (static_cast<std::size_t>(row) * width + col)]; }
};

Rgb read_png_rgb(const fs::path& path, bool* is_rgb8) {
  Rgb out;
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.string().c_str())) {
    ADD_FAILURE() << "cannot read " << path << ": " << image.message;
    return out;
  }
  *is_rgb8 = image.format == PNG_FORMAT_RGB;  // as stored: 8-bit RGB without alpha
  image.format = PNG_FORMAT_RGB;
  out.width = static_cast<int>(image.width);
  out.height = static_cast<int>(image.height);
  out.pixels.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.pixels.data(), 0, nullptr)) {
    ADD_FAILURE() << "cannot decode " << path << ": " << image.message;
  }
  return out;
}

TEST_F(MapIoTest, PgmHeaderFlipAndClasses) {
  // 4 x 3 grid; grid row y appears as image row 2 - y.
  OccupancyGrid grid = make_grid(4, 3, 0.05, -1.5, 2.25);
  const double eps = 1e-4;
  set_cell(grid, 0, 0, logit(0.65) + eps);   // just above occupied_thresh: occupied
  set_cell(grid, 1, 0, logit(0.65) - eps);   // just below: in between -> 205
  set_cell(grid, 2, 0, logit(0.196) - eps);  // just below free_thresh: free
  set_cell(grid, 3, 0, logit(0.196) + eps);  // just above: in between -> 205
  set_cell(grid, 0, 2, 5.0);                 // top row: occupied
  set_cell(grid, 3, 2, -5.0);                // top row: free
  set_cell(grid, 1, 1, 0.0);                 // known, p = 0.5: 205
  grid.evidence[grid.index(2, 1)] = std::llround(9.0 * kEvidenceScale);  // strong evidence, but unknown: 205

  const fs::path prefix = dir_ / "map";
  save_ros_map(grid, prefix.string());
  const Pgm pgm = read_pgm(dir_ / "map.pgm");
  EXPECT_EQ(pgm.header, "P5\n# CREATOR: cuda_solvers gridmap_cuda 0.05 m/pix\n4 3\n255\n");
  ASSERT_EQ(pgm.width, 4);
  ASSERT_EQ(pgm.height, 3);
  ASSERT_EQ(pgm.pixels.size(), 12u);
  const std::vector<std::uint8_t> expected = {
      0,   205, 205, 254,  // grid row 2
      205, 205, 205, 205,  // grid row 1
      0,   205, 254, 205,  // grid row 0
  };
  EXPECT_EQ(pgm.pixels, expected);
}

TEST_F(MapIoTest, PgmUsesTheGivenThresholds) {
  OccupancyGrid grid = make_grid(3, 1);
  set_cell(grid, 0, 0, logit(0.8));  // occupied at 0.65, in between at 0.9
  set_cell(grid, 1, 0, logit(0.15));  // free at 0.196, in between at 0.1
  set_cell(grid, 2, 0, logit(0.95));
  RosMapOptions options;
  options.occupied_thresh = 0.9;
  options.free_thresh = 0.1;
  save_ros_map(grid, (dir_ / "custom").string(), options);
  EXPECT_EQ(read_pgm(dir_ / "custom.pgm").pixels, (std::vector<std::uint8_t>{205, 205, 0}));
  const auto yaml = read_yaml(dir_ / "custom.yaml");
  EXPECT_EQ(std::strtod(yaml.at("occupied_thresh").c_str(), nullptr), 0.9);
  EXPECT_EQ(std::strtod(yaml.at("free_thresh").c_str(), nullptr), 0.1);

  save_ros_map(grid, (dir_ / "default").string());
  EXPECT_EQ(read_pgm(dir_ / "default.pgm").pixels, (std::vector<std::uint8_t>{0, 254, 0}));
}

TEST_F(MapIoTest, YamlDescribesTheMap) {
  const double origin_x = 0.1 * 3;  // 0.30000000000000004: needs all 17 digits to round-trip
  const double origin_y = -12.345;
  OccupancyGrid grid = make_grid(5, 2, 0.025, origin_x, origin_y);
  save_ros_map(grid, (dir_ / "office").string());

  const auto yaml = read_yaml(dir_ / "office.yaml");
  ASSERT_EQ(yaml.count("image"), 1u);
  EXPECT_EQ(yaml.at("image"), "office.pgm");  // relative, as map_server resolves it next to the YAML
  EXPECT_EQ(std::strtod(yaml.at("resolution").c_str(), nullptr), 0.025);
  EXPECT_EQ(yaml.at("negate"), "0");
  EXPECT_EQ(yaml.at("mode"), "trinary");
  EXPECT_EQ(std::strtod(yaml.at("occupied_thresh").c_str(), nullptr), 0.65);
  EXPECT_EQ(std::strtod(yaml.at("free_thresh").c_str(), nullptr), 0.196);

  std::string origin = yaml.at("origin");
  ASSERT_GE(origin.size(), 2u);
  ASSERT_EQ(origin.front(), '[');
  ASSERT_EQ(origin.back(), ']');
  for (char& c : origin) {
    if (c == '[' || c == ']' || c == ',') c = ' ';
  }
  std::istringstream numbers(origin);
  std::string x, y, yaw, extra;
  numbers >> x >> y >> yaw;
  EXPECT_FALSE(numbers >> extra);
  EXPECT_EQ(std::strtod(x.c_str(), nullptr), origin_x);
  EXPECT_EQ(std::strtod(y.c_str(), nullptr), origin_y);
  EXPECT_EQ(std::strtod(yaw.c_str(), nullptr), 0.0);

  // The PGM next to it is all unknown.
  const Pgm pgm = read_pgm(dir_ / "office.pgm");
  EXPECT_EQ(pgm.pixels, std::vector<std::uint8_t>(10, 205));
}

TEST_F(MapIoTest, PngShowsProbabilitiesTopDown) {
  OccupancyGrid grid = make_grid(3, 2);
  set_cell(grid, 0, 0, 0.0);        // p = 0.5  -> 128 (round(127.5))
  set_cell(grid, 1, 0, 20.0);       // p ~ 1    -> 0
  set_cell(grid, 2, 0, -20.0);      // p ~ 0    -> 255
  set_cell(grid, 0, 1, logit(0.25));  // -> round(191.25) = 191
  // (1, 1) and (2, 1) unknown.
  const fs::path path = dir_ / "map.png";
  save_png(grid, path.string());

  bool is_rgb8 = false;
  const Rgb image = read_png_rgb(path, &is_rgb8);
  EXPECT_TRUE(is_rgb8);
  ASSERT_EQ(image.width, 3);
  ASSERT_EQ(image.height, 2);
  auto grey = [&](int col, int row) {
    const std::uint8_t* p = image.at(col, row);
    EXPECT_EQ(p[0], p[1]);
    EXPECT_EQ(p[1], p[2]);
    return static_cast<int>(p[0]);
  };
  // Image row 1 = grid row 0.
  EXPECT_EQ(grey(0, 1), 128);
  EXPECT_EQ(grey(1, 1), 0);
  EXPECT_EQ(grey(2, 1), 255);
  // Image row 0 = grid row 1.
  EXPECT_EQ(grey(0, 0), 191);
  for (int col : {1, 2}) {
    const std::uint8_t* p = image.at(col, 0);
    EXPECT_EQ(p[0], 200);
    EXPECT_EQ(p[1], 215);
    EXPECT_EQ(p[2], 230);
  }
}

TEST_F(MapIoTest, LargerPngRoundTrips) {
  OccupancyGrid grid = make_grid(300, 200);
  for (int y = 0; y < 200; ++y) {
    for (int x = 0; x < 300; ++x) {
      if ((x + y) % 7 == 0) continue;  // unknown
      set_cell(grid, x, y, (x - 150) / 30.0);
    }
  }
  const fs::path path = dir_ / "big.png";
  save_png(grid, path.string());
  bool is_rgb8 = false;
  const Rgb image = read_png_rgb(path, &is_rgb8);
  ASSERT_EQ(image.width, 300);
  ASSERT_EQ(image.height, 200);
  for (int y = 0; y < 200; y += 13) {
    for (int x = 0; x < 300; x += 11) {
      const std::uint8_t* p = image.at(x, 199 - y);
      if ((x + y) % 7 == 0) {
        EXPECT_EQ(p[0], 200);
        EXPECT_EQ(p[2], 230);
      } else {
        const double prob = grid.probability(grid.index(x, y));
        EXPECT_EQ(p[0], std::lround(255.0 * (1.0 - prob)));
      }
    }
  }
}

TEST_F(MapIoTest, MissingDirectoryThrowsWithThePath) {
  OccupancyGrid grid = make_grid(2, 2);
  const std::string prefix = (dir_ / "no_such_dir" / "map").string();
  try {
    save_ros_map(grid, prefix);
    FAIL() << "save_ros_map did not throw";
  } catch (const linalg_cuda::Error& e) {
    EXPECT_NE(std::string(e.what()).find(prefix + ".pgm"), std::string::npos) << e.what();
  }
  const std::string png = (dir_ / "no_such_dir" / "map.png").string();
  try {
    save_png(grid, png);
    FAIL() << "save_png did not throw";
  } catch (const linalg_cuda::Error& e) {
    EXPECT_NE(std::string(e.what()).find(png), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir_ / "no_such_dir"));
}

TEST_F(MapIoTest, WriteErrorsThrow) {
  // /dev/full accepts the open and fails every write: small files fail at the close, large ones inside
  // libpng (its error comes back by longjmp and is turned into the exception outside libpng).
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  OccupancyGrid small = make_grid(2, 2);
  EXPECT_THROW(save_png(small, "/dev/full"), linalg_cuda::Error);
  OccupancyGrid large = make_grid(1000, 1000);
  std::uint64_t state = 12345;
  for (std::size_t c = 0; c < large.spec.cells(); ++c) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    large.evidence[c] = static_cast<std::int64_t>(state >> 40) - (1LL << 23);
    large.known[c] = static_cast<std::uint8_t>((state >> 20) & 1);
  }
  try {
    save_png(large, "/dev/full");
    FAIL() << "save_png did not throw";
  } catch (const linalg_cuda::Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
    std::printf("%s\n", e.what());
  }
}

TEST_F(MapIoTest, InvalidInputsThrow) {
  OccupancyGrid grid = make_grid(2, 2);
  RosMapOptions bad;
  bad.free_thresh = 0.8;  // above occupied_thresh
  EXPECT_THROW(save_ros_map(grid, (dir_ / "a").string(), bad), linalg_cuda::InvalidArgument);
  bad = RosMapOptions{};
  bad.occupied_thresh = std::nan("");
  EXPECT_THROW(save_ros_map(grid, (dir_ / "a").string(), bad), linalg_cuda::InvalidArgument);

  OccupancyGrid short_grid = grid;
  short_grid.known.pop_back();
  EXPECT_THROW(save_ros_map(short_grid, (dir_ / "b").string()), linalg_cuda::InvalidArgument);
  EXPECT_THROW(save_png(short_grid, (dir_ / "b.png").string()), linalg_cuda::InvalidArgument);

  OccupancyGrid empty = make_grid(0, 0);
  EXPECT_THROW(save_png(empty, (dir_ / "c.png").string()), linalg_cuda::InvalidArgument);
}

}  // namespace
}  // namespace gridmap_cuda
