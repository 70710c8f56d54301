# Compiler flags shared by every replayrt target: warnings and sanitizers.

add_library(replayrt_build_flags INTERFACE)
target_compile_options(replayrt_build_flags INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall -Wextra -Wpedantic>
  $<$<COMPILE_LANG_AND_ID:C,GNU,Clang>:-Wall -Wextra -Wpedantic>)
# Identifiers reserved to the implementation (`_Upper`, `__` anywhere, `_lower` at global scope)
# are the compiler's check, not clang-tidy's: every clang build (sanitizers, fuzz) enforces it.
target_compile_options(replayrt_build_flags INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,Clang>:-Wreserved-identifier>
  $<$<COMPILE_LANG_AND_ID:C,Clang>:-Wreserved-identifier>)
# nvcc: its own warnings and the host pass's -Wall -Wextra. -Wpedantic stays off the host pass,
# where every line directive nvcc generates would trigger it. The host pass compiles one
# preprocessed file, so clang counts the header's unused static inline helpers as the main
# file's own unused functions: -Wunused-function is off there.
target_compile_options(replayrt_build_flags INTERFACE
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-unused-function>)
if(REPLAYRT_WARNINGS_AS_ERRORS)
  target_compile_options(replayrt_build_flags INTERFACE
    $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Werror>
    $<$<COMPILE_LANG_AND_ID:C,GNU,Clang>:-Werror>
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Werror>)
endif()

if(REPLAYRT_SANITIZE)
  list(JOIN REPLAYRT_SANITIZE "," replayrt_sanitizers)
  set(replayrt_sanitizer_flags -fsanitize=${replayrt_sanitizers} -fno-omit-frame-pointer
      -fno-sanitize-recover=all)
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${replayrt_sanitizer_flags}>")
  # nvcc hands each flag to the host compiler separately: a comma inside -Xcompiler would
  # split the sanitizer list.
  foreach(flag IN LISTS replayrt_sanitizer_flags)
    if(flag MATCHES "^-fsanitize=")
      foreach(piece IN LISTS REPLAYRT_SANITIZE)
        add_compile_options("$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-fsanitize=${piece}>")
      endforeach()
    else()
      add_compile_options("$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${flag}>")
    endif()
  endforeach()
  add_link_options(${replayrt_sanitizer_flags})
endif()

# The fuzz targets: every object gets libFuzzer's coverage instrumentation; the fuzzer runtime
# and its main() are linked only into the executables in tests/fuzz (-fsanitize=fuzzer there).
if(REPLAYRT_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "REPLAYRT_BUILD_FUZZERS needs clang (libFuzzer ships with it); the C++ "
                        "compiler is ${CMAKE_CXX_COMPILER_ID}. Use `cmake --preset fuzz`.")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
