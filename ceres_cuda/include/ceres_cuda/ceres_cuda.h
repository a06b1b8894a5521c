#pragma once
// ceres_cuda: a drop-in GPU ceres::Solve for bundle adjustment. One include for all of it.
#include "ceres_cuda/bal_problem.h"
#include "ceres_cuda/colmap_model.h"
#include "ceres_cuda/colmap_reprojection_error.h"
#include "ceres_cuda/quaternion_snavely_reprojection_error.h"
#include "ceres_cuda/snavely_reprojection_error.h"
#include "ceres_cuda/solve.h"
#include "ceres_cuda/split_bal_problem.h"
