#pragma once
// CARMEN's Bresenham line (global.c: carmen_get_bresenham_parameters / carmen_get_next_point) in
// closed form, so that any step of the line can be computed on its own: one GPU thread per cell.
//
// CARMEN walks the major axis (x unless |dy/dx| > 1) one cell per step, both ends included, and
// mirrors the minor axis so that it moves in the same direction as the major one. Its decision term
// after j steps is D_j = 2b(j+1) - a - 2a m_j (a = |major delta|, b = |minor delta|, m_j = minor steps
// so far), and it takes a minor step when D_j >= 0 going forward but only when D_j > 0 going backward.
// Hence m_j = floor((2bj + a) / 2a) forward and ceil((2bj - a) / 2a) backward: b j / a rounded half up
// going forward, half down going backward (so a line and its reverse can differ at ties).
#include <cstdint>

#include "linalg_cuda/internal/host_device.h"

namespace gridmap_cuda::detail {

LINALG_HD int64_t floor_div(int64_t p, int64_t q) {  // q > 0
  const int64_t d = p / q;
  return (p % q != 0 && p < 0) ? d - 1 : d;
}

struct BresenhamLine {
  int major_start = 0;  // start along the major axis
  int minor_start = 0;  // start along the minor axis, negated when the line is flipped
  int increment = 1;    // +1 or -1 along the major axis
  int a = 0;            // |delta| along the major axis
  int b = 0;            // |delta| along the minor axis (b <= a)
  bool steep = false;   // the major axis is y
  bool flipped = false; // the minor axis was negated

  LINALG_HD BresenhamLine(int x1, int y1, int x2, int y2) {
    const int dx = x2 - x1, dy = y2 - y1;
    // CARMEN: steep when |dy/dx| > 1, with dx = 0 steep unless dy = 0 too (0/0 is not > 1).
    steep = dx == 0 ? dy != 0 : (dy > 0 ? dy : -dy) > (dx > 0 ? dx : -dx);
    int major1 = steep ? y1 : x1, minor1 = steep ? x1 : y1;
    const int major2 = steep ? y2 : x2;
    int minor2 = steep ? x2 : y2;
    flipped = static_cast<int64_t>(dx) * dy < 0;
    if (flipped) {
      minor1 = -minor1;
      minor2 = -minor2;
    }
    increment = major2 > major1 ? 1 : -1;
    major_start = major1;
    minor_start = minor1;
    a = (major2 - major1) * increment;
    b = (minor2 - minor1) * increment;
  }

  // Cells on the line, both ends included.
  LINALG_HD int steps() const { return a + 1; }

  // Cell number j (0 = the start cell).
  LINALG_HD void cell(int j, int* x, int* y) const {
    int64_t m = 0;
    if (a > 0) {
      const int64_t twice_a = 2 * static_cast<int64_t>(a), twice_bj = 2 * static_cast<int64_t>(b) * j;
      m = increment > 0 ? floor_div(twice_bj + a, twice_a) : -floor_div(-(twice_bj - a), twice_a);
    }
    const int major = major_start + increment * j;
    int minor = minor_start + increment * static_cast<int>(m);
    if (flipped) minor = -minor;
    *x = steep ? minor : major;
    *y = steep ? major : minor;
  }
};

}  // namespace gridmap_cuda::detail
