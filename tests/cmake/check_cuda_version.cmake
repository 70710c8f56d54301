# cmake -DWORK_DIR=<dir> -P check_cuda_version.cmake
# replayrt_check_cuda_compiler (cmake/ReplayrtCudaVersion.cmake) over stand-in compilers that
# print what nvcc --version prints: a CUDA older than the minimum is unusable, with a reason
# naming both versions; the minimum and newer ones are usable, and so is a compiler that
# prints no release.
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/ReplayrtCudaVersion.cmake)

function(stand_in_compiler name printed out_path)
  set(path "${WORK_DIR}/${name}")
  file(WRITE "${path}" "#!/bin/sh\necho '${printed}'\n")
  file(CHMOD "${path}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE)
  set(${out_path} "${path}" PARENT_SCOPE)
endfunction()

function(expect name printed expected_usable)
  stand_in_compiler("${name}" "${printed}" compiler)
  replayrt_check_cuda_compiler("${compiler}" usable reason)
  if(NOT usable STREQUAL expected_usable)
    message(FATAL_ERROR "${name} ('${printed}'): usable is '${usable}', not '${expected_usable}'")
  endif()
  if(NOT usable AND NOT (reason MATCHES "is CUDA 12\\.8;" AND
                         reason MATCHES "needs CUDA ${REPLAYRT_MIN_CUDA_VERSION} or newer"))
    message(FATAL_ERROR "${name}: the reason names neither version: '${reason}'")
  endif()
endfunction()

file(MAKE_DIRECTORY "${WORK_DIR}")
expect(nvcc_12_8 "Cuda compilation tools, release 12.8, V12.8.93" FALSE)
expect(nvcc_13_0 "Cuda compilation tools, release 13.0, V13.0.88" TRUE)
expect(nvcc_13_2 "Cuda compilation tools, release 13.2, V13.2.10" TRUE)
expect(nvcc_silent "no version here" TRUE)
message(STATUS "the CUDA compiler check accepts CUDA ${REPLAYRT_MIN_CUDA_VERSION} and newer only")
