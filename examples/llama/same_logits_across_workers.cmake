# Runs the llama decoder with one device worker and with several and requires both runs to pass
# their own checks and to print the same tokens and the same hash of every step's logits bits:
#   cmake -DDECODER=<decoder> -DWORKERS=<n> -DTOKENS=<n> -DSHAPE=<shape> -P same_logits_across_workers.cmake
foreach(workers IN ITEMS 1 ${WORKERS})
  execute_process(COMMAND ${DECODER} --shape ${SHAPE} --tokens ${TOKENS} --workers ${workers}
    RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
  message(STATUS "${workers} worker(s):\n${output}${errors}")
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "the decoder failed with ${workers} worker(s) (exit ${status})")
  endif()
  string(REGEX MATCH "tokens:[^\n]*\nlogits:[^\n]*" decoded_${workers} "${output}")
  if(decoded_${workers} STREQUAL "")
    message(FATAL_ERROR "the decoder printed no tokens and logits hash with ${workers} worker(s)")
  endif()
endforeach()
if(NOT decoded_1 STREQUAL decoded_${WORKERS})
  message(FATAL_ERROR "the worker counts decoded differently:\n  1: ${decoded_1}\n  "
                      "${WORKERS}: ${decoded_${WORKERS}}")
endif()
