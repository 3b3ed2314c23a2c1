# check_layering.cmake must fail on a violation: on a copy of generator/ it passes, then each
# planted violation (an include in an extensionless shim header, one in a .cu file, a link in a
# CMakeLists.txt, a folder outside the row) must make it fail and be named in its output.
#   cmake -DWORK=<scratch dir> -P tests/layering/check_layering_selftest.cmake   (from the source root)
cmake_minimum_required(VERSION 3.25)
set(check "${CMAKE_CURRENT_LIST_DIR}/check_layering.cmake")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

function(run_check tree out_result out_output)
  execute_process(COMMAND "${CMAKE_COMMAND}" -DROOT=${tree} -P "${check}" RESULT_VARIABLE result
                  OUTPUT_VARIABLE output ERROR_VARIABLE output)
  set(${out_result} "${result}" PARENT_SCOPE)
  set(${out_output} "${output}" PARENT_SCOPE)
endfunction()

# plant(<name> <file under generator/> <text to append> <what the failure must say>)
function(plant name file text expected)
  set(tree "${WORK}/${name}")
  file(COPY "${CMAKE_CURRENT_SOURCE_DIR}/generator" DESTINATION "${tree}")
  file(APPEND "${tree}/generator/${file}" "${text}")
  run_check("${tree}" result output)
  if(result EQUAL 0)
    message(FATAL_ERROR "planted ${name} (${file}) passed the layering check:\n${output}")
  endif()
  string(REGEX REPLACE "[ \t\r\n]+" " " flat "${output}")  # message() wraps long lines
  string(FIND "${flat}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "planted ${name}: the failure does not say `${expected}`:\n${output}")
  endif()
endfunction()

file(COPY "${CMAKE_CURRENT_SOURCE_DIR}/generator" DESTINATION "${WORK}/clean")
run_check("${WORK}/clean" result output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the unplanted copy fails the layering check:\n${output}")
endif()
plant(shim_header sim/shim/metal_stdlib "\n#include \"verify/verify.h\"\n"
      "`sim` includes \"verify/verify.h\" of `verify`, a later room")
plant(cuda_runner cuda/shim/mtlcu/runner.cu "\n#include <cli/driver.h>\n"
      "`cuda` includes \"cli/driver.h\" of `cli`, a later room")
plant(link spec/CMakeLists.txt "\ntarget_link_libraries(mtlgen_spec PRIVATE\n  mtlgen_verify)\n"
      "`mtlgen_spec` (`spec`) links `mtlgen_verify` of `verify`, a later room")
plant(folder new_room/x.h "// a folder nobody placed\n" "generator/new_room: a folder in no room")
file(REMOVE_RECURSE "${WORK}")
message(STATUS "layering self-test: a clean copy passes, each of 4 planted violations fails")
