// gridmap_build: an occupancy grid map from a CARMEN laser log with known (corrected) poses.
//
//   gridmap_build --log ../shared/data/carmen/intel-corrected.log.gz --out intel
//   gridmap_build                       # no log: a simulated robot in a generated floor plan
//
// Writes PREFIX.pgm + PREFIX.yaml (ROS map_server) and PREFIX.png (to look at).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "command_line.h"
#include "map_model_choice.h"
#include "gridmap_cuda/gridmap_cuda.h"
#include "linalg_cuda/errors.h"

namespace {

const char* kUsage = R"(usage: gridmap_build [--log FILE] [options]

Builds an occupancy grid map (CARMEN's evidence grid) from a CARMEN log (.log or .log.gz, FLASER or
ROBOTLASER1 lines with corrected poses) and writes it for ROS map_server and as a PNG.

  --log FILE          CARMEN log; without it a synthetic log (simulated robot, generated floor plan)
  --resolution R      cell size in metres                  (default 0.025)
  --border B          metres of margin around poses and hits (default 1.0)
  --tiled             no grid fitted: 64 x 64-cell tiles allocated where the beams reach
                      (GridSpec::unbounded; memory follows what was seen, not the extent)
  --backend B         cuda | cpu | auto                     (default auto)
  --model M           carmen | hit-miss: CARMEN's evidence grid, or the hit/miss model ROS users know
                      from Cartographer (hit 0.55, miss 0.49, clamped to [0.12, 0.97])  (default carmen)
  --out PREFIX        output files PREFIX.pgm, PREFIX.yaml, PREFIX.png (default map)
  --scans N           scans of the synthetic log           (default 1000)
  --save-log FILE     also write the (synthetic) scans as a CARMEN log
  --help              this text
Exit status: 0 success, 2 bad usage or input, 3 failure while building or writing.
)";

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const examples::CommandLine cli("gridmap_build", kUsage,
                                  {"--log", "--resolution", "--border", "--backend", "--model", "--out", "--scans", "--save-log"},
                                  {"--tiled"});
  std::string log_path, out = "map", save_log;
  double resolution = 0.025, border = 1.0;
  int synthetic_scans = 1000;
  gridmap_cuda::Backend backend = gridmap_cuda::Backend::Auto;
  bool hit_miss = false, tiled = false;
  try {
    for (const auto& [flag, value] : cli.parse(argc, argv)) {
      if (flag == "--log") log_path = value;
      else if (flag == "--resolution") resolution = cli.number(flag, value, 1e-4, 100.0);
      else if (flag == "--border") border = cli.number(flag, value, 0.0, 1000.0);
      else if (flag == "--backend") backend = linalg_cuda::parse_backend(value);
      else if (flag == "--model") hit_miss = examples::parse_map_model(value);
      else if (flag == "--out") out = value;
      else if (flag == "--scans") synthetic_scans = cli.integer(flag, value, 1, 10000000);
      else if (flag == "--tiled") tiled = true;
      else save_log = value;
    }
  } catch (const linalg_cuda::InvalidArgument& e) {
    cli.fail(e.what());
  }

  try {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<gridmap_cuda::LaserScan> scans;
    if (log_path.empty()) {
      gridmap_cuda::SyntheticLogOptions options;
      options.scans = synthetic_scans;
      scans = gridmap_cuda::make_synthetic_log(options).scans;
      std::printf("%-16s synthetic: %d rooms, %zu scans (no --log given)\n", "input", options.rooms_x * options.rooms_y,
                  scans.size());
    } else {
      scans = gridmap_cuda::read_carmen_log(log_path);
      std::printf("%-16s %s\n", "input", log_path.c_str());
    }
    const double read_seconds = seconds_since(t0);
    if (scans.empty()) throw linalg_cuda::InvalidArgument("the log holds no laser scans (FLASER or ROBOTLASER1 lines)");
    if (!save_log.empty()) gridmap_cuda::write_carmen_log(save_log, scans);

    t0 = std::chrono::steady_clock::now();
    const gridmap_cuda::GridSpec fitted = tiled ? gridmap_cuda::GridSpec::unbounded(resolution)
                                                : examples::fit_grid_for(hit_miss, scans, resolution, border);
    const double fit_seconds = seconds_since(t0);

    t0 = std::chrono::steady_clock::now();
    gridmap_cuda::GridMapper mapper = examples::make_mapper(hit_miss, fitted, backend);
    const double setup_seconds = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    mapper.insert(scans);
    const gridmap_cuda::OccupancyValues values = mapper.occupancy_values();
    const double build_seconds = seconds_since(t0);
    const gridmap_cuda::GridSpec spec = mapper.extent();
    const auto known_cells = static_cast<std::size_t>(
        std::count_if(values.data.begin(), values.data.end(), [](std::int8_t v) { return v >= 0; }));

    // The files from the mapper: its 8-bit images are computed where the map is.
    t0 = std::chrono::steady_clock::now();
    gridmap_cuda::save_ros_map(mapper, out);
    gridmap_cuda::save_png(mapper, out + ".png");
    const double write_seconds = seconds_since(t0);

    const gridmap_cuda::MapperStats& stats = mapper.stats();
    std::printf("%-16s %llu scans, %llu beams (%llu used, the rest no-return)\n", "scans",
                static_cast<unsigned long long>(stats.scans), static_cast<unsigned long long>(stats.beams),
                static_cast<unsigned long long>(stats.used_beams));
    std::printf("%-16s %d x %d cells at %.4g m (%.1f x %.1f m), origin (%.3f, %.3f)\n", "grid", spec.width,
                spec.height, spec.resolution, spec.width * spec.resolution, spec.height * spec.resolution,
                spec.origin_x, spec.origin_y);
    if (tiled)
      std::printf("%-16s %zu tiles of 64 x 64 cells: %.1f%% of the extent's cells stored\n", "tiles",
                  mapper.stored_cells() / 4096,
                  100.0 * static_cast<double>(mapper.stored_cells()) /
                      static_cast<double>(std::max<std::size_t>(1, spec.cells())));
    std::printf("%-16s %llu cell updates, %zu cells known\n", "updates",
                static_cast<unsigned long long>(stats.cell_updates), known_cells);
    std::printf("%-16s %s\n", "backend", linalg_cuda::to_string(mapper.backend()));
    std::printf("%-16s %.2f ms map (insert + nav_msgs values), %.2f ms grid set-up, %.2f ms extent, %.1f ms reading, "
                "%.1f ms writing\n",
                "time", build_seconds * 1e3, setup_seconds * 1e3, fit_seconds * 1e3, read_seconds * 1e3,
                write_seconds * 1e3);
    std::printf("%-16s %.3g cell updates/s\n", "rate", stats.cell_updates / build_seconds);
    std::printf("%-16s %s.pgm %s.yaml %s.png\n", "wrote", out.c_str(), out.c_str(), out.c_str());
    return 0;
  } catch (const linalg_cuda::ParseError& e) {
    std::cerr << "gridmap_build: " << e.what() << "\n";
    return 2;
  } catch (const linalg_cuda::InvalidArgument& e) {
    std::cerr << "gridmap_build: " << e.what() << "\n";
    return 2;
  } catch (const linalg_cuda::Error& e) {
    std::cerr << "gridmap_build: " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {  // anything the library's contract misses: one line, never an abort
    std::cerr << "gridmap_build: " << e.what() << "\n";
    return 2;
  }
}
