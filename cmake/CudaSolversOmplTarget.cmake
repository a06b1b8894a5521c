# OMPL 1.5's package configuration sets variables (OMPL_INCLUDE_DIRS, OMPL_LIBRARIES) but makes no
# imported target; later OMPL versions make ompl::ompl. This makes that target from the variables
# where it is missing, so that the exported ompl_cuda names a target, resolved on each machine by
# find_package(ompl), instead of the paths found on the machine that built it. Included after
# find_package(ompl) by the build and by CudaSolversConfig.cmake.
if(NOT TARGET ompl::ompl)
  add_library(ompl::ompl INTERFACE IMPORTED)
  set_target_properties(ompl::ompl PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${OMPL_INCLUDE_DIRS}"
    INTERFACE_LINK_LIBRARIES "${OMPL_LIBRARIES}")
endif()
