// The 8-bit maps a GridMapper computes where its map is (nav_msgs values, map_server's image, the
// changed region of a scan) against the host-side conversion of its log-odds, on both backends.
#include <png.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "gridmap_cuda/carmen_log.h"
#include "gridmap_cuda/grid_mapper.h"
#include "gridmap_cuda/map_io.h"
#include "gridmap_cuda/synthetic_log.h"
#include "linalg_cuda/errors.h"
#include "../../gridmap_cuda/src/value_codec.h"
#include "test_support.h"

namespace gridmap_cuda {
namespace {

namespace fs = std::filesystem;

std::vector<LaserScan> synthetic(int scans, unsigned seed) {
  SyntheticLogOptions options;
  options.scans = scans;
  options.seed = seed;
  return make_synthetic_log(options).scans;
}

// The ROS trinary value of a cell as save_ros_map(OccupancyGrid) decides it.
std::uint8_t host_trinary(const OccupancyGrid& grid, std::size_t cell, const RosMapOptions& options) {
  if (!grid.known[cell]) return detail::kRosUnknown;
  const double p = grid.probability(cell);
  if (p > options.occupied_thresh) return detail::kRosOccupied;
  return p < options.free_thresh ? detail::kRosFree : detail::kRosUnknown;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class MapValues : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::Cuda) REQUIRE_CUDA_DEVICE();
    dir_ = fs::temp_directory_path() /
           ("gridmap_values_" + std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()) + "_" +
            std::to_string(reinterpret_cast<std::uintptr_t>(this)));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Every 8-bit form of the mapper's map against the host's conversion of map().
  void expect_values_match_host(const GridMapper& mapper, const std::string& what) {
    const OccupancyGrid grid = mapper.map();
    const OccupancyValues mine = mapper.occupancy_values(), host = grid.occupancy_values();
    ASSERT_EQ(mine.data.size(), grid.spec.cells()) << what;
    std::size_t differing = 0;
    for (std::size_t i = 0; i < host.data.size(); ++i) differing += mine.data[i] != host.data[i];
    EXPECT_EQ(differing, 0u) << what << ": nav_msgs values differ";
    for (const RosMapOptions& options : {RosMapOptions{}, RosMapOptions{0.9, 0.05}, RosMapOptions{0.5, 0.5}}) {
      const std::vector<std::uint8_t> image = mapper.ros_image(options);
      const int w = grid.spec.width, h = grid.spec.height;
      differing = 0;
      for (int r = 0; r < h; ++r)
        for (int x = 0; x < w; ++x)
          differing += image[std::size_t(r) * w + x] != host_trinary(grid, grid.index(x, h - 1 - r), options);
      EXPECT_EQ(differing, 0u) << what << ": map_server image differs at thresholds " << options.occupied_thresh
                               << ", " << options.free_thresh;
    }
  }

  fs::path dir_;
};

TEST_P(MapValues, EqualTheHostConversionOnSyntheticLogs) {
  for (const double resolution : {0.1, 0.025}) {
    const std::vector<LaserScan> scans = synthetic(200, 3);
    GridMapper mapper(fit_grid(scans, resolution), {}, GetParam());
    mapper.insert(scans);
    expect_values_match_host(mapper, "synthetic at " + std::to_string(resolution));
  }
}

TEST_P(MapValues, EqualTheHostConversionOnEveryCarmenLog) {
  const fs::path dir = test_support::data_dir() / "carmen";
  int logs = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().string().find(".log") == std::string::npos) continue;
    const std::vector<LaserScan> scans = read_carmen_log(entry.path().string());
    GridMapper mapper(fit_grid(scans, 0.1), {}, GetParam());
    mapper.insert(scans);
    expect_values_match_host(mapper, entry.path().filename().string());
    ++logs;
  }
  EXPECT_GE(logs, 5);
}

TEST_P(MapValues, RosFilesFromTheMapperEqualThoseFromItsMap) {
  const std::vector<LaserScan> scans = synthetic(100, 5);
  GridMapper mapper(fit_grid(scans, 0.05), {}, GetParam());
  mapper.insert(scans);
  save_ros_map(mapper, (dir_ / "mapper").string());
  save_ros_map(mapper.map(), (dir_ / "grid").string());
  EXPECT_EQ(read_file(dir_ / "mapper.pgm"), read_file(dir_ / "grid.pgm"));
  std::string yaml = read_file(dir_ / "mapper.yaml");
  yaml.replace(yaml.find("mapper.pgm"), 10, "grid.pgm");
  EXPECT_EQ(yaml, read_file(dir_ / "grid.yaml"));
  RosMapOptions bad;
  bad.free_thresh = 0.9;
  EXPECT_THROW(save_ros_map(mapper, (dir_ / "bad").string(), bad), linalg_cuda::InvalidArgument);
}

// The palette PNG, read back by libpng: the grey of each known cell's percent, the unknown colour.
TEST_P(MapValues, PngFromTheMapperShowsItsValues) {
  const std::vector<LaserScan> scans = synthetic(60, 9);
  GridMapper mapper(fit_grid(scans, 0.1), {}, GetParam());
  mapper.insert(scans);
  const fs::path path = dir_ / "map.png";
  save_png(mapper, path.string());
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  ASSERT_TRUE(png_image_begin_read_from_file(&image, path.string().c_str())) << image.message;
  EXPECT_TRUE(image.format & PNG_FORMAT_FLAG_COLORMAP);
  image.format = PNG_FORMAT_RGB;
  std::vector<std::uint8_t> rgb(PNG_IMAGE_SIZE(image));
  ASSERT_TRUE(png_image_finish_read(&image, nullptr, rgb.data(), 0, nullptr)) << image.message;
  const OccupancyValues values = mapper.occupancy_values();
  const int w = values.spec.width, h = values.spec.height;
  ASSERT_EQ(int(image.width), w);
  ASSERT_EQ(int(image.height), h);
  std::size_t wrong = 0;
  for (int r = 0; r < h; ++r)
    for (int x = 0; x < w; ++x) {
      const std::int8_t v = values.data[std::size_t(h - 1 - r) * w + x];
      const std::uint8_t* px = &rgb[3 * (std::size_t(r) * w + x)];
      if (v < 0) {
        wrong += px[0] != 200 || px[1] != 215 || px[2] != 230;
      } else {
        const auto grey = static_cast<std::uint8_t>(std::lround(2.55 * (100 - v)));
        wrong += px[0] != grey || px[1] != grey || px[2] != grey;
      }
    }
  EXPECT_EQ(wrong, 0u);
}

