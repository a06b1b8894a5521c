#include "reduced_matrix_plan.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "counting_sort.h"
#include "linalg_cuda/errors.h"
#include "set_up_threads.h"

namespace ceres_cuda::detail {

// On all threads, a row block j at a time (each writes only its own pairs' entries): the other
// f-blocks of j's residuals, counted per distinct block in a table of all f-blocks (a column of a block
// shared by every image holds a cell per observation: counting is linear where sorting its partners
// took milliseconds), then the entries placed. A thread takes one j at a time: a problem of a few
// images has a few dozen f-blocks, and chunks of them left threads idle.
FtfPairs::FtfPairs(const SchurStructure& s, const JacobianCells& cells) {
  const int F = s.num_f_blocks;
  const SetUpThreads threads(static_cast<long>(s.residuals.size()));
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
#pragma omp parallel
  {
    std::vector<int> count(F, 0);  // per k, for the j at hand; zero again after each j
#pragma omp for schedule(dynamic, 1)
    for (int j = 0; j < F; ++j) {
      std::vector<int>& ks = partners[j];
      for_each_partner(j, [&](int, int d) {
        const int k = cells.cells[d].block;
        if (count[k]++ == 0) ks.push_back(k);
      });
      std::sort(ks.begin(), ks.end());
      counts[j].reserve(ks.size());
      for (const int k : ks) {
        counts[j].push_back(count[k]);
        count[k] = 0;
      }
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
#pragma omp parallel
  {
    std::vector<int> next(F, 0);  // per k, for the j at hand: the next entry of pair (j, k)
#pragma omp for schedule(dynamic, 1)
    for (int j = 0; j < F; ++j) {
      for (std::size_t a = 0; a < partners[j].size(); ++a) next[partners[j][a]] = entry_start[pair_start[j] + a];
      for_each_partner(j, [&](int c, int d) {
        const int e = next[cells.cells[d].block]++;
        entry_j[e] = c;
        entry_k[e] = d;
      });
    }
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

ReducedMatrixPlan::ReducedMatrixPlan(const SchurStructure& s, const JacobianCells& cells) {
  const int E = s.num_e_blocks, first = s.first_e_block();
  const SetUpThreads threads(static_cast<long>(s.residuals.size()));
  // Calls visit(j) for each distinct f-block of e-block p's residuals, in first-use order.
  auto for_each_slot = [&](int p, std::vector<int>* local, auto&& visit) {
    local->clear();
    for (int q = cells.column_start[p]; q < cells.column_start[p + 1]; ++q) {
      const int r = cells.cells[cells.column_cells[q]].residual;
      for (int c = cells.row_start[r]; c < cells.row_start[r + 1]; ++c) {
        const int j = cells.cells[c].block;
        if (j != p && std::find(local->begin(), local->end(), j) == local->end()) {
          local->push_back(j);
          visit(j);
        }
      }
    }
  };
  slot_start.assign(E + 1, 0);
  std::vector<long> value_start(E + 1, 0);
#pragma omp parallel
  {
    std::vector<int> local;
#pragma omp for schedule(dynamic, 1024)
    for (int i = 0; i < E; ++i) {
      const long e = s.blocks[first + i].tangent_size;
      int slots = 0;
      long values = 0;
      for_each_slot(first + i, &local, [&](int j) {
        ++slots;
        values += s.blocks[j].tangent_size * e;
      });
      slot_start[i + 1] = slots;
      value_start[i + 1] = values;
    }
  }
  for (int i = 0; i < E; ++i) {
    slot_start[i + 1] += slot_start[i];
    value_start[i + 1] += value_start[i];
  }
  num_values = value_start[E];
  const int S = slot_start[E];
  slot_block.resize(S);
  slot_values.resize(S);
  slot_e_block.resize(S);
#pragma omp parallel
  {
    std::vector<int> local;
#pragma omp for schedule(dynamic, 1024)
    for (int i = 0; i < E; ++i) {
      const long e = s.blocks[first + i].tangent_size;
      int slot = slot_start[i];
      long values = value_start[i];
      for_each_slot(first + i, &local, [&](int j) {
        slot_block[slot] = j;
        slot_values[slot] = values;
        slot_e_block[slot] = first + i;
        values += s.blocks[j].tangent_size * e;
        ++slot;
      });
    }
  }
  row_slots.resize(S);
  const std::vector<long> starts = parallel_counting_sort(
      S, s.num_f_blocks, [&](long slot) { return slot_block[slot]; },
      [&](long slot, long position) { row_slots[position] = static_cast<int>(slot); });
  row_start.assign(starts.begin(), starts.end());
}

}  // namespace ceres_cuda::detail
