# Runs the C++ llama decoder and its Python port on one checkpoint and requires both to pass
# their own checks and to decode the same tokens:
#   cmake -DDECODER=<llama-decoder> -DPYTHON=<python3> -DPYTHONPATH=<dir> -DSCRIPT=<script>
#         -DCHECKPOINT=<file> -DTOKENS=<n> -P same_tokens.cmake
execute_process(COMMAND ${DECODER} --checkpoint ${CHECKPOINT} --tokens ${TOKENS}
  RESULT_VARIABLE status OUTPUT_VARIABLE cpp_output ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "llama-decoder failed (exit ${status}):\n${cpp_output}${errors}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env PYTHONPATH=${PYTHONPATH}
    ${PYTHON} ${SCRIPT} ${CHECKPOINT} --tokens ${TOKENS}
  RESULT_VARIABLE status OUTPUT_VARIABLE python_output ERROR_VARIABLE errors)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "the Python decoder failed (exit ${status}):\n${python_output}${errors}")
endif()
string(REGEX MATCH "tokens:[^\n]*" cpp_tokens "${cpp_output}")
string(REGEX MATCH "tokens:[^\n]*" python_tokens "${python_output}")
message(STATUS "C++    ${cpp_tokens}\nPython ${python_tokens}")
if(cpp_tokens STREQUAL "" OR NOT cpp_tokens STREQUAL python_tokens)
  message(FATAL_ERROR "the decoders printed different tokens")
endif()
