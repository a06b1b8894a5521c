#include "cpu_block_schur.h"

#include <algorithm>
#include <vector>

#include "block_schur_math.h"

namespace ceres_cuda::detail {
namespace {

// W_j of one e-block: the sum of F_rj' E_r over its residuals r that touch f-block j.
struct BlockProduct {
  int block;
  std::vector<double> values;
};

}  // namespace

CpuBlockSchur::CpuBlockSchur(const SchurStructure& structure, const JacobianCells& cells, int threads)
    : s_(structure),
      cells_(cells),
      threads_(threads),
      product_chunks_(cells, 0, structure.num_variable_blocks(), kProductChunkCells, false),
      diagonal_chunks_(cells, 0, structure.num_f_blocks, kDiagonalChunkCells, true) {
  product_partials_.resize(static_cast<std::size_t>(product_chunks_.size()) * product_stride(product_chunks_));
  diagonal_partials_.resize(static_cast<std::size_t>(diagonal_chunks_.size()) * diagonal_stride(diagonal_chunks_));
  v_inverse_.assign(static_cast<std::size_t>(structure.num_e_blocks) * kEBlockValues, 0.0);
  diagonal_offset_.assign(structure.num_f_blocks + 1, 0);
  for (int b = 0; b < structure.num_f_blocks; ++b) {
    const long t = structure.blocks[b].tangent_size;
    diagonal_offset_[b + 1] = diagonal_offset_[b] + t * t;
  }
  rows_.resize(cells.num_rows);
  e_values_.resize(structure.e_tangent_size);
  view_ = BlockSparseView{cells.cells.data(),          cells.row_start.data(),  cells.e_cell.data(),
                          cells.row_offset.data(),     cells.column_start.data(), cells.column_cells.data(),
                          cells.e_sorted_cells.data(), cells.tangent_size.data(), cells.tangent_offset.data(),
                          nullptr,                     structure.f_tangent_size,  structure.first_e_block()};
}

int CpuBlockSchur::factor_e_blocks(const double* d2) {
  d2_ = d2;
  int singular = 0;
#pragma omp parallel for schedule(static) num_threads(threads_) reduction(+ : singular)
  for (int b = s_.first_e_block(); b < s_.num_variable_blocks(); ++b)
    singular += e_block_inverse(view_, b, d2, v_inverse_.data()) > 0 ? 1 : 0;
  return singular;
}

void CpuBlockSchur::jacobian_product(const double* x, bool f_only, double* rows) const {
  const int R = static_cast<int>(s_.residuals.size());
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int r = 0; r < R; ++r) row_product(view_, r, x, f_only, rows);
}

void CpuBlockSchur::column_sums(const double* rows, bool norms, int first_block, int last_block, double* out) const {
  const ChunkView ch = view_of(product_chunks_, product_stride(product_chunks_));
  const int first = product_chunks_.block_start[first_block], last = product_chunks_.block_start[last_block];
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int k = first; k < last; ++k) column_chunk(view_, ch, k, rows, norms, product_partials_.data());
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int b = first_block; b < last_block; ++b) column_chunks_sum(view_, ch, b, product_partials_.data(), out);
}

void CpuBlockSchur::transpose_product(const double* rows, int first_block, int last_block, double* out) const {
  column_sums(rows, false, first_block, last_block, out);
}

void CpuBlockSchur::column_norms(double* out) const { column_sums(nullptr, true, 0, s_.num_variable_blocks(), out); }

void CpuBlockSchur::subtract_e_terms(const double* w, double* rows) const {
  const int R = static_cast<int>(s_.residuals.size());
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int r = 0; r < R; ++r) subtract_e_term(view_, r, w, rows);
}

void CpuBlockSchur::reduced_rhs(const double* f, double* rhs) const {
  back_substitute(f, nullptr, e_values_.data());  // V^-1 E'f
  std::copy(f, f + cells_.num_rows, rows_.begin());
  subtract_e_terms(e_values_.data(), rows_.data());
  transpose_product(rows_.data(), 0, s_.num_f_blocks, rhs);
}

void CpuBlockSchur::apply(const double* x, double* out) const {
  jacobian_product(x, true, rows_.data());                   // F x
  back_substitute(rows_.data(), nullptr, e_values_.data());  // V^-1 E'F x
  subtract_e_terms(e_values_.data(), rows_.data());
  transpose_product(rows_.data(), 0, s_.num_f_blocks, out);
  for (long k = 0; k < s_.f_tangent_size; ++k) out[k] += d2_[k] * x[k];
}

