# Checks that the runtime's core speaks its own types: no source file under SOURCE_DIR outside
# its capi/ folder includes the C ABI's replayrt/replayrt.h (its descriptors and calls). The
# core includes only replayrt/values.h (the pinned values) and replayrt/kernel_abi.h (what
# kernels receive).
#
#   cmake -DSOURCE_DIR=<src> -P check_core_speaks_no_c_abi.cmake
#
# The folder must hold capi/ and a core that includes the values header, so that a wrong path
# fails the check instead of passing it with nothing to read.
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED SOURCE_DIR OR "${SOURCE_DIR}" STREQUAL "")
  message(FATAL_ERROR "check_core_speaks_no_c_abi: -DSOURCE_DIR=... is required")
endif()
if(NOT IS_DIRECTORY "${SOURCE_DIR}/capi")
  message(FATAL_ERROR "check_core_speaks_no_c_abi: ${SOURCE_DIR} holds no capi/ folder")
endif()

file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*.h" "${SOURCE_DIR}/*.cpp"
     "${SOURCE_DIR}/*.cu" "${SOURCE_DIR}/*.cuh")
set(includes_values FALSE)
set(problems "")
foreach(source IN LISTS sources)
  if(source MATCHES "^capi/")
    continue()
  endif()
  file(STRINGS "${SOURCE_DIR}/${source}" lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS lines)
    if(line MATCHES "replayrt/values\\.h")
      set(includes_values TRUE)
    endif()
    if(line MATCHES "[<\"/]replayrt\\.h[>\"]")
      list(APPEND problems "${source}")
    endif()
  endforeach()
endforeach()
if(NOT includes_values)
  message(FATAL_ERROR "check_core_speaks_no_c_abi: no core file under ${SOURCE_DIR} includes "
                      "replayrt/values.h")
endif()
if(problems)
  list(JOIN problems ", " report)
  message(FATAL_ERROR "check_core_speaks_no_c_abi: the core includes replayrt/replayrt.h in "
                      "${report}")
endif()
message(STATUS "check_core_speaks_no_c_abi: the core includes only the values and kernel ABI")
