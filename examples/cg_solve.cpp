// cg_solve: solve A x = b with conjugate gradients on the GPU or the CPU reference.
//
//   cg_solve --poisson3d 64 --precond jacobi
//   cg_solve --matrix ../shared/data/matrices/nos6.mtx --backend cpu --tol 1e-12
//
// b is all ones unless --rhs FILE (one value per line, or a Matrix Market array/vector) is given.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <exception>
#include <iostream>
#include <string>

#include "command_line.h"
#include "linalg_cuda/linalg_cuda.h"

namespace {

const char* kUsage = R"(usage: cg_solve (--matrix FILE.mtx | --poisson2d N | --poisson3d N) [options]

Solves A x = b by (preconditioned) conjugate gradients and prints iterations, residuals and time.

  --matrix FILE      symmetric positive definite matrix in Matrix Market coordinate format
  --poisson2d N      5-point Laplacian on an N x N grid (N^2 unknowns)
  --poisson3d N      7-point Laplacian on an N^3 grid (N^3 unknowns)
  --precond P        none | jacobi | block-jacobi           (default none)
  --block-size B     block size of block-jacobi, 1..16      (default 3)
  --backend B        cuda | cpu | auto                      (default auto)
  --tol T            relative tolerance |r| <= T |b|        (default 1e-10)
  --max-iter K       iteration limit                        (default 10000)
  --rhs FILE         right-hand side, one number per line  (default all ones)
  --solution FILE    write x, one number per line
  --help             this text
Exit status: 0 converged, 1 did not converge, 2 bad usage or input.
)";

Eigen::VectorXd read_vector(const std::string& path, Eigen::Index n) {
  std::ifstream in(path);
  if (!in) throw linalg_cuda::ParseError(path, 0, "cannot open the file");
  Eigen::VectorXd v(n);
  std::string line;
  Eigen::Index count = 0;
  long line_number = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty() || line[0] == '%' || line[0] == '#') continue;
    char* end = nullptr;
    const double value = std::strtod(line.c_str(), &end);
    if (end == line.c_str()) throw linalg_cuda::ParseError(path, line_number, "expected a number");
    if (count == n) throw linalg_cuda::ParseError(path, line_number, "more than " + std::to_string(n) + " values");
    v[count++] = value;
  }
  if (count != n)
    throw linalg_cuda::ParseError(path, line_number, "expected " + std::to_string(n) + " values, found " + std::to_string(count));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  const examples::CommandLine cli("cg_solve", kUsage,
                                  {"--matrix", "--poisson2d", "--poisson3d", "--precond", "--block-size", "--backend",
                                   "--tol", "--max-iter", "--rhs", "--solution"});
  std::string matrix_path, rhs_path, solution_path;
  int poisson2d = 0, poisson3d = 0;
  linalg_cuda::CgOptions options;
  options.block_size = 3;
  try {
    for (const auto& [flag, value] : cli.parse(argc, argv)) {
      if (flag == "--matrix") matrix_path = value;
      else if (flag == "--poisson2d") poisson2d = cli.integer(flag, value, 1, 1 << 15);
      else if (flag == "--poisson3d") poisson3d = cli.integer(flag, value, 1, 1 << 10);
      else if (flag == "--precond") options.preconditioner = linalg_cuda::parse_preconditioner(value);
      else if (flag == "--block-size") options.block_size = cli.integer(flag, value, 1, 16);
      else if (flag == "--backend") options.backend = linalg_cuda::parse_backend(value);
      else if (flag == "--tol") options.stop.relative_tolerance = cli.number(flag, value, 0.0, 1.0);
      else if (flag == "--max-iter") options.stop.max_iterations = cli.integer(flag, value, 0, 1 << 30);
      else if (flag == "--rhs") rhs_path = value;
      else solution_path = value;
    }
  } catch (const linalg_cuda::InvalidArgument& e) {
    cli.fail(e.what());
  }
  if ((matrix_path.empty() ? 0 : 1) + (poisson2d ? 1 : 0) + (poisson3d ? 1 : 0) != 1)
    cli.fail("give exactly one of --matrix, --poisson2d, --poisson3d");

  try {
    const auto t0 = std::chrono::steady_clock::now();
    std::string name;
    linalg_cuda::CsrMatrix a;
    if (!matrix_path.empty()) {
      a = linalg_cuda::read_matrix_market(matrix_path);
      name = matrix_path;
    } else if (poisson2d) {
      a = linalg_cuda::poisson2d(poisson2d);
      name = "poisson2d(" + std::to_string(poisson2d) + ")";
    } else {
      a = linalg_cuda::poisson3d(poisson3d);
      name = "poisson3d(" + std::to_string(poisson3d) + ")";
    }
    if (a.rows() != a.cols()) throw linalg_cuda::InvalidArgument(name + " is not square");
    const Eigen::VectorXd b = rhs_path.empty() ? Eigen::VectorXd::Ones(a.rows()) : read_vector(rhs_path, a.rows());
    const double setup = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    Eigen::VectorXd x = Eigen::VectorXd::Zero(a.rows());
    const auto summary = linalg_cuda::solve(a, b, x, options);
    const double true_residual = (b - a * x).norm() / std::max(b.norm(), 1e-300);

    std::printf("%-18s %s\n", "system", name.c_str());
    std::printf("%-18s %lld rows, %lld nonzeros\n", "size", static_cast<long long>(a.rows()),
                static_cast<long long>(a.nonZeros()));
    std::printf("%-18s %s (block size %d), tol %.1e\n", "preconditioner", to_string(options.preconditioner),
                options.block_size, options.stop.relative_tolerance);
    std::printf("%-18s %s\n", "backend", to_string(summary.backend));
    std::printf("%-18s %s\n", "result", summary.message.c_str());
    std::printf("%-18s %d\n", "iterations", summary.iterations);
    std::printf("%-18s %.3e -> %.3e (|b| %.3e)\n", "residual |r|", summary.initial_residual_norm,
                summary.final_residual_norm, summary.rhs_norm);
    std::printf("%-18s %.3e\n", "true |b-Ax|/|b|", true_residual);
    std::printf("%-18s %.3f ms (%.2f us/iteration); input %.1f ms\n", "solve time", summary.seconds * 1e3,
                summary.iterations ? summary.seconds * 1e6 / summary.iterations : 0.0, setup * 1e3);
    if (!solution_path.empty()) {
      std::ofstream out(solution_path);
      out.precision(17);
      for (Eigen::Index i = 0; i < x.size(); ++i) out << x[i] << "\n";
      if (!out) throw linalg_cuda::Error("cannot write " + solution_path);
    }
    return summary.converged ? 0 : 1;
  } catch (const linalg_cuda::ParseError& e) {
    std::cerr << "cg_solve: " << e.what() << "\n";
    return 2;
  } catch (const linalg_cuda::InvalidArgument& e) {
    std::cerr << "cg_solve: " << e.what() << "\n";
    return 2;
  } catch (const linalg_cuda::Error& e) {
    std::cerr << "cg_solve: " << e.what() << "\n";
    return 3;
  } catch (const std::exception& e) {  // anything the library's contract misses: one line, never an abort
    std::cerr << "cg_solve: " << e.what() << "\n";
    return 2;
  }
}