// Scan by scan: each update's box holds every cell the scan changed and its values are the map's;
// on an empty map every updated cell changes, so the first box is exactly theirs.
TEST_P(MapValues, UpdatesCoverWhatEachScanChanged) {
  const std::vector<LaserScan> scans = synthetic(40, 11);
  const GridSpec spec = fit_grid(scans, 0.05);
  GridMapper mapper(spec, {}, GetParam());
  OccupancyGrid before = mapper.map();
  for (std::size_t s = 0; s < scans.size(); ++s) {
    const MapUpdate update = mapper.insert_with_update(scans[s]);
    const OccupancyGrid after = mapper.map();
    const OccupancyValues values = after.occupancy_values();
    int x0 = spec.width, y0 = spec.height, x1 = -1, y1 = -1;
    std::size_t outside = 0;
    for (int y = 0; y < spec.height; ++y)
      for (int x = 0; x < spec.width; ++x) {
        const std::size_t cell = after.index(x, y);
        if (after.evidence[cell] == before.evidence[cell] && after.known[cell] == before.known[cell]) continue;
        outside += !update.contains(x, y);
        x0 = std::min(x0, x), y0 = std::min(y0, y), x1 = std::max(x1, x), y1 = std::max(y1, y);
      }
    EXPECT_EQ(outside, 0u) << "scan " << s << ": changed cells outside the update";
    if (s == 0) {
      EXPECT_EQ(update.x, x0);
      EXPECT_EQ(update.y, y0);
      EXPECT_EQ(update.x + update.width - 1, x1);
      EXPECT_EQ(update.y + update.height - 1, y1);
    }
    ASSERT_EQ(update.data.size(), std::size_t(update.width) * update.height);
    std::size_t differing = 0;
    for (int y = 0; y < update.height; ++y)
      for (int x = 0; x < update.width; ++x)
        differing +=
            update.data[std::size_t(y) * update.width + x] != values.data[after.index(update.x + x, update.y + y)];
    EXPECT_EQ(differing, 0u) << "scan " << s << ": the update's values are not the map's";
    before = after;
  }
}

TEST_P(MapValues, AScanThatUpdatesNothingGivesAnEmptyUpdate) {
  std::vector<LaserScan> scans = synthetic(2, 13);
  GridMapper mapper(fit_grid(scans, 0.1), {}, GetParam());
  for (float& r : scans[0].ranges) r = 1e6f;  // every reading beyond the usable range: no beam is used
  const MapUpdate update = mapper.insert_with_update(scans[0]);
  EXPECT_TRUE(update.empty());
  EXPECT_TRUE(update.data.empty());
  EXPECT_FALSE(mapper.insert_with_update(scans[1]).empty());
}

INSTANTIATE_TEST_SUITE_P(Backends, MapValues, ::testing::Values(Backend::Cpu, Backend::Cuda),
                         [](const ::testing::TestParamInfo<Backend>& info) {
                           return std::string(info.param == Backend::Cpu ? "Cpu" : "Cuda");
                         });

// The thresholds give the host's conversion at and around every boundary and at random evidence.
TEST(ValueCodec, GivesTheHostConversionAtEveryBoundary) {
  for (const double prior : {0.0, -0.4, 1.3}) {
    for (const RosMapOptions& options : {RosMapOptions{}, RosMapOptions{0.7, 0.3}}) {
      const detail::ValueCodec codec = detail::make_value_codec(prior, options);
      std::vector<std::int64_t> probes;
      for (int k = 1; k <= 100; ++k) probes.push_back(codec.percent_from[k]);
      probes.push_back(codec.occupied_from);
      probes.push_back(codec.free_below);
      std::mt19937_64 rng(7);
      std::uniform_int_distribution<std::int64_t> wide(-(std::int64_t{1} << 40), std::int64_t{1} << 40);
      for (int i = 0; i < 20000; ++i) probes.push_back(wide(rng));
      for (const std::int64_t base : std::vector<std::int64_t>(probes)) {
        if (base == std::numeric_limits<std::int64_t>::max() || base == std::numeric_limits<std::int64_t>::min())
          continue;
        for (const std::int64_t e : {base - 1, base, base + 1}) {
          const double p = evidence_probability(prior, e);
          ASSERT_EQ(detail::occupancy_percent(e, true, codec), std::lround(100.0 * p)) << "evidence " << e;
          const std::uint8_t trinary = p > options.occupied_thresh ? detail::kRosOccupied
                                       : p < options.free_thresh   ? detail::kRosFree
                                                                   : detail::kRosUnknown;
          ASSERT_EQ(detail::ros_trinary(e, true, codec), trinary) << "evidence " << e;
        }
      }
      EXPECT_EQ(detail::occupancy_percent(0, false, codec), -1);
      EXPECT_EQ(detail::ros_trinary(0, false, codec), detail::kRosUnknown);
    }
  }
}

}  // namespace
}  // namespace gridmap_cuda
