# Compiler flags shared by every replayrt target: warnings and sanitizers.

add_library(replayrt_build_flags INTERFACE)
target_compile_options(replayrt_build_flags INTERFACE
  $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Wall -Wextra -Wpedantic>
  $<$<COMPILE_LANG_AND_ID:C,GNU,Clang>:-Wall -Wextra -Wpedantic>)
if(REPLAYRT_WARNINGS_AS_ERRORS)
  target_compile_options(replayrt_build_flags INTERFACE
    $<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang>:-Werror>
    $<$<COMPILE_LANG_AND_ID:C,GNU,Clang>:-Werror>)
endif()

if(REPLAYRT_SANITIZE)
  list(JOIN REPLAYRT_SANITIZE "," replayrt_sanitizers)
  set(replayrt_sanitizer_flags -fsanitize=${replayrt_sanitizers} -fno-omit-frame-pointer
      -fno-sanitize-recover=all)
  add_compile_options(${replayrt_sanitizer_flags})
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
