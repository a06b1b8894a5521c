#include "rectangle_grid.h"

#include <algorithm>
#include <cmath>

namespace ompl_cuda::detail {

RectangleGrid build_rectangle_grid(const std::vector<double>& rects) {
  RectangleGrid grid;
  const int count = static_cast<int>(rects.size() / 4);
  if (count < kRectangleGridThreshold) return grid;
  double x_min = rects[0], y_min = rects[1], x_max = rects[2], y_max = rects[3];
  for (int r = 1; r < count; ++r) {
    x_min = std::min(x_min, rects[4 * r]);
    y_min = std::min(y_min, rects[4 * r + 1]);
    x_max = std::max(x_max, rects[4 * r + 2]);
    y_max = std::max(y_max, rects[4 * r + 3]);
  }
  // About one rectangle per cell, square-ish cells, at most 1024 cells a side.
  const double width = x_max - x_min, height = y_max - y_min;
  const double side = std::sqrt(width * height / count);
  RectangleGridView& g = grid.layout;
  g.nx = static_cast<int>(std::clamp(std::ceil(width / side), 1.0, 1024.0));
  g.ny = static_cast<int>(std::clamp(std::ceil(height / side), 1.0, 1024.0));
  g.x0 = x_min;
  g.y0 = y_min;
  g.inv_w = g.nx / width;
  g.inv_h = g.ny / height;

  // Counting sort of (cell, rectangle) pairs: each cell's list in rectangle order.
  auto for_each_cell = [&](int r, auto&& visit) {
    const int i0 = grid_cell(rects[4 * r], g.x0, g.inv_w, g.nx), i1 = grid_cell(rects[4 * r + 2], g.x0, g.inv_w, g.nx);
    const int j0 = grid_cell(rects[4 * r + 1], g.y0, g.inv_h, g.ny), j1 = grid_cell(rects[4 * r + 3], g.y0, g.inv_h, g.ny);
    for (int j = j0; j <= j1; ++j)
      for (int i = i0; i <= i1; ++i) visit(j * g.nx + i);
  };
  grid.cell_start.assign(static_cast<std::size_t>(g.nx) * g.ny + 1, 0);
  for (int r = 0; r < count; ++r) for_each_cell(r, [&](int cell) { ++grid.cell_start[cell + 1]; });
  for (std::size_t c = 1; c < grid.cell_start.size(); ++c) grid.cell_start[c] += grid.cell_start[c - 1];
  grid.cell_rects.resize(grid.cell_start.back());
  std::vector<int> fill(grid.cell_start.begin(), grid.cell_start.end() - 1);
  for (int r = 0; r < count; ++r) for_each_cell(r, [&](int cell) { grid.cell_rects[fill[cell]++] = r; });
  return grid;
}

}  // namespace ompl_cuda::detail
