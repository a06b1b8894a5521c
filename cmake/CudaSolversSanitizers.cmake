# Host-code sanitizers for the whole build: -DCUDA_SOLVERS_SANITIZE=address,undefined (scripts/sanitize.sh,
# docs/reliability.md "Sanitizers"). Every C++ translation unit is instrumented, and so is the host half
# of every .cu file: nvcc hands the flags to its host compiler (g++) through -Xcompiler. Device code is
# not instrumented; compute-sanitizer checks it on a GPU machine.
#
# Each sanitizer gets a flag of its own: nvcc splits an -Xcompiler argument at commas, so
# -Xcompiler=-fsanitize=address,undefined would reach g++ as -fsanitize=address and a stray "undefined".
set(CUDA_SOLVERS_SANITIZE "" CACHE STRING
    "Comma-separated sanitizers for host code (C++ and the host side of CUDA), e.g. address,undefined")
set(CUDA_SOLVERS_SANITIZE_COMPILE_OPTIONS "")
set(CUDA_SOLVERS_SANITIZE_LINK_OPTIONS "")
if(CUDA_SOLVERS_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "CUDA_SOLVERS_SANITIZE needs g++ or clang++, not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  string(REPLACE "," ";" _sanitizers "${CUDA_SOLVERS_SANITIZE}")
  set(_known address undefined leak thread)
  foreach(_sanitizer IN LISTS _sanitizers)
    if(NOT _sanitizer IN_LIST _known)
      message(FATAL_ERROR "CUDA_SOLVERS_SANITIZE: unknown sanitizer '${_sanitizer}' (known: ${_known})")
    endif()
  endforeach()
  if("thread" IN_LIST _sanitizers AND ("address" IN_LIST _sanitizers OR "leak" IN_LIST _sanitizers))
    message(FATAL_ERROR "CUDA_SOLVERS_SANITIZE: thread cannot be combined with address or leak")
  endif()

  set(_flags)
  foreach(_sanitizer IN LISTS _sanitizers)
    list(APPEND _flags -fsanitize=${_sanitizer})
    list(APPEND CUDA_SOLVERS_SANITIZE_COMPILE_OPTIONS $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${_sanitizer}>
                                                     $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fsanitize=${_sanitizer}>)
  endforeach()
  # Frame pointers give whole stacks from the sanitizers' fast unwinder; a UBSan report stops the
  # program (and fails its test) instead of scrolling past. g++ leaves float-cast-overflow out of
  # "undefined": a double out of an integer's range cast to it is the undefined behaviour a reader of
  # numbers from files is most likely to have, so it is asked for by name.
  set(_compile_flags ${_flags} -fno-omit-frame-pointer)
  if("undefined" IN_LIST _sanitizers)
    list(APPEND _compile_flags -fsanitize=float-cast-overflow
                               -fno-sanitize-recover=undefined -fno-sanitize-recover=float-cast-overflow)
  endif()
  foreach(_flag IN LISTS _compile_flags)
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:${_flag}> $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${_flag}>)
  endforeach()

  # HOST_LINK: CUDA targets may also have an nvcc device-link step, which must not see host flags.
  foreach(_flag IN LISTS _flags)
    list(APPEND CUDA_SOLVERS_SANITIZE_LINK_OPTIONS $<HOST_LINK:${_flag}>)
  endforeach()
  add_link_options(${CUDA_SOLVERS_SANITIZE_LINK_OPTIONS})
  message(STATUS "Sanitizers for host code (C++ and CUDA host side): ${CUDA_SOLVERS_SANITIZE}")
endif()
