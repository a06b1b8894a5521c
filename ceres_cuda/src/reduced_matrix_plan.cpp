#include "reduced_matrix_plan.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "linalg_cuda/errors.h"

namespace ceres_cuda::detail {

// On all threads, a row block j at a time (each writes only its own pairs' entries): the other
// f-blocks of j's residuals, counted per distinct block, then the entries placed.
FtfPairs::FtfPairs(const SchurStructure& s, const JacobianCells& cells) {
  const int F = s.num_f_blocks;
  // The other f-cells d (block k < j) of the residual of j's cell c.
  auto for_each_partner = [&](int j, auto&& visit) {
    for (int q = cells.column_start[j]; q < cells.column_start[j + 1]; ++q) {
      const int c = cells.column_cells[q], r = cells.cells[c].residual;
      for (int d = cells.row_start[r]; d < cells.row_start[r + 1]; ++d)
        if (cells.cells[d].block < j) visit(c, d);  // e-blocks are numbered after every f-block
    }
  };
  std::vector<std::vector<int>> partners(F);  // per j: its distinct k, ascending
  std::vector<std::vector<int>> counts(F);
#pragma omp parallel for schedule(dynamic, 16)
  for (int j = 0; j < F; ++j) {
    std::vector<int> ks;
    for_each_partner(j, [&](int, int d) { ks.push_back(cells.cells[d].block); });
    std::sort(ks.begin(), ks.end());
    for (std::size_t a = 0; a < ks.size();) {
      std::size_t b = a;
      while (b < ks.size() && ks[b] == ks[a]) ++b;
      partners[j].push_back(ks[a]);
      counts[j].push_back(static_cast<int>(b - a));
      a = b;
    }
  }
  std::vector<int> pair_start(F + 1, 0);
  for (int j = 0; j < F; ++j) pair_start[j + 1] = pair_start[j] + static_cast<int>(partners[j].size());
  const int P = pair_start[F];
  pair_j.resize(P);
  pair_k.resize(P);
  std::vector<int> entry_start(P + 1, 0);
  long entries = 0;
  for (int j = 0; j < F; ++j)
    for (std::size_t a = 0; a < partners[j].size(); ++a) {
      const int i = pair_start[j] + static_cast<int>(a);
      pair_j[i] = j;
      pair_k[i] = partners[j][a];
      entries += counts[j][a];
      if (entries > std::numeric_limits<int>::max())
        throw linalg_cuda::Error("ceres_cuda: more than 2^31 pairs of f-blocks' cells in the reduced matrix");
      entry_start[i + 1] = static_cast<int>(entries);
    }
  entry_j.resize(entry_start[P]);
  entry_k.resize(entry_start[P]);
#pragma omp parallel for schedule(dynamic, 16)
  for (int j = 0; j < F; ++j) {
    std::vector<int> next(entry_start.begin() + pair_start[j], entry_start.begin() + pair_start[j + 1]);
    for_each_partner(j, [&](int c, int d) {
      const auto at = std::lower_bound(partners[j].begin(), partners[j].end(), cells.cells[d].block);
      const int e = next[at - partners[j].begin()]++;
      entry_j[e] = c;
      entry_k[e] = d;
    });
  }
  pair_chunk_start.push_back(0);
  for (int i = 0; i < P; ++i) {
    for (int e = entry_start[i]; e < entry_start[i + 1]; e += kChunk) {
      chunk_pair.push_back(i);
      chunk_position.push_back(e);
    }
    pair_chunk_start.push_back(static_cast<int>(chunk_pair.size()));
  }
  chunk_position.push_back(entry_start[P]);
}

}  // namespace ceres_cuda::detail
