# mtlgen_add_kernels(<target> SPECS <spec.yaml>... [VERIFY] [OUTPUT_DIR <dir>])
#
# Generates, at build time, what `mtlgen generate` writes for SPECS into OUTPUT_DIR (default
# ${CMAKE_CURRENT_BINARY_DIR}/<target>), and makes <target> a static library of the kernels' C++
# references (include "<kernel>/<kernel>_reference.h"), so a project can test against them on any
# host. On macOS it also compiles every kernel into <target>.metallib (xcrun metal, the spec's MSL
# version, no fast math) and adds <target>_glue, the Objective-C++ glue linked with Metal.
# VERIFY runs `mtlgen verify` on SPECS (the Linux simulator against the references) as part of the
# build, again whenever a spec or mtlgen changes.
#
# The outputs are declared: generation runs once at configure time to learn the files, and again at
# build time only when a spec or the mtlgen executable changed (files whose bytes did not change keep
# their time stamps, so nothing that includes them rebuilds). A spec is a configure dependency, so a
# renamed kernel is picked up.
function(mtlgen_add_kernels target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "VERIFY" "OUTPUT_DIR" "SPECS")
  if(NOT arg_SPECS)
    message(FATAL_ERROR "mtlgen_add_kernels(${target}): SPECS names no spec file")
  endif()
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "mtlgen_add_kernels(${target}): unexpected arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_OUTPUT_DIR)
    set(arg_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/${target}")
  endif()
  set(specs "")
  foreach(spec IN LISTS arg_SPECS)
    get_filename_component(spec "${spec}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND specs "${spec}")
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${specs} "${mtlgen_EXECUTABLE}")

  execute_process(COMMAND "${mtlgen_EXECUTABLE}" generate ${specs} -o "${arg_OUTPUT_DIR}" -q
                  RESULT_VARIABLE rc ERROR_VARIABLE errors)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "mtlgen_add_kernels(${target}): mtlgen generate failed:\n${errors}")
  endif()
  _mtlgen_generated_files("${arg_OUTPUT_DIR}/manifest.json" files kernels msl_versions)

  set(stamp "${CMAKE_CURRENT_BINARY_DIR}/${target}.mtlgen.stamp")
  list(TRANSFORM files PREPEND "${arg_OUTPUT_DIR}/" OUTPUT_VARIABLE outputs)
  add_custom_command(OUTPUT "${stamp}" BYPRODUCTS ${outputs}
                     COMMAND "${mtlgen_EXECUTABLE}" generate ${specs} -o "${arg_OUTPUT_DIR}" -q
                     COMMAND "${CMAKE_COMMAND}" -E touch "${stamp}"
                     DEPENDS ${specs} "${mtlgen_EXECUTABLE}"
                     COMMENT "mtlgen generate (${target})" VERBATIM)
  add_custom_target(${target}_generate DEPENDS "${stamp}")

  set(references "")
  foreach(kernel IN LISTS kernels)
    if("${kernel}/${kernel}_reference.cpp" IN_LIST files)
      list(APPEND references "${arg_OUTPUT_DIR}/${kernel}/${kernel}_reference.cpp")
    endif()
  endforeach()
  add_library(${target} STATIC ${references})
  target_include_directories(${target} PUBLIC "${arg_OUTPUT_DIR}")
  target_compile_features(${target} PUBLIC cxx_std_20)
  add_dependencies(${target} ${target}_generate)

  if(arg_VERIFY)
    set(verified "${CMAKE_CURRENT_BINARY_DIR}/${target}.verified.stamp")
    add_custom_command(OUTPUT "${verified}"
                       COMMAND "${mtlgen_EXECUTABLE}" verify ${specs} --quiet
                       COMMAND "${CMAKE_COMMAND}" -E touch "${verified}"
                       DEPENDS ${specs} "${mtlgen_EXECUTABLE}"
                       COMMENT "mtlgen verify (${target})" VERBATIM)
    add_custom_target(${target}_verify DEPENDS "${verified}")
    add_dependencies(${target} ${target}_verify)
  endif()

  if(APPLE)
    _mtlgen_add_metal(${target} "${arg_OUTPUT_DIR}" "${kernels}" "${msl_versions}" "${files}")
  endif()
