// cover_with_spheres (robot_spheres.h): a link's triangles voxelised on a grid of cell s = tolerance / 8,
// the cells the solid touches (O: cells a triangle overlaps, and those enclosed by them) covered by
// spheres chosen greedily, each as large as the tolerance lets it be.
//
// Why the cover holds and stays within the tolerance (cell centres; h = s sqrt(3) / 2, a cell's
// half-diagonal): D(q) is the distance from q to the nearest O cell, and a "far" cell has D > tol - 2h.
// A sphere at c may have a radius up to E(c) - h, E(c) being c's distance to the nearest far cell. A
// point x of it lies in a cell q within h of x, so |q - c| < E(c): q is not far, an O cell lies within
// tol - 2h of q, and the solid within h of that cell's centre, so x is within tol of the solid. A
// sphere covers an O cell when the cell's farthest corner is within r of c (the whole cell is inside), so
// every point of the solid, which lies in an O cell, is inside a sphere. Every O cell u can be covered:
// D is 1-Lipschitz, so E(u) > tol - 2h and the sphere at u itself reaches tol - 3h >= h. The cell is
// small against the tolerance because the grid costs about 5h of it: a cylinder of radius R is covered
// by spheres on its axis of radius about R + tol - 3h that must reach its cells' far corners, R + 2h
// away, so each covers a length of about 2 sqrt(2R (tol - 5h)).
#include <algorithm>
#include <cmath>
#include <deque>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "collision_geometry.h"
#include "linalg_cuda/errors.h"
#include "ompl_cuda/robot_spheres.h"

