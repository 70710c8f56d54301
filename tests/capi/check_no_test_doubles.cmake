# Checks that the shared library carries no test double: none of the names in FORBIDDEN
# appears in its symbol table (nm -C, local symbols included), so test-only code such as the
# fault-injecting device is built into the testing library and never ships.
#
#   cmake -DLIBRARY=<libreplayrt.so> -DNM=<nm> -DFORBIDDEN=<name;...> -P check_no_test_doubles.cmake
#
# The symbol table must name the C ABI (rrt_context_create), so that a stripped library fails
# the check instead of passing it with nothing to read.
cmake_minimum_required(VERSION 3.25)

foreach(required LIBRARY NM FORBIDDEN)
  if(NOT DEFINED ${required} OR "${${required}}" STREQUAL "")
    message(FATAL_ERROR "check_no_test_doubles: -D${required}=... is required")
  endif()
endforeach()

execute_process(
  COMMAND "${NM}" -C "${LIBRARY}"
  OUTPUT_VARIABLE nm_output
  ERROR_VARIABLE nm_error
  RESULT_VARIABLE nm_result)
if(NOT nm_result EQUAL 0)
  message(FATAL_ERROR "check_no_test_doubles: ${NM} failed (${nm_result}): ${nm_error}")
endif()
if(NOT nm_output MATCHES "rrt_context_create")
  message(FATAL_ERROR "check_no_test_doubles: ${LIBRARY} has no readable symbol table")
endif()

set(problems "")
foreach(name IN LISTS FORBIDDEN)
  string(FIND "${nm_output}" "${name}" position)
  if(NOT position EQUAL -1)
    list(APPEND problems "${name}")
  endif()
endforeach()
if(problems)
  list(JOIN problems ", " report)
  message(FATAL_ERROR "check_no_test_doubles: ${LIBRARY} contains test code: ${report}")
endif()
message(STATUS "check_no_test_doubles: none of ${FORBIDDEN} in ${LIBRARY}")
