# Generates build/generated/normdyn_version.cpp with the project version and the git revision.
# The revision is re-read at every build (not only at configure time), and the file is rewritten
# only when it changes, so that a new commit never triggers a full rebuild.
set(NORMDYN_VERSION_CPP ${CMAKE_BINARY_DIR}/generated/normdyn_version.cpp)
add_custom_target(normdyn_version_info
  COMMAND ${CMAKE_COMMAND}
          -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
          -DOUTPUT=${NORMDYN_VERSION_CPP}
          -DVERSION=${PROJECT_VERSION}
          -DCOMPILER=${CMAKE_CXX_COMPILER_ID}-${CMAKE_CXX_COMPILER_VERSION}
          -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
          -P ${CMAKE_SOURCE_DIR}/cmake/write_version.cmake
  BYPRODUCTS ${NORMDYN_VERSION_CPP}
  COMMENT "Recording normdyn version and git revision")
