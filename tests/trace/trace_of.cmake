# Runs a program that writes a trace, then checks the file with check_trace.py:
#   cmake -DPROGRAM=<exe> "-DARGS=<arg;...>" -DTRACE=<file> -DPYTHON=<python3>
#         -DCHECKER=<check_trace.py> "-DCHECK_ARGS=<arg;...>" -P trace_of.cmake
file(REMOVE ${TRACE})
execute_process(COMMAND ${PROGRAM} ${ARGS} --trace ${TRACE}
  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} failed (exit ${status}):\n${output}${errors}")
endif()
execute_process(COMMAND ${PYTHON} ${CHECKER} ${TRACE} ${CHECK_ARGS}
  RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE errors)
message(STATUS "${output}${errors}")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the trace of ${PROGRAM} is not well formed")
endif()
