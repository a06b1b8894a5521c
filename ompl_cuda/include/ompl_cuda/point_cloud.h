#pragma once
// Point clouds for the robot checks (Scene::set_point_cloud): read from the files sensors and PCL
// write, or sampled from a scene's primitives (a stand-in for a depth camera's view in tests and
// benchmarks). Points are x y z triples in metres, in the file's frame.
//
//   scene.set_point_cloud(ompl_cuda::read_point_cloud("kitchen.pcd"), 0.01);
//
// PLY (ascii, binary_little_endian, binary_big_endian): the x, y and z properties of the vertex
// element, of any scalar type; other properties and elements are skipped. PCD (v0.7, as PCL writes it;
// DATA ascii or binary): the x, y and z fields; binary_compressed is refused with the command that
// converts it. A header that declares more points than the file holds is refused before memory is
// taken. Errors are linalg_cuda::ParseError naming the file and the line (0 for the binary body).
#include <cstddef>
#include <string>
#include <vector>

#include "ompl_cuda/scene.h"

namespace ompl_cuda {

struct PointCloudReadOptions {
  // Points with a coordinate that is not finite (the invalid pixels of an organised cloud) are an
  // error, or dropped as PCL's removeNaNFromPointCloud drops them.
  bool drop_non_finite = false;
};

// The file's points, by its extension (.ply or .pcd, any case).
std::vector<float> read_point_cloud(const std::string& file, const PointCloudReadOptions& options = {});

// Writes a binary little-endian PLY of the points (float x y z), which MeshLab, CloudCompare and
// Open3D open.
void write_ply(const std::string& file, const std::vector<float>& xyz);

// count points spread uniformly over the surfaces of the scene's primitives (by area), seeded.
std::vector<float> sample_scene_surfaces(const Scene& scene, std::size_t count, unsigned seed = 1);

}  // namespace ompl_cuda