endfunction()

# From manifest.json: every generated file (relative), the kernels and their MSL versions.
function(_mtlgen_generated_files manifest files_var kernels_var versions_var)
  file(READ "${manifest}" json)
  string(JSON library GET "${json}" library_files)
  string(JSON count LENGTH "${library}")
  set(files "")
  set(kernels "")
  set(versions "")
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON file GET "${library}" ${i})
    list(APPEND files "${file}")
  endforeach()
  string(JSON kcount LENGTH "${json}" kernels)
  if(kcount GREATER 0)
    math(EXPR klast "${kcount} - 1")
    foreach(k RANGE ${klast})
      string(JSON name GET "${json}" kernels ${k} name)
      string(JSON version GET "${json}" kernels ${k} msl_version)
      list(APPEND kernels "${name}")
      list(APPEND versions "${version}")
      string(JSON fcount LENGTH "${json}" kernels ${k} files)
      math(EXPR flast "${fcount} - 1")
      foreach(f RANGE ${flast})
        string(JSON file GET "${json}" kernels ${k} files ${f})
        list(APPEND files "${file}")
      endforeach()
    endforeach()
  endif()
  list(REMOVE_DUPLICATES files)
  set(${files_var} "${files}" PARENT_SCOPE)
  set(${kernels_var} "${kernels}" PARENT_SCOPE)
  set(${versions_var} "${versions}" PARENT_SCOPE)
endfunction()

# macOS: <target>.metallib from every kernel's .metal, and <target>_glue (Objective-C++, ARC).
function(_mtlgen_add_metal target dir kernels versions files)
  set(airs "")
  foreach(kernel version IN ZIP_LISTS kernels versions)
    set(source "${dir}/${kernel}/${kernel}.metal")
    if(NOT "${kernel}/${kernel}.metal" IN_LIST files)
      continue()
    endif()
    set(air "${CMAKE_CURRENT_BINARY_DIR}/${target}_air/${kernel}.air")
    add_custom_command(OUTPUT "${air}"
                       COMMAND "${CMAKE_COMMAND}" -E make_directory "${CMAKE_CURRENT_BINARY_DIR}/${target}_air"
                       COMMAND xcrun -sdk macosx metal -c -std=metal${version} -fno-fast-math -frecord-sources
                               "${source}" -o "${air}"
                       DEPENDS "${CMAKE_CURRENT_BINARY_DIR}/${target}.mtlgen.stamp"
                       COMMENT "metal ${kernel}.metal" VERBATIM)
    list(APPEND airs "${air}")
  endforeach()
  set(metallib "${CMAKE_CURRENT_BINARY_DIR}/${target}.metallib")
  add_custom_command(OUTPUT "${metallib}" COMMAND xcrun -sdk macosx metallib ${airs} -o "${metallib}"
                     DEPENDS ${airs} COMMENT "metallib ${target}.metallib" VERBATIM)
  add_custom_target(${target}_metallib ALL DEPENDS "${metallib}")
  set(glue ${files})
  list(FILTER glue INCLUDE REGEX "\\.mm$")
  list(FILTER glue EXCLUDE REGEX "(^|/)(bench|autotune)_[^/]*\\.mm$|mtlgen_harness\\.mm$")
  list(TRANSFORM glue PREPEND "${dir}/")
  enable_language(OBJCXX)
  add_library(${target}_glue STATIC ${glue})
  target_include_directories(${target}_glue PUBLIC "${dir}")
  target_compile_options(${target}_glue PUBLIC $<$<COMPILE_LANGUAGE:OBJCXX>:-fobjc-arc>)
  target_link_libraries(${target}_glue PUBLIC "-framework Foundation" "-framework Metal")
  add_dependencies(${target}_glue ${target}_generate ${target}_metallib)
endfunction()
