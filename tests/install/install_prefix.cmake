# The installed tree that the install, Python and documentation tests share (the CTest fixture
# normdyn_installed): `cmake --install BUILD_DIR --prefix PREFIX`, after removing what an earlier run
# left there. cmake -DBUILD_DIR=... -DPREFIX=... -P install_prefix.cmake
file(REMOVE_RECURSE ${PREFIX})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX}
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --install ${BUILD_DIR} --prefix ${PREFIX} failed (${rc}):\n${err}")
endif()