namespace ompl_cuda {
namespace {

using detail::Triangle;
using detail::Vec3;

constexpr int kMaxCellsPerSide = 320;
constexpr double kCellsPerTolerance = 8;
constexpr double kInfinity = std::numeric_limits<double>::infinity();

Vec3 sub(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

// Whether the triangle overlaps the axis-aligned box (centre, half-size) by the separating axis test
// (Akenine-Moller): the box's 3 axes, the triangle's normal, and the 9 edge-axis cross products. The
// caller enlarges the box a little, so that rounding never drops a cell the triangle touches.
bool triangle_overlaps_box(const Triangle& t, const Vec3& center, const Vec3& half) {
  const Vec3 v[3] = {sub(t.a, center), sub(t.b, center), sub(t.c, center)};
  auto separated = [&](const Vec3& axis) {
    double lo = kInfinity, hi = -kInfinity;
    for (const Vec3& p : v) {
      const double d = dot(p, axis);
      lo = std::min(lo, d);
      hi = std::max(hi, d);
    }
    const double r = half[0] * std::fabs(axis[0]) + half[1] * std::fabs(axis[1]) + half[2] * std::fabs(axis[2]);
    return lo > r || hi < -r;
  };
  for (int i = 0; i < 3; ++i) {
    Vec3 axis = {0, 0, 0};
    axis[i] = 1;
    if (separated(axis)) return false;
  }
  const Vec3 e[3] = {sub(v[1], v[0]), sub(v[2], v[1]), sub(v[0], v[2])};
  if (separated(cross(e[0], e[1]))) return false;
  for (const Vec3& edge : e)
    for (int i = 0; i < 3; ++i) {
      Vec3 axis = {0, 0, 0};
      axis[i] = 1;
      if (separated(cross(edge, axis))) return false;
    }
  return true;
}

// Squared Euclidean distance transform along one line (Felzenszwalb and Huttenlocher): f holds squared
// distances (infinity where unknown) at unit spacing; out the lower envelope of the parabolas.
void distance_1d(const std::vector<double>& f, std::vector<double>* out, std::vector<int>* v, std::vector<double>* z) {
  const int n = static_cast<int>(f.size());
  int k = -1;
  for (int q = 0; q < n; ++q) {
    if (f[q] == kInfinity) continue;
    while (k >= 0) {
      const int p = (*v)[k];
      const double s = ((f[q] + q * q) - (f[p] + p * p)) / (2.0 * (q - p));
      if (s <= (*z)[k]) --k;
      else break;
    }
    ++k;
    (*v)[k] = q;
    (*z)[k] = k == 0 ? -kInfinity : ((f[q] + q * q) - (f[(*v)[k - 1]] + (*v)[k - 1] * (*v)[k - 1])) / (2.0 * (q - (*v)[k - 1]));
    (*z)[k + 1] = kInfinity;
  }
  for (int q = 0, j = 0; q < n; ++q) {
    if (k < 0) {
      (*out)[q] = kInfinity;
      continue;
    }
    while ((*z)[j + 1] < q) ++j;
    const double d = q - (*v)[j];
    (*out)[q] = d * d + f[(*v)[j]];
  }
}

// The farthest corner of a cell (side s) whose centre is d away: the sphere of that radius holds the cell.
double corner_reach(const Vec3& d, double s) {
  double sum = 0;
  for (int i = 0; i < 3; ++i) {
    const double e = std::fabs(d[i]) + s / 2;
    sum += e * e;
  }
  return std::sqrt(sum);
}

class Grid {
 public:
  Grid(const Vec3& origin, double cell, const int size[3]) : origin_(origin), cell_(cell) {
    for (int i = 0; i < 3; ++i) n_[i] = size[i];
  }
  long cells() const { return static_cast<long>(n_[0]) * n_[1] * n_[2]; }
  long index(int x, int y, int z) const { return (static_cast<long>(z) * n_[1] + y) * n_[0] + x; }
  Vec3 center(int x, int y, int z) const {
    return {origin_[0] + (x + 0.5) * cell_, origin_[1] + (y + 0.5) * cell_, origin_[2] + (z + 0.5) * cell_};
  }
  int cell_of(double v, int axis) const {
    return std::clamp(static_cast<int>(std::floor((v - origin_[axis]) / cell_)), 0, n_[axis] - 1);
  }
  const int* size() const { return n_; }
  double cell() const { return cell_; }

  // Euclidean distance (metres, between centres) from every cell to the nearest cell marked in `set`.
  std::vector<double> distance_to(const std::vector<unsigned char>& set) const {
    std::vector<double> d(cells());
    for (long k = 0; k < cells(); ++k) d[k] = set[k] ? 0.0 : kInfinity;
    const int longest = std::max({n_[0], n_[1], n_[2]});
    std::vector<double> line(longest), out(longest), z(longest + 1);
    std::vector<int> v(longest);
    for (int axis = 0; axis < 3; ++axis) {
      const int a = (axis + 1) % 3, b = (axis + 2) % 3;
      line.resize(n_[axis]);
      out.resize(n_[axis]);
      for (int i = 0; i < n_[a]; ++i)
        for (int j = 0; j < n_[b]; ++j) {
          int at[3];
          at[a] = i, at[b] = j;
          for (at[axis] = 0; at[axis] < n_[axis]; ++at[axis]) line[at[axis]] = d[index(at[0], at[1], at[2])];
          distance_1d(line, &out, &v, &z);
          for (at[axis] = 0; at[axis] < n_[axis]; ++at[axis]) d[index(at[0], at[1], at[2])] = out[at[axis]];
        }
    }
    for (double& x : d) x = std::sqrt(x) * cell_;
    return d;
  }

 private:
  Vec3 origin_;
  double cell_;
  int n_[3];
};

std::vector<Sphere> cover_triangles(const std::vector<Triangle>& triangles, double tolerance, const std::string& link) {
  if (triangles.empty()) return {};
  Vec3 lo = triangles[0].a, hi = triangles[0].a;
  for (const Triangle& t : triangles)
    for (const Vec3* p : {&t.a, &t.b, &t.c})
      for (int i = 0; i < 3; ++i) lo[i] = std::min(lo[i], (*p)[i]), hi[i] = std::max(hi[i], (*p)[i]);
  const double s = tolerance / kCellsPerTolerance;
  const int pad = static_cast<int>(std::ceil(tolerance / s)) + 2;  // border cells are far from the solid
  int size[3];
  for (int i = 0; i < 3; ++i) {
    size[i] = static_cast<int>(std::ceil((hi[i] - lo[i]) / s)) + 1 + 2 * pad;
    if (size[i] > kMaxCellsPerSide) {
      const double smallest =
          kCellsPerTolerance * (hi[i] - lo[i]) / (kMaxCellsPerSide - 2 * (kCellsPerTolerance + 3) - 1);
      throw linalg_cuda::InvalidArgument("cover_with_spheres: link '" + link + "' spans " + std::to_string(hi[i] - lo[i]) +
                                         " m, too much for a tolerance of " + std::to_string(tolerance) +
                                         " m (at most " + std::to_string(kMaxCellsPerSide) +
                                         " cells a side; a tolerance of " + std::to_string(smallest) + " m fits)");
    }
  }
  const Vec3 origin = {lo[0] - pad * s, lo[1] - pad * s, lo[2] - pad * s};
  const Grid grid(origin, s, size);
  const long n = grid.cells();

  // Cells a triangle overlaps (the box enlarged by a millionth of a cell against rounding).
  std::vector<unsigned char> solid(n, 0);
  const Vec3 half = {s / 2 * (1 + 1e-6), s / 2 * (1 + 1e-6), s / 2 * (1 + 1e-6)};
  for (const Triangle& t : triangles) {
    int from[3], to[3];
    for (int i = 0; i < 3; ++i) {
      from[i] = grid.cell_of(std::min({t.a[i], t.b[i], t.c[i]}) - s * 1e-6, i);
      to[i] = grid.cell_of(std::max({t.a[i], t.b[i], t.c[i]}) + s * 1e-6, i);
    }
    for (int z = from[2]; z <= to[2]; ++z)
      for (int y = from[1]; y <= to[1]; ++y)
        for (int x = from[0]; x <= to[0]; ++x)
          if (!solid[grid.index(x, y, z)] && triangle_overlaps_box(t, grid.center(x, y, z), half))
            solid[grid.index(x, y, z)] = 1;
  }
  // Cells enclosed by them: all that the outside (flooded from the border) does not reach.
  std::vector<unsigned char> outside(n, 0);
  std::deque<long> queue;
  auto visit = [&](int x, int y, int z) {
    if (x < 0 || y < 0 || z < 0 || x >= size[0] || y >= size[1] || z >= size[2]) return;
    const long k = grid.index(x, y, z);
    if (solid[k] || outside[k]) return;
    outside[k] = 1;
    queue.push_back(k);
  };
  visit(0, 0, 0);  // a border cell: the padding leaves it empty
  while (!queue.empty()) {
    const long k = queue.front();
    queue.pop_front();
    const int x = static_cast<int>(k % size[0]), y = static_cast<int>(k / size[0] % size[1]),
              z = static_cast<int>(k / size[0] / size[1]);
    visit(x - 1, y, z), visit(x + 1, y, z), visit(x, y - 1, z), visit(x, y + 1, z), visit(x, y, z - 1), visit(x, y, z + 1);
  }
  for (long k = 0; k < n; ++k) solid[k] = !outside[k];

  const double h = s * std::sqrt(3.0) / 2;
  const std::vector<double> D = grid.distance_to(solid);
  std::vector<unsigned char> far(n);
  for (long k = 0; k < n; ++k) far[k] = D[k] > tolerance - 2 * h;
  const std::vector<double> E = grid.distance_to(far);

  // Greedy set cover. Candidate centres on a lattice (about 8 steps across the largest sphere), each
  // with its largest radius, scored by the cells not yet covered that it would cover, counted on a
  // sub-lattice of about 8 cells across that sphere. The best goes first (lazily: scores only fall,
  // so a popped score is recounted and taken if it still leads). Cells that no lattice centre covers
  // then get a sphere each of their own: of those that cover the cell, the one that covers most.
  // Each sphere's radius shrinks to what the cells it newly covers need.
  std::vector<unsigned char> covered(n, 0);
  std::vector<Sphere> spheres;
  const double largest = *std::max_element(E.begin(), E.end());
  const int search = static_cast<int>(std::ceil(largest / s)) + 1;  // a centre covering u is this near it
  const int lattice = std::max(1, search / 8), sample = std::max(1, search / 8);
  auto cell_xyz = [&](long k, int* x, int* y, int* z) {
    *x = static_cast<int>(k % size[0]), *y = static_cast<int>(k / size[0] % size[1]), *z = static_cast<int>(k / size[0] / size[1]);
  };
  auto radius_at = [&](long c) { return E[c] - h * (1 + 1e-9); };
  // The cells not yet covered that the sphere at c would cover (on the sample lattice, or all with step 1).
  auto new_cells = [&](long c, int step) {
    int cx, cy, cz;
    cell_xyz(c, &cx, &cy, &cz);
    const Vec3 cc = grid.center(cx, cy, cz);
    const double radius = radius_at(c);
    const int r = static_cast<int>(radius / s) + 1;
    auto first = [&](int v) { return std::max(0, (v - r + step - 1) / step * step); };
    long count = 0;
    for (int z = first(cz), z_end = std::min(size[2] - 1, cz + r); z <= z_end; z += step)
      for (int y = first(cy), y_end = std::min(size[1] - 1, cy + r); y <= y_end; y += step)
        for (int x = first(cx), x_end = std::min(size[0] - 1, cx + r); x <= x_end; x += step) {
          const long k = grid.index(x, y, z);
          count += solid[k] && !covered[k] && corner_reach(sub(grid.center(x, y, z), cc), s) <= radius;
        }
    return count;
  };
  auto place = [&](long c) {
    int cx, cy, cz;
    cell_xyz(c, &cx, &cy, &cz);
    const Vec3 cc = grid.center(cx, cy, cz);
    const double radius = radius_at(c);
    const int r = static_cast<int>(radius / s) + 1;
    double needed = 0;
    for (int z = std::max(0, cz - r); z <= std::min(size[2] - 1, cz + r); ++z)
      for (int y = std::max(0, cy - r); y <= std::min(size[1] - 1, cy + r); ++y)
        for (int x = std::max(0, cx - r); x <= std::min(size[0] - 1, cx + r); ++x) {
          const long k = grid.index(x, y, z);
          if (!solid[k] || covered[k]) continue;
          const double reach = corner_reach(sub(grid.center(x, y, z), cc), s);
          if (reach <= radius) {
            covered[k] = 1;
            needed = std::max(needed, reach);
          }
        }
    if (needed > 0) {
      Sphere sphere;
      for (int i = 0; i < 3; ++i) sphere.center[i] = cc[i];
      sphere.radius = needed;
      spheres.push_back(sphere);
    }
  };

  std::vector<std::pair<long, long>> heap;  // (score, -cell): the larger score, then the lower cell, first
  for (int z = 0; z < size[2]; z += lattice)
    for (int y = 0; y < size[1]; y += lattice)
      for (int x = 0; x < size[0]; x += lattice) {
        const long c = grid.index(x, y, z);
        if (radius_at(c) < h) continue;
        const long score = new_cells(c, sample);
        if (score > 0) heap.emplace_back(score, -c);
      }
  std::make_heap(heap.begin(), heap.end());
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end());
    const long c = -heap.back().second;
    heap.pop_back();
    const long score = new_cells(c, sample);
    if (score == 0) continue;
    if (!heap.empty() && score < heap.front().first) {
      heap.emplace_back(score, -c);
      std::push_heap(heap.begin(), heap.end());
      continue;
    }
    place(c);
  }

