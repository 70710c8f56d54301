# REPLAYRT_ENABLE_CUDA: AUTO builds the CUDA backend when CMake finds a CUDA compiler of CUDA
# REPLAYRT_MIN_CUDA_VERSION or newer (ReplayrtCudaVersion.cmake), ON requires one, OFF never
# builds it. Sets REPLAYRT_HAVE_CUDA.
#
# The backend links the static CUDA runtime only (never libcuda), so every binary starts on a
# machine without a driver; the runtime reports the missing driver when it is first called.
string(TOUPPER "${REPLAYRT_ENABLE_CUDA}" replayrt_cuda_choice)
if(replayrt_cuda_choice STREQUAL "TRUE" OR replayrt_cuda_choice STREQUAL "YES")
  set(replayrt_cuda_choice ON)
elseif(replayrt_cuda_choice STREQUAL "FALSE" OR replayrt_cuda_choice STREQUAL "NO"
       OR replayrt_cuda_choice STREQUAL "0")
  set(replayrt_cuda_choice OFF)
endif()
if(NOT replayrt_cuda_choice MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "REPLAYRT_ENABLE_CUDA is '${REPLAYRT_ENABLE_CUDA}'; use AUTO, ON or OFF")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/ReplayrtCudaVersion.cmake)

set(REPLAYRT_HAVE_CUDA OFF)
if(NOT replayrt_cuda_choice STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  set(replayrt_cuda_usable FALSE)
  if(CMAKE_CUDA_COMPILER)
    replayrt_check_cuda_compiler("${CMAKE_CUDA_COMPILER}" replayrt_cuda_usable
      replayrt_cuda_unusable_reason)
  endif()
  if(CMAKE_CUDA_COMPILER AND NOT replayrt_cuda_usable)
    if(replayrt_cuda_choice STREQUAL "ON")
      message(FATAL_ERROR "REPLAYRT_ENABLE_CUDA=ON, but ${replayrt_cuda_unusable_reason}")
    endif()
    message(STATUS "replayrt: ${replayrt_cuda_unusable_reason}; the CUDA backend is not built")
  elseif(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # H100/H200. "native" stops configuration on a machine without a GPU.
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    # The attention built-in uses thread-block clusters: compute capability 9.0 or newer.
    foreach(arch IN LISTS CMAKE_CUDA_ARCHITECTURES)
      string(REGEX MATCH "^[0-9]+" arch_number "${arch}")
      if(arch_number STREQUAL "" OR arch_number LESS 90)
        message(FATAL_ERROR "replayrt's CUDA backend needs compute capability 9.0 or newer (its "
                            "attention kernel uses thread-block clusters); "
                            "CMAKE_CUDA_ARCHITECTURES is '${CMAKE_CUDA_ARCHITECTURES}'")
      endif()
    endforeach()
    enable_language(CUDA)
    # CMake 3.25 does not know nvcc's C++20 flag.
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(CMAKE_CUDA_EXTENSIONS OFF)
    find_package(CUDAToolkit REQUIRED)
    set(REPLAYRT_HAVE_CUDA ON)
    message(STATUS "replayrt: building the CUDA backend (${CMAKE_CUDA_COMPILER}, "
                   "architectures ${CMAKE_CUDA_ARCHITECTURES})")
  elseif(replayrt_cuda_choice STREQUAL "ON")
    message(FATAL_ERROR "REPLAYRT_ENABLE_CUDA=ON but CMake found no CUDA compiler "
                        "(put nvcc on PATH or set CUDACXX)")
  else()
    message(STATUS "replayrt: no CUDA compiler found; the CUDA backend is not built")
  endif()
endif()
