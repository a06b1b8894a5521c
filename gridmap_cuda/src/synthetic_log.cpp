// The synthetic log: a rectangular floor plan of square rooms with one door in every inner wall and a
// few free-standing boxes per room, a robot driving a closed tour through every room, and a 180-degree
// laser whose beams are cast exactly (in double) against every wall.
//
// Layout: room (i, j) covers [i s, (i+1) s] x [j s, (j+1) s], s = room_size, so the floor plan covers
// [0, rooms_x s] x [0, rooms_y s]. Randomness comes only from std::mt19937 (fully specified by the
// standard) through our own uniform and Box-Muller normal draws, so a seed gives the same log on every
// platform and standard library.
#include "gridmap_cuda/synthetic_log.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "linalg_cuda/errors.h"

namespace gridmap_cuda {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kHitLimit = 50.0;            // m: beams without a hit closer than this read max_range
constexpr double kCornerClearance = 0.5;      // m between a door gap and the ends of its wall
constexpr double kMinBoxSide = 0.3;           // m
constexpr double kMaxBoxSide = 1.0;           // m
constexpr double kCentreClearance = 1.0;      // m between a box and its room's centre
constexpr double kDoorClearance = 1.0;        // m between a box and the centre of any door of its room
constexpr double kCorridorHalfWidth = 0.5;    // m between a box and the path (more than the 0.8 m corridor asks)
constexpr double kWallClearance = 0.3;        // m between a box and its room's walls (boxes stand free)
constexpr double kBoxSeparation = 0.3;        // m between two boxes of a room
constexpr int kPlacementAttempts = 200;       // tries per box; a room that has no place left gets no more boxes
constexpr long long kMaxRooms = 1000000;

// Uniform and normal draws from std::mt19937, whose output sequence the standard fixes (unlike that of
// the std:: distributions).
class Random {
 public:
  explicit Random(std::uint32_t seed) : engine_(seed) {}

  // Uniform in the open interval (0, 1).
  double uniform() { return (static_cast<double>(engine_()) + 0.5) / 4294967296.0; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

  // Standard normal (Box-Muller, both values of a pair used).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = uniform();
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    spare_ = r * std::sin(2.0 * kPi * u2);
    has_spare_ = true;
    return r * std::cos(2.0 * kPi * u2);
  }