  for (long u = 0; u < n; ++u) {
    if (!solid[u] || covered[u]) continue;
    int ux, uy, uz;
    cell_xyz(u, &ux, &uy, &uz);
    const Vec3 uc = grid.center(ux, uy, uz);
    long best = -1, best_count = -1;
    auto consider = [&](int x, int y, int z) {
      const long c = grid.index(x, y, z);
      const double radius = radius_at(c);
      if (radius < h || corner_reach(sub(grid.center(x, y, z), uc), s) > radius) return;
      const long count = new_cells(c, 1);
      if (count > best_count) best = c, best_count = count;
    };
    const int around = std::max(1, search / 6);  // a coarse lattice of centres, and u
    consider(ux, uy, uz);
    for (int z = std::max(0, uz - search), z_end = std::min(size[2] - 1, uz + search); z <= z_end; z += around)
      for (int y = std::max(0, uy - search), y_end = std::min(size[1] - 1, uy + search); y <= y_end; y += around)
        for (int x = std::max(0, ux - search), x_end = std::min(size[0] - 1, ux + search); x <= x_end; x += around)
          consider(x, y, z);
    if (best < 0) throw linalg_cuda::Error("cover_with_spheres: no sphere covers a cell of link '" + link + "' (internal error)");
    place(best);
  }
  return spheres;
}

}  // namespace

std::vector<std::vector<Sphere>> cover_with_spheres(const RobotModel& model, const SphereCoverOptions& options) {
  if (!(options.tolerance > 0) || !std::isfinite(options.tolerance))
    throw linalg_cuda::InvalidArgument("cover_with_spheres: the tolerance must be a positive number of metres");
  // A link at a time on each thread; the first error (in link order) is thrown once all are done.
  const int links = static_cast<int>(model.links().size());
  std::vector<std::vector<Sphere>> out(links);
  std::vector<std::exception_ptr> errors(links);
#pragma omp parallel for schedule(dynamic, 1)
  for (int l = 0; l < links; ++l) {
    try {
      const detail::LinkGeometry g = detail::link_geometry(model.links()[l]);
      out[l] = cover_triangles(g.triangles, options.tolerance, model.links()[l].name);
      out[l].insert(out[l].end(), g.spheres.begin(), g.spheres.end());
    } catch (...) {
      errors[l] = std::current_exception();
    }
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

}  // namespace ompl_cuda