void CpuBlockSchur::back_substitute(const double* f, const double* y_f, double* y_e) const {
  const double* rows = f;
  if (y_f != nullptr) {  // rows = f - F y_f
    jacobian_product(y_f, true, rows_.data());
    for (long k = 0; k < cells_.num_rows; ++k) rows_[k] = f[k] - rows_[k];
    rows = rows_.data();
  }
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int b = s_.first_e_block(); b < s_.num_variable_blocks(); ++b) e_block_solve(view_, b, v_inverse_.data(), rows, y_e);
}

int CpuBlockSchur::inverted_block_diagonal(bool schur, std::vector<double>* blocks) const {
  blocks->assign(diagonal_offset_.back(), 0.0);
  const ChunkView ch = view_of(diagonal_chunks_, diagonal_stride(diagonal_chunks_));
#pragma omp parallel for schedule(static) num_threads(threads_)
  for (int k = 0; k < diagonal_chunks_.size(); ++k)
    for (int i = 0, n = lower_triangle_entries(view_.tangent_size[ch.block[k]]); i < n; ++i)
      diagonal_chunk_entry(view_, ch, k, i, schur, v_inverse_.data(), diagonal_partials_.data());
  int singular = 0;
#pragma omp parallel for schedule(static) num_threads(threads_) reduction(+ : singular)
  for (int b = 0; b < s_.num_f_blocks; ++b)
    singular += diagonal_chunks_sum(view_, ch, b, diagonal_partials_.data(), d2_, blocks->data() + diagonal_offset_[b]) > 0;
  return singular;
}

double CpuBlockSchur::model_cost_change(const double* step, const double* f) const {
  jacobian_product(step, false, rows_.data());
  double change = 0.0;
  for (int r = 0; r < static_cast<int>(s_.residuals.size()); ++r)
    change += detail::model_cost_change(view_, r, rows_.data(), f);
  return change;
}

void CpuBlockSchur::explicit_schur(const std::function<void(int, int, const double*)>& add) const {
  double product[kMaxFBlockTangentSize * kMaxFBlockTangentSize];
  const int R = static_cast<int>(s_.residuals.size());
  for (int r = 0; r < R; ++r)  // F'F: every pair of f-cells of a row
    for (int i = cells_.row_start[r]; i < cells_.row_start[r + 1]; ++i) {
      if (i == cells_.e_cell[r]) continue;
      for (int j = cells_.row_start[r]; j < cells_.row_start[r + 1]; ++j) {
        if (j == cells_.e_cell[r]) continue;
        const int bi = cells_.cells[i].block, bj = cells_.cells[j].block;
        cells_transpose_times(view_.cell(i), s_.blocks[bi].tangent_size, view_.cell(j), s_.blocks[bj].tangent_size,
                              s_.residuals[r].size, product);
        add(bi, bj, product);
      }
    }
  for (int b = 0; b < s_.num_f_blocks; ++b) {  // D_f^2
    const int t = s_.blocks[b].tangent_size;
    std::fill(product, product + t * t, 0.0);
    for (int k = 0; k < t; ++k) product[k * t + k] = d2_[s_.blocks[b].tangent_offset + k];
    add(b, b, product);
  }
  std::vector<BlockProduct> W;
  for (int eb = s_.first_e_block(); eb < s_.num_variable_blocks(); ++eb) {  // -W_j V^-1 W_k' per pair j, k
    const int e = s_.blocks[eb].tangent_size;
    W.clear();
    for (int q = cells_.column_start[eb]; q < cells_.column_start[eb + 1]; ++q) {
      const int ec = cells_.column_cells[q];
      const int r = cells_.cells[ec].residual;
      for (int c = cells_.row_start[r]; c < cells_.row_start[r + 1]; ++c) {
        if (c == ec) continue;
        const int fb = cells_.cells[c].block, t = s_.blocks[fb].tangent_size;
        cells_transpose_times(view_.cell(c), t, view_.cell(ec), e, s_.residuals[r].size, product);
        auto it = std::find_if(W.begin(), W.end(), [fb](const BlockProduct& w) { return w.block == fb; });
        if (it == W.end()) it = W.insert(W.end(), BlockProduct{fb, std::vector<double>(t * e, 0.0)});
        for (int k = 0; k < t * e; ++k) it->values[k] += product[k];
      }
    }
    const double* V = v_inverse_.data() + static_cast<long>(eb - s_.first_e_block()) * kEBlockValues;
    for (const BlockProduct& a : W)
      for (const BlockProduct& b : W) {
        const int ta = s_.blocks[a.block].tangent_size, tb = s_.blocks[b.block].tangent_size;
        sandwich(a.values.data(), ta, V, e, b.values.data(), tb, product);
        for (int k = 0; k < ta * tb; ++k) product[k] = -product[k];
        add(a.block, b.block, product);
      }
  }
}

}  // namespace ceres_cuda::detail
