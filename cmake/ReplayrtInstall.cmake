# Installs the shared library, the public header and a CMake package so that a consumer can
# find_package(replayrt) and link replayrt::replayrt.
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
