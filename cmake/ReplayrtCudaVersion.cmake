# The oldest CUDA toolkit the CUDA backend builds with, and the check of a CUDA compiler
# against it. The backend calls the CUDA 13 forms of the runtime's capture calls
# (cudaStreamGetCaptureInfo and cudaStreamUpdateCaptureDependencies with edge data), which
# CUDA 12.3 to 12.9 name cudaStreamGetCaptureInfo_v3 and cudaStreamUpdateCaptureDependencies_v2
# and older toolkits do not have.
set(REPLAYRT_MIN_CUDA_VERSION 13.0)

# replayrt_check_cuda_compiler(<compiler> <out_usable> <out_reason>)
# Sets <out_usable> to TRUE when the backend builds with <compiler>; otherwise to FALSE, and
# <out_reason> to a sentence naming the compiler, its CUDA version and the one needed. The
# version is the "release X.Y" that `<compiler> --version` prints; a compiler that prints none
# is taken as usable (the build then reports what it lacks).
function(replayrt_check_cuda_compiler compiler out_usable out_reason)
  execute_process(COMMAND "${compiler}" --version OUTPUT_VARIABLE printed ERROR_VARIABLE printed)
  string(REGEX MATCH "release ([0-9]+\\.[0-9]+)" release "${printed}")
  set(version "${CMAKE_MATCH_1}")
  if(version AND version VERSION_LESS REPLAYRT_MIN_CUDA_VERSION)
    set(${out_usable} FALSE PARENT_SCOPE)
    set(${out_reason} "${compiler} is CUDA ${version}; replayrt's CUDA backend needs CUDA \
${REPLAYRT_MIN_CUDA_VERSION} or newer" PARENT_SCOPE)
  else()
    set(${out_usable} TRUE PARENT_SCOPE)
    set(${out_reason} "" PARENT_SCOPE)
  endif()
endfunction()
