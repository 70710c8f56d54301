# Checks that the C ABI layer calls the engine's own API and never reaches past it into the
# device or the device context: no source file under SOURCE_DIR calls `device()` or
# `context()` on an engine.
#
#   cmake -DSOURCE_DIR=<src/capi> -P check_capi_reaches_only_the_engine.cmake
#
# The folder must hold the C ABI's entry points (rrt_context_create), so that a wrong path
# fails the check instead of passing it with nothing to read.
cmake_minimum_required(VERSION 3.25)

if(NOT DEFINED SOURCE_DIR OR "${SOURCE_DIR}" STREQUAL "")
  message(FATAL_ERROR "check_capi_reaches_only_the_engine: -DSOURCE_DIR=... is required")
endif()

file(GLOB sources "${SOURCE_DIR}/*.cpp" "${SOURCE_DIR}/*.h")
set(found_entry_point FALSE)
set(problems "")
foreach(source IN LISTS sources)
  file(STRINGS "${source}" lines)
  if(lines MATCHES "rrt_context_create")
    set(found_entry_point TRUE)
  endif()
  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    if(line MATCHES "engine(->|\\.)(device|context)\\(\\)")
      get_filename_component(name "${source}" NAME)
      list(APPEND problems "${name}:${number}")
    endif()
  endforeach()
endforeach()
if(NOT found_entry_point)
  message(FATAL_ERROR "check_capi_reaches_only_the_engine: ${SOURCE_DIR} holds no C ABI entry")
endif()
if(problems)
  list(JOIN problems ", " report)
  message(FATAL_ERROR "check_capi_reaches_only_the_engine: the C ABI reaches past the engine "
                      "at ${report}")
endif()
message(STATUS "check_capi_reaches_only_the_engine: ${SOURCE_DIR} calls only the engine")
