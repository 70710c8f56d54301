# Installs the shared library, the public headers, a CMake package (a consumer calls
# find_package(replayrt) and links replayrt::replayrt) and a pkg-config file (replayrt.pc) for
# consumers built without CMake. python/CMakeLists.txt installs the Python package.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS replayrt EXPORT replayrtTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/replayrt
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT replayrtTargets
  NAMESPACE replayrt::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/replayrt)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/replayrtConfig.cmake.in
  ${PROJECT_BINARY_DIR}/replayrtConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/replayrt)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/replayrtConfigVersion.cmake
  COMPATIBILITY SameMajorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/replayrtConfig.cmake
  ${PROJECT_BINARY_DIR}/replayrtConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/replayrt)

# replayrt.pc finds the prefix relative to its own directory (pkg-config's ${pcfiledir}) when
# the install directories are relative, so it stays right for any `cmake --install --prefix`.
set(replayrt_pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(replayrt_pc_prefix "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH replayrt_pc_up "/${replayrt_pc_dir}" "/")
  string(REGEX REPLACE "/$" "" replayrt_pc_up "${replayrt_pc_up}")
  set(replayrt_pc_prefix "\${pcfiledir}/${replayrt_pc_up}")
endif()
foreach(dir LIBDIR INCLUDEDIR)
  string(TOLOWER ${dir} name)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(replayrt_pc_${name} "${CMAKE_INSTALL_${dir}}")
  else()
    set(replayrt_pc_${name} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/replayrt.pc.in ${PROJECT_BINARY_DIR}/replayrt.pc
  @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/replayrt.pc DESTINATION ${replayrt_pc_dir})
