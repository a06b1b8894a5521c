// build_self_pair_tables (self_pair_table.h). A cell is classified at its centre in double precision:
// when every value of the cell is at most h_k from the centre along axis k, each sphere of link b
// moves in link a's frame by at most sum_k rho_k h_k, where rho_k bounds how far a unit change of
// value k moves any of b's sphere centres (a revolute joint: the distance from its axis, at most the
// offsets between it and b plus the farthest centre; a prismatic one: one metre per metre). Sphere pairs
// farther apart than that motion plus the rounding slack stay apart in the whole cell, pairs
// overlapping by more stay touching.
#include "self_pair_table.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "robot_check_data.h"
#include "robot_kinematics.h"

namespace ompl_cuda::detail {

namespace {

double norm3(const double* v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

// Cells per grid by its axes: on an arm a cell's spheres move by a fraction of a millimetre with two
// axes, a few with three, where finer grids would take seconds to build; 256 KB at most a grid.
constexpr long long kCells[kMaxSelfPairAxes + 1] = {1, 1 << 16, 1 << 20, 1 << 18};

struct Axis {
  int group_value;   // index into the group's values
  double motion;     // rho: metres of sphere motion per unit of the value
};

// Whether b's spheres, placed in a's frame by (r, t), stay apart from a's by more than `margin`
// (kSelfPairApart), overlap one of them by more (kSelfPairTouching), or neither.
unsigned classify(const RobotCheckData& d, int a, int b, const double* r, const double* t, double margin) {
  auto place = [&](const CheckSphere& s, double* c) {
    for (int i = 0; i < 3; ++i) c[i] = r[3 * i] * s.x + r[3 * i + 1] * s.y + r[3 * i + 2] * s.z + t[i];
  };
  auto gap = [](const double* c, double rc, const CheckSphere& s) {
    const double d[3] = {c[0] - s.x, c[1] - s.y, c[2] - s.z};
    return norm3(d) - rc - s.r;
  };
  bool apart = true;
  for (int gb = d.first_group[b]; gb < d.first_group[b + 1]; ++gb) {
    double cb[3];
    place(d.group_bounds[gb], cb);
    for (int ga = d.first_group[a]; ga < d.first_group[a + 1]; ++ga) {
      if (gap(cb, d.group_bounds[gb].r, d.group_bounds[ga]) > margin) continue;
      for (int j = d.first_sphere[gb]; j < d.first_sphere[gb + 1]; ++j) {
        double cj[3];
        place(d.spheres[j], cj);
        for (int i = d.first_sphere[ga]; i < d.first_sphere[ga + 1]; ++i) {
          const double g = gap(cj, d.spheres[j].r, d.spheres[i]);
          if (g < -margin) return kSelfPairTouching;
          if (g <= margin) apart = false;
        }
      }
    }
  }
  return apart ? kSelfPairApart : kSelfPairEither;
}

// The axes of the pair's grid (at most kMaxSelfPairAxes), or false where its relative pose moves with
// more group values, or with one that is unbounded. A revolute joint moves b's spheres in a's frame
// about its axis, by at most their distance from its origin per radian: on b's side of the common link,
// the offsets and travel of the joints below it and b's farthest sphere centre; on a's side, those of
// the joints from it up to the common link and all of b's side.
bool pair_axes(const RobotCheckData& d, int q, std::vector<Axis>* axes) {
  const int b = d.self_pairs[2 * q + 1];
  const PairPath& p = d.pair_paths[q];
  struct Moving {
    int group_value;  // or -1: the joint does not move with the group
    double multiplier;
    bool prismatic;
    double length;    // how far the joint's offset and travel carry the points below it
  };
  auto moving = [&](int k) {
    const KinematicJoint& j = d.joints[k];
    Moving m{-1, 1.0, j.type == 2, norm3(j.translation)};
    if (j.type == 3) return m;
    const int variable = j.mimic_of >= 0 ? d.joints[j.mimic_of].variable : j.variable;
    if (variable < 0) return m;
    m.multiplier = j.mimic_of >= 0 ? std::fabs(j.mimic_multiplier) : 1.0;
    const double offset = j.mimic_of >= 0 ? std::fabs(j.mimic_offset) : 0.0;
    const auto in_group = std::find(d.group.begin(), d.group.end(), variable);
    m.group_value = in_group == d.group.end() ? -1 : static_cast<int>(in_group - d.group.begin());
    if (m.prismatic) {
      const double travel = m.group_value >= 0 ? std::max(std::fabs(d.low[m.group_value]), std::fabs(d.high[m.group_value]))
                                               : std::fabs(d.held[variable]);
      m.length += m.multiplier * travel + offset;
    }
    return m;
  };
  std::vector<Moving> to_a, to_b;  // from the common link down to a, and down to b
  for (int i = 0; i < p.to_a; ++i) to_a.push_back(moving(d.path_joints[p.first + i]));
  for (int i = 0; i < p.to_b; ++i) to_b.push_back(moving(d.path_joints[p.first + p.to_a + i]));
  double below = 0;  // b's farthest sphere centre from b's origin, then the joints' lengths below
  for (int s = d.first_sphere[d.first_group[b]]; s < d.first_sphere[d.first_group[b + 1]]; ++s) {
    const double c[3] = {d.spheres[s].x, d.spheres[s].y, d.spheres[s].z};
    below = std::max(below, norm3(c));
  }
  axes->clear();
  auto add = [&](const Moving& m, double reach) {
    if (m.group_value < 0) return;
    auto axis = std::find_if(axes->begin(), axes->end(), [&](const Axis& x) { return x.group_value == m.group_value; });
    if (axis == axes->end()) {
      axes->push_back({m.group_value, 0.0});
      axis = axes->end() - 1;
    }
    axis->motion += m.multiplier * (m.prismatic ? 1.0 : reach);
  };
  for (int i = p.to_b - 1; i >= 0; --i) {
    add(to_b[i], below);
    below += to_b[i].length;
  }
  for (const Moving& m : to_a) {
    below += m.length;
    add(m, below);
  }
  if (!std::isfinite(below) || axes->size() > kMaxSelfPairAxes) return false;
  for (const Axis& x : *axes)
    if (!std::isfinite(d.low[x.group_value]) || !std::isfinite(d.high[x.group_value])) return false;
  return true;
}

// Cells along each of `axes` axes in proportion to span[k] (how far the spheres move over the axis'
// range), at most `budget` in all: the axes with the least span first, each at least one cell, so that
// an axis that moves nothing (a sphere on its own joint's axis) leaves its share to the others.
void split_cells(const double* span, int axes, long long budget, int* cells) {
  int order[kMaxSelfPairAxes];
  for (int k = 0; k < axes; ++k) order[k] = k;
  std::sort(order, order + axes, [&](int x, int y) { return span[x] < span[y]; });
  double left = static_cast<double>(budget);
  for (int i = 0; i < axes; ++i) {
    double product = 1;
    for (int j = i; j < axes; ++j) product *= std::max(span[order[j]], 1e-12);
    const double share = std::pow(left / product, 1.0 / (axes - i)) * std::max(span[order[i]], 1e-12);
    cells[order[i]] = static_cast<int>(std::clamp(std::floor(share), 1.0, left));
    left = std::floor(left / cells[order[i]]);
  }
}

SelfPairTables build_tables(const RobotCheckData& d, double slack) {
  SelfPairTables out;
  const int pairs = static_cast<int>(d.self_pairs.size() / 2);
  out.tables.resize(pairs);
  std::vector<unsigned char> cells;
  for (int q = 0; q < pairs; ++q) {
    const int a = d.self_pairs[2 * q], b = d.self_pairs[2 * q + 1];
    std::vector<Axis> axes;
    if (!pair_axes(d, q, &axes)) continue;
    SelfPairTable& t = out.tables[q];
    t.axes = static_cast<int>(axes.size());
    t.first = static_cast<long long>(cells.size());
    double span[kMaxSelfPairAxes];
    for (int k = 0; k < t.axes; ++k) span[k] = axes[k].motion * (d.high[axes[k].group_value] - d.low[axes[k].group_value]);
    split_cells(span, t.axes, kCells[t.axes], t.cells);
    double width[kMaxSelfPairAxes] = {0, 0, 0};
    for (int k = 0; k < t.axes; ++k) {
      const double low = d.low[axes[k].group_value];
      width[k] = (d.high[axes[k].group_value] - low) / t.cells[k];
      t.variable[k] = d.group[axes[k].group_value];
      t.low[k] = low;
      t.scale[k] = width[k] > 0 ? 1.0 / width[k] : 0.0;
    }
    const long long n = static_cast<long long>(t.cells[0]) * t.cells[1] * t.cells[2];
    cells.resize(cells.size() + n);
    unsigned char* grid = cells.data() + t.first;
    const int num_links = static_cast<int>(d.link_bounds.size());
    // Blocks of cells are classified whole, with the margin of their size, and halved along each axis
    // where that settles nothing: only the cells along a contact's edge are classified one by one.
    int top[kMaxSelfPairAxes];
    for (int k = 0; k < kMaxSelfPairAxes; ++k) top[k] = std::min(t.cells[k], 16);
#pragma omp parallel
    {
      std::vector<double> full(d.held), poses(12 * num_links);
      auto classify_block = [&](const int* from, const int* to) {
        double motion = 0;
        for (int k = 0; k < t.axes; ++k) {
          full[t.variable[k]] = t.low[k] + (from[k] + to[k]) / 2.0 * width[k];
          // A value may land one rounding beyond its cell: the half-widths are taken a little wider.
          motion += axes[k].motion * ((to[k] - from[k]) * width[k] / 2 * (1 + 1e-9) + 1e-12);
        }
        link_poses(d.joints.data(), static_cast<int>(d.joints.size()), full.data(), poses.data());
        const double* pa = poses.data() + 12 * a;
        const double* pb = poses.data() + 12 * b;
        double r[9], tr[3], delta[3];
        for (int i = 0; i < 3; ++i) delta[i] = pb[9 + i] - pa[9 + i];
        for (int i = 0; i < 3; ++i) {
          for (int j = 0; j < 3; ++j) r[3 * i + j] = pa[i] * pb[j] + pa[3 + i] * pb[3 + j] + pa[6 + i] * pb[6 + j];
          tr[i] = pa[i] * delta[0] + pa[3 + i] * delta[1] + pa[6 + i] * delta[2];
        }
        return classify(d, a, b, r, tr, motion + slack);
      };
      auto fill = [&](const int* from, const int* to, unsigned value) {
        for (long long z = from[2]; z < to[2]; ++z)
          for (long long y = from[1]; y < to[1]; ++y) {
            unsigned char* row = grid + (z * t.cells[1] + y) * t.cells[0];
            std::fill(row + from[0], row + to[0], static_cast<unsigned char>(value));
          }
      };
      std::function<void(const int*, const int*)> refine = [&](const int* from, const int* to) {
        const unsigned value = classify_block(from, to);
        bool single = true;
        for (int k = 0; k < kMaxSelfPairAxes; ++k) single = single && to[k] - from[k] == 1;
        if (value != kSelfPairEither || single) return fill(from, to, value);
        for (int h = 0; h < (1 << kMaxSelfPairAxes); ++h) {  // the halves; an axis of one cell is not halved
          int lo[kMaxSelfPairAxes], hi[kMaxSelfPairAxes];
          bool empty = false;
          for (int k = 0; k < kMaxSelfPairAxes; ++k) {
            const bool upper = (h >> k) & 1;
            const int mid = (from[k] + to[k]) / 2;
            lo[k] = upper ? mid : from[k];
            hi[k] = upper ? to[k] : mid;
            if (to[k] - from[k] == 1) empty |= upper, lo[k] = from[k], hi[k] = to[k];
          }
          if (!empty) refine(lo, hi);
        }
      };
#pragma omp for schedule(dynamic, 1) collapse(3)
      for (int bz = 0; bz < top[2]; ++bz)
        for (int by = 0; by < top[1]; ++by)
          for (int bx = 0; bx < top[0]; ++bx) {
            const int block[kMaxSelfPairAxes] = {bx, by, bz};
            int from[kMaxSelfPairAxes], to[kMaxSelfPairAxes];
            for (int k = 0; k < kMaxSelfPairAxes; ++k) {
              from[k] = static_cast<int>(static_cast<long long>(t.cells[k]) * block[k] / top[k]);
              to[k] = static_cast<int>(static_cast<long long>(t.cells[k]) * (block[k] + 1) / top[k]);
            }
            refine(from, to);
          }
    }
  }
  out.bits.assign((cells.size() + 15) / 16, 0u);
  for (std::size_t c = 0; c < cells.size(); ++c) out.bits[c >> 4] |= static_cast<unsigned>(cells[c]) << (2 * (c & 15));
  return out;
}

// Everything the grids depend on, as bytes.
template <typename T>
void append(std::string* key, const std::vector<T>& v) {
  const std::size_t n = v.size();
  key->append(reinterpret_cast<const char*>(&n), sizeof n);
  key->append(reinterpret_cast<const char*>(v.data()), n * sizeof(T));
}

}  // namespace

SelfPairTables build_self_pair_tables(const RobotCheckData& d, double slack) {
  // Checks for one robot are made again and again (a planner per query, bounds set, a scene changed):
  // the last few robots' grids are kept for the process.
  std::string key(reinterpret_cast<const char*>(&slack), sizeof slack);
  for (const KinematicJoint& j : d.joints) {  // field by field: the struct has padding
    key.append(reinterpret_cast<const char*>(j.rotation), sizeof j.rotation + sizeof j.translation + sizeof j.axis);
    const int ints[5] = {j.type, j.parent_link, j.child_link, j.variable, j.mimic_of};
    const double mimic[2] = {j.mimic_multiplier, j.mimic_offset};
    key.append(reinterpret_cast<const char*>(ints), sizeof ints);
    key.append(reinterpret_cast<const char*>(mimic), sizeof mimic);
  }
  append(&key, d.group);
  append(&key, d.held);
  append(&key, d.low);
  append(&key, d.high);
  append(&key, d.first_group);
  append(&key, d.group_bounds);
  append(&key, d.first_sphere);
  append(&key, d.spheres);
  append(&key, d.self_pairs);
  static std::mutex mutex;
  static std::list<std::pair<std::string, std::shared_ptr<const SelfPairTables>>> kept;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = kept.begin(); it != kept.end(); ++it)
      if (it->first == key) {
        kept.splice(kept.begin(), kept, it);
        return *it->second;
      }
  }
  auto tables = std::make_shared<const SelfPairTables>(build_tables(d, slack));
  std::lock_guard<std::mutex> lock(mutex);
  kept.emplace_front(std::move(key), tables);
  if (kept.size() > 8) kept.pop_back();
  return *tables;
}

}  // namespace ompl_cuda::detail
