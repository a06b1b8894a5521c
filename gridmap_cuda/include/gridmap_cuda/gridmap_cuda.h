#pragma once
// Everything of gridmap_cuda in one include.
#include "gridmap_cuda/carmen_log.h"
#include "gridmap_cuda/grid_mapper.h"
#include "gridmap_cuda/grid_spec.h"
#include "gridmap_cuda/hit_miss_model.h"
#include "gridmap_cuda/laser_scan.h"
#include "gridmap_cuda/map_io.h"
#include "gridmap_cuda/occupancy_grid.h"
#include "gridmap_cuda/occupancy_values.h"
#include "gridmap_cuda/sensor_model.h"
#include "gridmap_cuda/synthetic_log.h"
