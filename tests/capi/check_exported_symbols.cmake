# Checks that the shared library exports exactly the C ABI: every function the public header
# declares with RRT_API, and nothing else.
#
#   cmake -DLIBRARY=<libreplayrt.so> -DHEADER=<replayrt.h> -DNM=<nm> -P check_exported_symbols.cmake
#
# The exports are the defined symbols of the dynamic symbol table (nm -D --defined-only, POSIX
# output: "name type value size"). Undefined references, including the toolchain's weak ones
# (__gmon_start__, _ITM_*, __cxa_finalize), are not exports and are not listed.
#
# Ignored, because the linker defines them in every shared object and no code of ours can
# collide with them: the section markers _init, _fini, _edata, _end and __bss_start, and
# absolute symbols (type A), which name symbol-version nodes.
#
# Weak (W, V) and unique (u) definitions are NOT ignored: in a C++ library they are inline
# functions, template instantiations, typeinfo and function-local statics with default
# visibility, which is exactly how C++ internals leak into the dynamic symbol table and
# interpose with the application's own copies.
cmake_minimum_required(VERSION 3.25)

foreach(required LIBRARY HEADER NM)
  if(NOT DEFINED ${required} OR "${${required}}" STREQUAL "")
    message(FATAL_ERROR "check_exported_symbols: -D${required}=... is required")
  endif()
endforeach()

set(toolchain_symbols _init _fini _edata _end __bss_start)

# The header's C ABI: lines that start a declaration with RRT_API. Each must name one rrt_
# function on that line; a declaration this parse cannot read fails the check rather than
# being skipped.
file(STRINGS "${HEADER}" declarations REGEX "^[ \t]*RRT_API[ \t]")
set(declared "")
foreach(line IN LISTS declarations)
  if(NOT line MATCHES "[^A-Za-z0-9_](rrt_[A-Za-z0-9_]+)[ \t]*\\(")
    message(FATAL_ERROR "check_exported_symbols: cannot read the function name in: ${line}")
  endif()
  list(APPEND declared "${CMAKE_MATCH_1}")
endforeach()
list(LENGTH declared declared_count)
if(declared_count EQUAL 0)
  message(FATAL_ERROR "check_exported_symbols: no RRT_API declarations in ${HEADER}")
endif()

execute_process(
  COMMAND "${NM}" -D --defined-only --format=posix "${LIBRARY}"
  OUTPUT_VARIABLE nm_output
  ERROR_VARIABLE nm_error
  RESULT_VARIABLE nm_result)
if(NOT nm_result EQUAL 0)
  message(FATAL_ERROR "check_exported_symbols: ${NM} failed (${nm_result}): ${nm_error}")
endif()

string(REPLACE "\n" ";" nm_lines "${nm_output}")
set(exported_functions "")
set(problems "")
foreach(line IN LISTS nm_lines)
  if(line STREQUAL "")
    continue()
  endif()
  if(NOT line MATCHES "^([^ ]+) ([A-Za-z]) ")
    message(FATAL_ERROR "check_exported_symbols: unexpected nm line: ${line}")
  endif()
  set(type "${CMAKE_MATCH_2}")
  # Versioned names read "name@VERSION" or "name@@VERSION".
  string(REGEX REPLACE "@.*$" "" name "${CMAKE_MATCH_1}")
  if(name IN_LIST toolchain_symbols OR type STREQUAL "A")
    continue()
  endif()
  if(NOT name MATCHES "^rrt_")
    list(APPEND problems "exported without the rrt_ prefix: ${name} (type ${type})")
  elseif(NOT name IN_LIST declared)
    list(APPEND problems "exported but not declared with RRT_API in the header: ${name}")
  elseif(NOT type STREQUAL "T")
    list(APPEND problems "exported as type ${type}, not as a function (T): ${name}")
  else()
    list(APPEND exported_functions "${name}")
  endif()
endforeach()

foreach(name IN LISTS declared)
  if(NOT name IN_LIST exported_functions)
    list(APPEND problems "declared with RRT_API in the header but not exported: ${name}")
  endif()
endforeach()

if(problems)
  list(LENGTH problems problem_count)
  list(JOIN problems "\n  " report)
  message(FATAL_ERROR "check_exported_symbols: ${problem_count} problems in ${LIBRARY}:\n"
                      "  ${report}")
endif()
message(STATUS "check_exported_symbols: ${declared_count} C ABI functions, nothing else")
