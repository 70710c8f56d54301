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