 private:
  std::mt19937 engine_;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

struct Point {
  double x, y;
};

struct Box {
  double x0, y0, x1, y1;
};

double cross(double ax, double ay, double bx, double by) { return ax * by - ay * bx; }

double point_segment_distance(double px, double py, const Segment& s) {
  const double ex = s.x1 - s.x0;
  const double ey = s.y1 - s.y0;
  const double len2 = ex * ex + ey * ey;
  double t = 0.0;
  if (len2 > 0.0) t = std::clamp(((px - s.x0) * ex + (py - s.y0) * ey) / len2, 0.0, 1.0);
  return std::hypot(px - (s.x0 + t * ex), py - (s.y0 + t * ey));
}

// Sign of the turn a -> b -> c (0 when collinear).
int orientation(double ax, double ay, double bx, double by, double cx, double cy) {
  const double v = cross(bx - ax, by - ay, cx - ax, cy - ay);
  return (v > 0.0) - (v < 0.0);
}

bool on_segment_box(double px, double py, const Segment& s) {
  return px >= std::min(s.x0, s.x1) && px <= std::max(s.x0, s.x1) && py >= std::min(s.y0, s.y1) &&
         py <= std::max(s.y0, s.y1);
}

bool segments_intersect(const Segment& a, const Segment& b) {
  const int o1 = orientation(a.x0, a.y0, a.x1, a.y1, b.x0, b.y0);
  const int o2 = orientation(a.x0, a.y0, a.x1, a.y1, b.x1, b.y1);
  const int o3 = orientation(b.x0, b.y0, b.x1, b.y1, a.x0, a.y0);
  const int o4 = orientation(b.x0, b.y0, b.x1, b.y1, a.x1, a.y1);
  if (o1 != o2 && o3 != o4) return true;
  if (o1 == 0 && on_segment_box(b.x0, b.y0, a)) return true;
  if (o2 == 0 && on_segment_box(b.x1, b.y1, a)) return true;
  if (o3 == 0 && on_segment_box(a.x0, a.y0, b)) return true;
  if (o4 == 0 && on_segment_box(a.x1, a.y1, b)) return true;
  return false;
}

double segment_segment_distance(const Segment& a, const Segment& b) {
  if (segments_intersect(a, b)) return 0.0;
  return std::min({point_segment_distance(a.x0, a.y0, b), point_segment_distance(a.x1, a.y1, b),
                   point_segment_distance(b.x0, b.y0, a), point_segment_distance(b.x1, b.y1, a)});
}

double box_point_distance(const Box& b, double px, double py) {
  const double dx = std::max({b.x0 - px, 0.0, px - b.x1});
  const double dy = std::max({b.y0 - py, 0.0, py - b.y1});
  return std::hypot(dx, dy);
}

double box_box_distance(const Box& a, const Box& b) {
  const double dx = std::max({b.x0 - a.x1, a.x0 - b.x1, 0.0});
  const double dy = std::max({b.y0 - a.y1, a.y0 - b.y1, 0.0});
  return std::hypot(dx, dy);
}

void box_edges(const Box& b, Segment out[4]) {
  out[0] = {b.x0, b.y0, b.x1, b.y0};
  out[1] = {b.x1, b.y0, b.x1, b.y1};
  out[2] = {b.x1, b.y1, b.x0, b.y1};
  out[3] = {b.x0, b.y1, b.x0, b.y0};
}

double box_segment_distance(const Box& b, const Segment& s) {
  if (box_point_distance(b, s.x0, s.y0) == 0.0 || box_point_distance(b, s.x1, s.y1) == 0.0) return 0.0;
  Segment edges[4];
  box_edges(b, edges);
  double d = segment_segment_distance(edges[0], s);
  for (int k = 1; k < 4; ++k) d = std::min(d, segment_segment_distance(edges[k], s));
  return d;
}

void validate(const SyntheticLogOptions& o) {
  auto fail = [](const std::string& what) {
    throw linalg_cuda::InvalidArgument("make_synthetic_log: " + what);
  };
  if (o.rooms_x < 1 || o.rooms_y < 1) {
    fail("rooms_x and rooms_y must be at least 1 (got " + std::to_string(o.rooms_x) + " x " +
         std::to_string(o.rooms_y) + ")");
  }
  if (static_cast<long long>(o.rooms_x) * o.rooms_y > kMaxRooms) {
    fail("at most " + std::to_string(kMaxRooms) + " rooms are supported");
  }
  if (!std::isfinite(o.room_size) || o.room_size <= 0.0) fail("room_size must be positive and finite");
  if (!std::isfinite(o.door_width) || o.door_width <= 0.0) fail("door_width must be positive and finite");
  if (!(o.door_width < o.room_size - 2.0 * kCornerClearance)) {
    fail("door_width (" + std::to_string(o.door_width) + " m) must be smaller than room_size - 1 m (" +
         std::to_string(o.room_size - 2.0 * kCornerClearance) + " m)");
  }
  if (o.obstacles_per_room < 0) fail("obstacles_per_room must not be negative");
  if (o.scans < 1) fail("scans must be at least 1");
  if (o.beams < 2) fail("beams must be at least 2");
  if (!std::isfinite(o.max_range) || o.max_range <= 0.0) fail("max_range must be positive and finite");
  if (!std::isfinite(o.range_noise) || o.range_noise < 0.0) fail("range_noise must be non-negative and finite");
}

// The rooms of the tour in order, as (i, j); the tour is closed (the last room is adjacent to the first,
// except for a single room). A Hamiltonian cycle when one exists: row 0 (or column 0) out, a
// boustrophedon through the rest, and the first column (or row) back. Otherwise (both counts odd, or a
// single row / column) a boustrophedon there and the same rooms back.
std::vector<std::pair<int, int>> tour_rooms(int rx, int ry) {
  std::vector<std::pair<int, int>> tour;
  tour.reserve(static_cast<std::size_t>(rx) * ry * 2);
  auto cycle = [&tour](int A, int B, bool transpose) {  // B even, A >= 2, in (a, b) coordinates
    auto add = [&](int a, int b) { tour.emplace_back(transpose ? b : a, transpose ? a : b); };
    for (int a = 0; a < A; ++a) add(a, 0);
    for (int b = 1; b < B; ++b) {
      if (b % 2 == 1) {
        for (int a = A - 1; a >= 1; --a) add(a, b);
      } else {
        for (int a = 1; a < A; ++a) add(a, b);
      }
    }
    for (int b = B - 1; b >= 1; --b) add(0, b);
  };
  if (ry % 2 == 0 && rx >= 2) {
    cycle(rx, ry, false);
  } else if (rx % 2 == 0 && ry >= 2) {
    cycle(ry, rx, true);
  } else {
    for (int j = 0; j < ry; ++j) {
      if (j % 2 == 0) {
        for (int i = 0; i < rx; ++i) tour.emplace_back(i, j);
      } else {
        for (int i = rx - 1; i >= 0; --i) tour.emplace_back(i, j);
      }
    }
    const std::size_t n = tour.size();
    for (std::size_t k = n >= 2 ? n - 2 : 0; k >= 1 && k < n; --k) tour.push_back(tour[k]);
  }
  return tour;
}

}  // namespace

SyntheticLog make_synthetic_log(const SyntheticLogOptions& options) {
  validate(options);
  const int rx = options.rooms_x;
  const int ry = options.rooms_y;
  const double s = options.room_size;
  const double w = options.door_width;
  const double width = rx * s;
  const double height = ry * s;
  Random rng(options.seed);
  SyntheticLog log;

  // Outer walls.
  log.walls.push_back({0.0, 0.0, width, 0.0});
  log.walls.push_back({width, 0.0, width, height});
  log.walls.push_back({width, height, 0.0, height});
  log.walls.push_back({0.0, height, 0.0, 0.0});

  // Inner walls, each with one door gap. door_v[j (rx-1) + i]: y of the door centre in the wall
  // x = (i+1) s between rooms (i, j) and (i+1, j); door_h[j rx + i]: x of the door centre in the wall
  // y = (j+1) s between rooms (i, j) and (i, j+1).
  const double margin = kCornerClearance + 0.5 * w;
  std::vector<double> door_v(static_cast<std::size_t>(rx - 1) * ry);
  std::vector<double> door_h(static_cast<std::size_t>(rx) * (ry - 1));
  for (int j = 0; j < ry; ++j) {
    for (int i = 0; i + 1 < rx; ++i) {
      const double c = rng.uniform(j * s + margin, (j + 1) * s - margin);
      const double x = (i + 1) * s;
      door_v[static_cast<std::size_t>(j) * (rx - 1) + i] = c;
      log.walls.push_back({x, j * s, x, c - 0.5 * w});
      log.walls.push_back({x, c + 0.5 * w, x, (j + 1) * s});
    }
  }
  for (int j = 0; j + 1 < ry; ++j) {
    for (int i = 0; i < rx; ++i) {
      const double c = rng.uniform(i * s + margin, (i + 1) * s - margin);
      const double y = (j + 1) * s;
      door_h[static_cast<std::size_t>(j) * rx + i] = c;
      log.walls.push_back({i * s, y, c - 0.5 * w, y});
      log.walls.push_back({c + 0.5 * w, y, (i + 1) * s, y});
    }
  }

  auto centre = [s](int i, int j) { return Point{(i + 0.5) * s, (j + 0.5) * s}; };
  auto door_between = [&](int i0, int j0, int i1, int j1) {
    if (j0 == j1) {
      const int i = std::min(i0, i1);
      return Point{(i + 1) * s, door_v[static_cast<std::size_t>(j0) * (rx - 1) + i]};
    }
    const int j = std::min(j0, j1);
    return Point{door_h[static_cast<std::size_t>(j) * rx + i0], (j + 1) * s};
  };
  auto room_id = [rx](int i, int j) { return static_cast<std::size_t>(j) * rx + i; };

  // The path: a closed polygon through room centres and door centres; every piece of it is also
  // filed under the room it runs in (for the obstacle placement).
  std::vector<Point> path;
  std::vector<std::vector<Segment>> path_in_room(static_cast<std::size_t>(rx) * ry);
  const auto tour = tour_rooms(rx, ry);
  if (tour.size() == 1) {
    const Point c = centre(0, 0);
    const double h = std::min(0.5, 0.25 * s);
    path = {{c.x - h, c.y - h}, {c.x + h, c.y - h}, {c.x + h, c.y + h}, {c.x - h, c.y + h}};
    for (std::size_t k = 0; k < path.size(); ++k) {
      const Point& a = path[k];
      const Point& b = path[(k + 1) % path.size()];
      path_in_room[0].push_back({a.x, a.y, b.x, b.y});
    }
  } else {
    for (std::size_t k = 0; k < tour.size(); ++k) {
      const auto [i0, j0] = tour[k];
      const auto [i1, j1] = tour[(k + 1) % tour.size()];
      const Point a = centre(i0, j0);
      const Point d = door_between(i0, j0, i1, j1);
      const Point b = centre(i1, j1);
      path.push_back(a);
      path.push_back(d);
      path_in_room[room_id(i0, j0)].push_back({a.x, a.y, d.x, d.y});
      path_in_room[room_id(i1, j1)].push_back({d.x, d.y, b.x, b.y});
    }
  }

  // Free-standing boxes, clear of the room's walls, centre, doors, path and of each other.
  if (options.obstacles_per_room > 0) {
    std::vector<Box> boxes;
    std::vector<Point> doors;
    for (int j = 0; j < ry; ++j) {
      for (int i = 0; i < rx; ++i) {
        const double x0 = i * s, x1 = (i + 1) * s, y0 = j * s, y1 = (j + 1) * s;
        const Point c = centre(i, j);
        doors.clear();
        if (i > 0) doors.push_back(door_between(i - 1, j, i, j));
        if (i + 1 < rx) doors.push_back(door_between(i, j, i + 1, j));
        if (j > 0) doors.push_back(door_between(i, j - 1, i, j));
        if (j + 1 < ry) doors.push_back(door_between(i, j, i, j + 1));
        const auto& corridor = path_in_room[room_id(i, j)];
        boxes.clear();
        for (int n = 0; n < options.obstacles_per_room; ++n) {
          bool placed = false;
          for (int attempt = 0; attempt < kPlacementAttempts && !placed; ++attempt) {
            const double bw = rng.uniform(kMinBoxSide, kMaxBoxSide);
            const double bh = rng.uniform(kMinBoxSide, kMaxBoxSide);
            const double u = rng.uniform();
            const double v = rng.uniform();
            const double free_x = (x1 - x0) - 2.0 * kWallClearance - bw;
            const double free_y = (y1 - y0) - 2.0 * kWallClearance - bh;
            if (free_x <= 0.0 || free_y <= 0.0) continue;
            Box b;
            b.x0 = x0 + kWallClearance + u * free_x;
            b.y0 = y0 + kWallClearance + v * free_y;
            b.x1 = b.x0 + bw;
            b.y1 = b.y0 + bh;
            if (box_point_distance(b, c.x, c.y) < kCentreClearance) continue;
            bool ok = true;
            for (const Point& d : doors) ok = ok && box_point_distance(b, d.x, d.y) >= kDoorClearance;
            for (const Segment& p : corridor) ok = ok && box_segment_distance(b, p) >= kCorridorHalfWidth;
            for (const Box& other : boxes) ok = ok && box_box_distance(b, other) >= kBoxSeparation;
            if (!ok) continue;
            boxes.push_back(b);
            Segment edges[4];
            box_edges(b, edges);
            log.walls.insert(log.walls.end(), edges, edges + 4);
            placed = true;
          }
          if (!placed) break;  // the room is full
        }
      }
    }
  }

  // Poses: `scans` points equally spaced by arc length along the closed path, heading along the piece.
  const std::size_t m = path.size();
  std::vector<double> start(m + 1, 0.0);
  for (std::size_t k = 0; k < m; ++k) {
    const Point& a = path[k];
    const Point& b = path[(k + 1) % m];
    start[k + 1] = start[k] + std::hypot(b.x - a.x, b.y - a.y);
  }
  const double total = start[m];
  const double hit_limit = std::min(kHitLimit, options.max_range);
  const double start_angle = -0.5 * kPi;
  const double resolution = kPi / (options.beams - 1);
  const double noise = options.range_noise;

  struct Relative {
    double ax, ay, ex, ey;  // segment start relative to the laser, segment direction
  };
  std::vector<Relative> near;
  near.reserve(log.walls.size());
  log.scans.resize(static_cast<std::size_t>(options.scans));
  std::size_t piece = 0;
  for (int k = 0; k < options.scans; ++k) {
    const double arc = total * static_cast<double>(k) / options.scans;
    while (piece + 1 < m && (start[piece + 1] <= arc || start[piece + 1] == start[piece])) ++piece;
    const Point& a = path[piece];
    const Point& b = path[(piece + 1) % m];
    const double len = start[piece + 1] - start[piece];
    const double f = len > 0.0 ? (arc - start[piece]) / len : 0.0;

    LaserScan& scan = log.scans[static_cast<std::size_t>(k)];
    scan.laser_pose.x = a.x + f * (b.x - a.x);
    scan.laser_pose.y = a.y + f * (b.y - a.y);
    scan.laser_pose.theta = std::atan2(b.y - a.y, b.x - a.x);
    scan.start_angle = start_angle;
    scan.angular_resolution = resolution;
    scan.max_range = options.max_range;
    scan.timestamp = 0.1 * k;
    scan.ranges.resize(static_cast<std::size_t>(options.beams));

    // Coarse culling: only walls whose bounding box meets the square of the hit limit around the laser.
    const double px = scan.laser_pose.x;
    const double py = scan.laser_pose.y;
    near.clear();
    for (const Segment& wall : log.walls) {
      if (std::max(wall.x0, wall.x1) < px - hit_limit || std::min(wall.x0, wall.x1) > px + hit_limit ||
          std::max(wall.y0, wall.y1) < py - hit_limit || std::min(wall.y0, wall.y1) > py + hit_limit) {
        continue;
      }
      near.push_back({wall.x0 - px, wall.y0 - py, wall.x1 - wall.x0, wall.y1 - wall.y0});
    }

    for (int beam = 0; beam < options.beams; ++beam) {
      const double angle = scan.laser_pose.theta + start_angle + beam * resolution;
      const double dx = std::cos(angle);
      const double dy = std::sin(angle);
      double best = hit_limit;
      for (const Relative& r : near) {
        // laser + t d = start + u e  <=>  t (d x e) = A x e, u (d x e) = A x d, with A = start - laser.
        // Branch-free (parallel segments give t = inf or nan and fail the tests).
        const double inv = 1.0 / cross(dx, dy, r.ex, r.ey);
        const double t = cross(r.ax, r.ay, r.ex, r.ey) * inv;
        const double u = cross(r.ax, r.ay, dx, dy) * inv;
        const bool accept = t > 0.0 && t < best && u >= 0.0 && u <= 1.0;
        best = accept ? t : best;
      }
      const bool hit = best < hit_limit;
      double range = options.max_range;
      if (hit) {
        range = best;
        if (noise > 0.0) range = std::max(0.0, range + noise * rng.normal());
      }
      scan.ranges[static_cast<std::size_t>(beam)] = static_cast<float>(range);
    }
  }
  return log;
}

}  // namespace gridmap_cuda
