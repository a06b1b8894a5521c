#pragma once
// A uniform grid over the rectangles, so that a link is tested only against the rectangles near it
// once there are many. A rectangle is listed in every cell its closed extent touches; a link looks in
// every cell its bounding box touches. The cell of a coordinate is one monotone function of it (the
// same IEEE operations on the CPU and the GPU, no fused multiply-add), so whenever a link and a
// rectangle share a point their cell ranges share a cell: the grid only skips rectangles the exact
// test would reject, and the decisions are those of testing every rectangle.
#include <math.h>

#include <vector>

#include "linalg_cuda/internal/host_device.h"

namespace ompl_cuda::detail {

struct RectangleGridView {
  int nx = 0, ny = 0;             // 0: no grid, test every rectangle
  double x0 = 0, y0 = 0;          // lower corner of cell (0, 0)
  double inv_w = 0, inv_h = 0;    // 1 / cell size
  const int* cell_start = nullptr;  // nx * ny + 1 offsets into cell_rects, cell (i, j) at j * nx + i
  const int* cell_rects = nullptr;  // rectangle indices
};

// Column (or row) of coordinate v, clamped to the grid: monotone in v.
LINALG_HD int grid_cell(double v, double origin, double inv_size, int cells) {
  const double c = floor((v - origin) * inv_size);
  if (!(c > 0.0)) return 0;  // also NaN, which no valid configuration produces
  if (c >= static_cast<double>(cells - 1)) return cells - 1;
  return static_cast<int>(c);
}

// Grid storage on the host; view() points into it.
struct RectangleGrid {
  RectangleGridView layout;  // sizes and geometry; pointers filled by view()
  std::vector<int> cell_start, cell_rects;

  RectangleGridView view() const {
    RectangleGridView v = layout;
    v.cell_start = cell_start.data();
    v.cell_rects = cell_rects.data();
    return v;
  }
};

// Fewer rectangles than this are tested one by one (a grid would cost more than it saves).
constexpr int kRectangleGridThreshold = 64;

// The grid over rects (x_min, y_min, x_max, y_max each), about one rectangle per cell; an empty grid
// (nx = 0) below kRectangleGridThreshold rectangles.
RectangleGrid build_rectangle_grid(const std::vector<double>& rects);

}  // namespace ompl_cuda::detail
