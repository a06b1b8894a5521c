// bal_to_colmap: a BAL file as a COLMAP sparse model, for COLMAP's own tools (bundle_adjuster,
// model_analyzer, model_converter, the GUI) and for colmap_ba.
//
//   bal_to_colmap --input ../shared/data/bal/problem-49-7776-pre.txt --output_path ladybug
//   colmap model_analyzer --path ladybug
#include <exception>
#include <iostream>
#include <string>

#include "ceres_cuda/bal_problem.h"
#include "ceres_cuda/colmap_model.h"
#include "colmap_output.h"
#include "command_line.h"
#include "linalg_cuda/errors.h"

namespace {

const char* kUsage = R"(usage: bal_to_colmap (--input FILE | --synthetic CxPxO) --output_path DIR
                     [--output_type BIN|TXT]

Writes the COLMAP sparse model of a BAL problem (.txt or .txt.bz2): BAL camera i as camera and image
i + 1 (model RADIAL: f, cx, cy, k1, k2, one image size holding every observation), point j as 3-D point
j + 1, the poses and observations turned into COLMAP's conventions (camera looking down +z, y down,
pixels from the image's corner), so that COLMAP's reprojection errors are BAL's.

  --input FILE          the BAL problem
  --synthetic CxPxO     instead, a synthetic problem of C cameras, P points and O observations
                        (ceres_cuda::make_synthetic_bal), e.g. 1778x993923x5001946 for Venice's counts
  --output_path DIR     the model's folder (made if missing)
  --output_type T       BIN (cameras.bin, images.bin, points3D.bin) or TXT      (default BIN)
  --help                this text
Exit status: 0 written, 2 bad usage or input.
)";

}  // namespace

int main(int argc, char** argv) {
  const examples::CommandLine cli("bal_to_colmap", kUsage,
                                  {"--input", "--synthetic", "--output_path", "--output_type"});
  auto args = cli.parse(argc, argv);
  if (args.count("--input") == args.count("--synthetic") || !args.count("--output_path"))
    cli.fail("give --input or --synthetic, and --output_path");
  const std::string type = args.count("--output_type") ? args["--output_type"] : "BIN";
  if (type != "BIN" && type != "TXT") cli.fail("--output_type expects BIN or TXT, got '" + type + "'");
  try {
    ceres_cuda::BALProblem bal;
    if (args.count("--input")) {
      bal = ceres_cuda::BALProblem::read(args["--input"]);
    } else {
      const std::vector<std::string> counts = examples::split(args["--synthetic"], 'x');
      if (counts.size() != 3) cli.fail("--synthetic expects CAMERASxPOINTSxOBSERVATIONS, e.g. 49x7776x31843");
      ceres_cuda::SyntheticBalOptions o;
      o.num_cameras = cli.integer("--synthetic", counts[0], 4, 1 << 24);
      o.num_points = cli.integer("--synthetic", counts[1], 1, 1 << 30);
      o.num_observations = cli.integer("--synthetic", counts[2], 2, (1u << 31) - 1);
      bal = ceres_cuda::make_synthetic_bal(o);
    }
    const ceres_cuda::ColmapModel model = ceres_cuda::colmap_model_from_bal(bal);
    const std::string& out = args["--output_path"];
    examples::write_colmap_model(model, out, type);
    std::cout << "wrote " << out << ": " << model.cameras.size() << " cameras, " << model.images.size() << " images, "
              << model.points3D.size() << " points, " << model.num_observations() << " observations\n";
    return 0;
  } catch (const std::exception& e) {  // the library's typed errors, and anything its contract misses
    std::cerr << "bal_to_colmap: " << e.what() << "\n";
    return 2;
  }
}
