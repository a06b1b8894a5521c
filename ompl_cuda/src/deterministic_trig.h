#pragma once
// sin and cos that give the same bits on the CPU and the GPU: CUDA's sin/cos and glibc's may differ in
// the last ulp, and a last-ulp difference in a link's end point can flip a collision decision that
// grazes an obstacle. These are written once (LINALG_HD) with plain IEEE operations, and the module is
// compiled without fused multiply-add, so both processors round every step the same way. Accuracy:
// about 1 ulp for |x| up to ~1e5 (Cody-Waite reduction by pi/2 with a 3-part constant, then the
// fdlibm kernel polynomials on [-pi/4, pi/4]).
#include <math.h>

#include "linalg_cuda/internal/host_device.h"

namespace ompl_cuda::detail {

// fdlibm __kernel_sin / __kernel_cos coefficients (|x| <= pi/4).
LINALG_HD double kernel_sin(double x) {
  const double z = x * x;
  const double r = 8.33333333332248946124e-03 +
                   z * (-1.98412698298579493134e-04 +
                        z * (2.75573137070700676789e-06 + z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)));
  return x + (x * z) * (-1.66666666666666324348e-01 + z * r);
}

LINALG_HD double kernel_cos(double x) {
  const double z = x * x;
  const double r = z * (4.16666666666666019037e-02 +
                        z * (-1.38888888888741095749e-03 +
                             z * (2.48015872894767294178e-05 +
                                  z * (-2.75573143513906633035e-07 +
                                       z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11)))));
  const double hz = 0.5 * z;
  const double w = 1.0 - hz;
  return w + (((1.0 - w) - hz) + z * r);
}

// *s = sin(x), *c = cos(x).
LINALG_HD void deterministic_sincos(double x, double* s, double* c) {
  constexpr double kTwoOverPi = 6.36619772367581382433e-01;
  constexpr double kPio2_1 = 1.57079632673412561417e+00;   // first 33 bits of pi/2
  constexpr double kPio2_2 = 6.07710050650619224932e-11;   // next 33 bits
  constexpr double kPio2_3 = 2.02226624879595063154e-21;   // the rest
  const double k = nearbyint(x * kTwoOverPi);
  if (!(fabs(k) < 9007199254740992.0)) {  // 2^53 quarter turns, infinite or NaN: no angle left to reduce
    *s = *c = NAN;
    return;
  }
  const double r = ((x - k * kPio2_1) - k * kPio2_2) - k * kPio2_3;
  const double sr = kernel_sin(r), cr = kernel_cos(r);
  const int quadrant = static_cast<int>(static_cast<long long>(k) & 3);
  switch (quadrant) {
    case 0: *s = sr; *c = cr; break;
    case 1: *s = cr; *c = -sr; break;
    case 2: *s = -sr; *c = -cr; break;
    default: *s = -cr; *c = sr; break;
  }
}

}  // namespace ompl_cuda::detail
