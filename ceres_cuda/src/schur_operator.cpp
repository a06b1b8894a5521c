#include "schur_operator.h"

namespace ceres_cuda::detail {

SchurOperator::SchurOperator(const CellProducts& products, const InterleavedSchurProduct* interleaved,
                             const double* v_inverse, const double* d2, double* rows, double* e_values)
    : products_(products),
      interleaved_(interleaved),
      v_inverse_(v_inverse),
      d2_(d2),
      rows_(rows),
      e_values_(e_values),
      size_(static_cast<std::size_t>(products.view().f_tangent_size)),
      f_blocks_(products.view().first_e_block) {}

void SchurOperator::apply(const double* x, double* y) const {
  if (interleaved_) {
    interleaved_->apply(products_.view(), products_.product_chunks(), x, v_inverse_, rows_,
                        products_.product_partials());
    products_.sum_product_partials(0, f_blocks_, y);
  } else {
    products_.row_product(x, true, rows_);
    products_.e_solve(v_inverse_, rows_, e_values_);
    products_.subtract_e(e_values_, rows_);
    products_.column_sums(rows_, 0, f_blocks_, y);
  }
  products_.add_damping(d2_, x, y);
}

}  // namespace ceres_cuda::detail
