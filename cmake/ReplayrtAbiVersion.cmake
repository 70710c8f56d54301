# The C ABI's version as the public header states it (RRT_ABI_VERSION_MAJOR and
# RRT_ABI_VERSION_MINOR in include/replayrt/replayrt.h): sets REPLAYRT_ABI_VERSION_MAJOR and
# REPLAYRT_ABI_VERSION_MINOR. The shared library's SONAME carries the major version. A change
# to the header re-runs the configure step, so the two never drift apart.
set(replayrt_abi_header ${PROJECT_SOURCE_DIR}/include/replayrt/replayrt.h)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${replayrt_abi_header})
file(STRINGS ${replayrt_abi_header} replayrt_abi_lines
  REGEX "^#define RRT_ABI_VERSION_(MAJOR|MINOR) ")
foreach(part MAJOR MINOR)
  set(replayrt_abi_matches ${replayrt_abi_lines})
  list(FILTER replayrt_abi_matches INCLUDE REGEX "^#define RRT_ABI_VERSION_${part} +[0-9]+ *$")
  list(LENGTH replayrt_abi_matches replayrt_abi_count)
  if(NOT replayrt_abi_count EQUAL 1)
    message(FATAL_ERROR "${replayrt_abi_header} must define RRT_ABI_VERSION_${part} once, as "
                        "a plain number (found ${replayrt_abi_count} such lines)")
  endif()
  string(REGEX REPLACE "^#define RRT_ABI_VERSION_${part} +([0-9]+) *$" "\\1"
    REPLAYRT_ABI_VERSION_${part} "${replayrt_abi_matches}")
endforeach()
