# Installs the build tree into a scratch prefix, moves the installed tree to another path (a package
# must not depend on where it was installed), configures and builds the consumer project against it,
# and runs the consumer programs. Any failing step fails the test.
file(REMOVE_RECURSE ${WORK_DIR})
function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "step failed (${status}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()
run_step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${WORK_DIR}/installed)
file(MAKE_DIRECTORY ${WORK_DIR}/elsewhere)
file(RENAME ${WORK_DIR}/installed ${WORK_DIR}/elsewhere/prefix)
run_step(${CMAKE_COMMAND} -S ${PROJECT_DIR} -B ${WORK_DIR}/build -DCMAKE_PREFIX_PATH=${WORK_DIR}/elsewhere/prefix
         -DCMAKE_BUILD_TYPE=Release)
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step(${WORK_DIR}/build/consumer)
run_step(${WORK_DIR}/build/ba_consumer)
run_step(${WORK_DIR}/build/ompl_consumer)
