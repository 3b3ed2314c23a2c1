# mtlgen_embed_files(<target> <namespace-name> <base-dir> <files...>)
# Generates a C++ source that holds each file's bytes, keyed by its path relative to base-dir,
# and adds it to <target>. Lookup goes through mtlgen::support::EmbeddedFiles (embedded_files.h).
function(mtlgen_embed_files target base_dir)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${target}_embedded.cpp")
  set(files ${ARGN})
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DBASE=${base_dir} "-DFILES=${files}"
            -DSYMBOL=${target} -P "${PROJECT_SOURCE_DIR}/cmake/EmbedFilesScript.cmake"
    DEPENDS ${files} "${PROJECT_SOURCE_DIR}/cmake/EmbedFilesScript.cmake"
    COMMENT "Embedding ${target} files"
    VERBATIM)
  target_sources(${target} PRIVATE "${out}")
endfunction()
