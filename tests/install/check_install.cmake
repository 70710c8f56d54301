# Script mode: install BUILD_DIR into WORK_DIR/prefix, then check the installed tree as a user
# sees it:
# - <LIBDIR>/libreplayrt.so's SONAME is libreplayrt.so.<ABI_VERSION_MAJOR>, a file of that
#   name is installed, and the consumers below need that name;
# - the consumer project, configured with find_package(replayrt), builds and runs a C consumer
#   and C++17 and C++20 consumers of the C++ API;
# - the same sources, compiled directly with the flags `pkg-config --cflags --libs replayrt`
#   gives for the prefix, build and run;
# - with PYTHON_EXECUTABLE set (the Python package is built), PYTHON_CHECK imports the package
#   from <prefix>/PYTHON_INSTALL_DIR and runs a callable with it.
cmake_policy(VERSION 3.25)
foreach(tool READELF PKG_CONFIG)
  if(NOT ${tool})
    message(FATAL_ERROR "no ${tool}: tests/install passes CMAKE_READELF and pkg-config")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
set(libdir ${prefix}/${LIBDIR})

function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "step failed: ${ARGN}\n${out}\n${err}")
  endif()
endfunction()

# The dynamic section's entries of kind `tag` (SONAME, NEEDED) in `file`, into `out`.
function(dynamic_entries file tag out)
  execute_process(COMMAND ${READELF} -d ${file} RESULT_VARIABLE result
    OUTPUT_VARIABLE dynamic ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${READELF} -d ${file} failed:\n${err}")
  endif()
  string(REGEX MATCHALL "\\(${tag}\\)[^\n]*\\[[^]\n]*\\]" entries "${dynamic}")
  list(TRANSFORM entries REPLACE "^.*\\[(.*)\\]$" "\\1")
  set(${out} "${entries}" PARENT_SCOPE)
endfunction()

# The consumer needs libreplayrt by its SONAME.
function(check_needs_soname binary)
  dynamic_entries(${binary} NEEDED needed)
  if(NOT soname IN_LIST needed)
    message(FATAL_ERROR "${binary} does not need ${soname} (NEEDED: ${needed})")
  endif()
endfunction()

run_step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# ---- SONAME ----------------------------------------------------------------------------------
set(soname libreplayrt.so.${ABI_VERSION_MAJOR})
dynamic_entries(${libdir}/libreplayrt.so SONAME installed_soname)
if(NOT installed_soname STREQUAL soname)
  message(FATAL_ERROR "${libdir}/libreplayrt.so has SONAME '${installed_soname}', expected "
                      "'${soname}' (the ABI major version of replayrt.h)")
endif()
if(NOT EXISTS ${libdir}/${soname})
  message(FATAL_ERROR "${libdir}/${soname}, the name the loader looks for, is not installed")
endif()

# ---- find_package ----------------------------------------------------------------------------
run_step(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${WORK_DIR}/build
  -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER}
  -DCMAKE_CXX_COMPILER=${CXX_COMPILER})
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
foreach(consumer consumer consumer_cpp17 consumer_cpp20)
  check_needs_soname(${WORK_DIR}/build/${consumer})
  run_step(${WORK_DIR}/build/${consumer})
endforeach()

# ---- pkg-config ------------------------------------------------------------------------------
# Only the scratch prefix's replayrt.pc: PKG_CONFIG_LIBDIR replaces the default search path.
set(pkg_config ${CMAKE_COMMAND} -E env PKG_CONFIG_LIBDIR=${libdir}/pkgconfig
  --unset=PKG_CONFIG_PATH ${PKG_CONFIG})
execute_process(COMMAND ${pkg_config} --cflags --libs replayrt
  RESULT_VARIABLE result OUTPUT_VARIABLE pc_flags ERROR_VARIABLE err
  OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "pkg-config --cflags --libs replayrt failed:\n${err}")
endif()
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
set(pc_build ${WORK_DIR}/pkg-config)
file(MAKE_DIRECTORY ${pc_build})
run_step(${C_COMPILER} -std=c11 -Wall -Wextra -Wpedantic -Werror ${CONSUMER_SOURCE}/main.c
  ${pc_flags} -o ${pc_build}/consumer)
foreach(standard 17 20)
  run_step(${CXX_COMPILER} -std=c++${standard} -Wall -Wextra -Wpedantic -Werror
    ${CONSUMER_SOURCE}/main.cpp ${pc_flags} -o ${pc_build}/consumer_cpp${standard})
endforeach()
# pkg-config gives no run-time search path: the loader takes the prefix from LD_LIBRARY_PATH.
foreach(consumer consumer consumer_cpp17 consumer_cpp20)
  check_needs_soname(${pc_build}/${consumer})
  run_step(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${libdir} ${pc_build}/${consumer})
endforeach()

# ---- Python ----------------------------------------------------------------------------------
# No LD_LIBRARY_PATH: the installed extension finds libreplayrt through its own RPATH.
if(PYTHON_EXECUTABLE)
  run_step(${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH
    PYTHONPATH=${prefix}/${PYTHON_INSTALL_DIR}
    ${PYTHON_EXECUTABLE} ${PYTHON_CHECK} ${prefix})
endif()
