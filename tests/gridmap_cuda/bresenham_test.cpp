// The closed-form Bresenham line against CARMEN's iterative one, cell for cell.
#include <random>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "bresenham_line.h"
#include "carmen_transcription.h"

namespace {

std::vector<std::pair<int, int>> closed_form_cells(int x1, int y1, int x2, int y2) {
  const gridmap_cuda::detail::BresenhamLine line(x1, y1, x2, y2);
  std::vector<std::pair<int, int>> cells;
  for (int j = 0; j < line.steps(); ++j) {
    int x, y;
    line.cell(j, &x, &y);
    cells.emplace_back(x, y);
  }
  return cells;
}

TEST(BresenhamLine, MatchesCarmenForEveryEndPointAroundSeveralStarts) {
  for (const auto& [sx, sy] : std::vector<std::pair<int, int>>{{0, 0}, {5, -3}, {-7, 11}}) {
    for (int dx = -25; dx <= 25; ++dx)
      for (int dy = -25; dy <= 25; ++dy)
        ASSERT_EQ(closed_form_cells(sx, sy, sx + dx, sy + dy), carmen::line_cells(sx, sy, sx + dx, sy + dy))
            << "from (" << sx << ", " << sy << ") by (" << dx << ", " << dy << ")";
  }
}

TEST(BresenhamLine, MatchesCarmenOnLongRandomLines) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> coordinate(-3000, 3000);
  for (int k = 0; k < 2000; ++k) {
    const int x1 = coordinate(rng), y1 = coordinate(rng), x2 = coordinate(rng), y2 = coordinate(rng);
    ASSERT_EQ(closed_form_cells(x1, y1, x2, y2), carmen::line_cells(x1, y1, x2, y2));
  }
}

TEST(BresenhamLine, HandCheckedCases) {
  using Cells = std::vector<std::pair<int, int>>;
  EXPECT_EQ(closed_form_cells(0, 0, 0, 0), (Cells{{0, 0}}));
  EXPECT_EQ(closed_form_cells(0, 0, 3, 0), (Cells{{0, 0}, {1, 0}, {2, 0}, {3, 0}}));
  EXPECT_EQ(closed_form_cells(0, 0, 0, -2), (Cells{{0, 0}, {0, -1}, {0, -2}}));
  EXPECT_EQ(closed_form_cells(0, 0, 2, 1), (Cells{{0, 0}, {1, 1}, {2, 1}}));    // tie forward: minor step
  EXPECT_EQ(closed_form_cells(2, 1, 0, 0), (Cells{{2, 1}, {1, 1}, {0, 0}}));    // tie backward: no minor step
  EXPECT_EQ(closed_form_cells(0, 0, -3, 3), (Cells{{0, 0}, {-1, 1}, {-2, 2}, {-3, 3}}));  // 45 deg runs along x
}

}  // namespace
