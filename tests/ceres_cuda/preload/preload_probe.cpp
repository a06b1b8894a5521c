// preload_probe: an ordinary Ceres program, linked to the system's shared libceres and to nothing of
// ceres_cuda, for the LD_PRELOAD test. It reads a BAL file, adjusts it three times and prints each
// solve's costs at full precision:
//   1. ceres::Solve, ITERATIVE_SCHUR + SCHUR_JACOBI, the user's autodiff cost functions;
//   2. ceres::Solver::Solve (the member), DENSE_SCHUR;
//   3. ceres::Solve with a line search minimizer, which ceres_cuda hands back to Ceres.
//
//   preload_probe problem-49-7776-pre.txt
#include <ceres/autodiff_cost_function.h>
#include <ceres/problem.h>
#include <ceres/rotation.h>
#include <ceres/solver.h>

#include <cstdio>
#include <vector>

namespace {

struct Snavely {
  Snavely(double x, double y) : x(x), y(y) {}
  template <typename T>
  bool operator()(const T* camera, const T* point, T* residuals) const {
    T p[3];
    ceres::AngleAxisRotatePoint(camera, point, p);
    for (int k = 0; k < 3; ++k) p[k] += camera[3 + k];
    const T u = -p[0] / p[2], v = -p[1] / p[2];
    const T r2 = u * u + v * v, scale = camera[6] * (1.0 + camera[7] * r2 + camera[8] * r2 * r2);
    residuals[0] = scale * u - x;
    residuals[1] = scale * v - y;
    return true;
  }
  double x, y;
};

struct Bal {
  int cameras = 0, points = 0, observations = 0;
  std::vector<int> camera_index, point_index;
  std::vector<double> xy, parameters;
};

bool read(const char* path, Bal* bal) {
  std::FILE* f = std::fopen(path, "r");
  if (!f) return false;
  bool ok = std::fscanf(f, "%d %d %d", &bal->cameras, &bal->points, &bal->observations) == 3 && bal->cameras > 0 &&
            bal->points > 0 && bal->observations > 0 && bal->observations < (1 << 28);
  for (int k = 0; ok && k < bal->observations; ++k) {
    int c, p;
    double x, y;
    ok = std::fscanf(f, "%d %d %lf %lf", &c, &p, &x, &y) == 4 && c >= 0 && c < bal->cameras && p >= 0 &&
         p < bal->points;
    bal->camera_index.push_back(c);
    bal->point_index.push_back(p);
    bal->xy.push_back(x);
    bal->xy.push_back(y);
  }
  const long values = 9L * bal->cameras + 3L * bal->points;
  for (long k = 0; ok && k < values; ++k) {
    double v;
    ok = std::fscanf(f, "%lf", &v) == 1;
    bal->parameters.push_back(v);
  }
  std::fclose(f);
  return ok;
}

void adjust(const Bal& input, int solve, ceres::LinearSolverType linear_solver, bool member,
            bool line_search = false) {
  Bal bal = input;
  ceres::Problem problem;
  for (int k = 0; k < bal.observations; ++k)
    problem.AddResidualBlock(
        new ceres::AutoDiffCostFunction<Snavely, 2, 9, 3>(new Snavely(bal.xy[2 * k], bal.xy[2 * k + 1])), nullptr,
        &bal.parameters[9 * bal.camera_index[k]], &bal.parameters[9 * bal.cameras + 3 * bal.point_index[k]]);
  ceres::Solver::Options options;
  options.linear_solver_type = linear_solver;
  options.preconditioner_type = ceres::SCHUR_JACOBI;
  options.max_num_iterations = 10;
  options.num_threads = 2;
  if (line_search) options.minimizer_type = ceres::LINE_SEARCH;
  ceres::Solver::Summary summary;
  if (member) {
    ceres::Solver solver;
    solver.Solve(options, &problem, &summary);
  } else {
    ceres::Solve(options, &problem, &summary);
  }
  std::printf("solve %d: initial %.17g final %.17g iterations %zu\n", solve, summary.initial_cost, summary.final_cost,
              summary.iterations.size());
}

}  // namespace

int main(int argc, char** argv) {
  Bal bal;
  if (argc != 2 || !read(argv[1], &bal)) {
    std::fprintf(stderr, "usage: preload_probe BAL_FILE (a readable, uncompressed BAL problem)\n");
    return 2;
  }
  adjust(bal, 1, ceres::ITERATIVE_SCHUR, false);
  adjust(bal, 2, ceres::DENSE_SCHUR, true);
  adjust(bal, 3, ceres::ITERATIVE_SCHUR, false, true);
  return 0;
}
