#pragma once
// A planar laser scan with the pose it was taken from: what a CARMEN log line (FLASER, ROBOTLASER1)
// or a ROS sensor_msgs/LaserScan plus a TF lookup gives.
#include <vector>

namespace gridmap_cuda {

struct Pose2D {
  double x = 0.0;      // m
  double y = 0.0;      // m
  double theta = 0.0;  // rad
};

struct LaserScan {
  Pose2D laser_pose;              // pose of the laser (not the robot) in the map frame
  double start_angle = 0.0;       // angle of beam 0 relative to laser_pose.theta (rad)
  double angular_resolution = 0.0;  // angle between consecutive beams (rad)
  double max_range = 80.0;        // the sensor's "no return" reading, informative only (m)
  std::vector<float> ranges;      // one reading per beam (m)
  double timestamp = 0.0;         // s (the log's ipc timestamp)
};

}  // namespace gridmap_cuda
