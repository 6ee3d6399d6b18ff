# Passive OpenMP waiting for the programs unless the user chose a policy (app/passive_wait.cpp).
# libgomp reads the policy once, in its own initializer, so the setting has to run before it:
# * libgomp from its archive (NORMDYN_STATIC_ARCHIVES): the constructor, linked as an object, outranks
#   libgomp's by its priority;
# * the shared libgomp (the default): the constructor lives in libnormdyn_passive_wait.so, which the
#   program needs after libgomp; the loader initializes libraries that do not depend on each other in
#   the reverse order of the program's DT_NEEDED entries, so this one runs first.
# The tests app/passive_wait_* check the outcome through libgomp's own report either way.
#
#   normdyn_link_passive_wait(<executable>)
#
# must be called in the directory that defines the executable, and only for executables: in the
# shared case it appends the library to the end of that directory's link lines
# (CMAKE_CXX_STANDARD_LIBRARIES), the one place CMake keeps after libgomp, which it orders after
# every library that needs OpenMP. That is why the targets live here, outside app/.
add_library(normdyn_passive_wait_object OBJECT ${PROJECT_SOURCE_DIR}/app/passive_wait.cpp)
target_link_libraries(normdyn_passive_wait_object PRIVATE normdyn_warnings)
if(NOT NORMDYN_STATIC_ARCHIVES)
  add_library(normdyn_passive_wait SHARED ${PROJECT_SOURCE_DIR}/app/passive_wait.cpp)
  target_link_libraries(normdyn_passive_wait PRIVATE normdyn_warnings)
  # Where it is installed relative to the programs, in the build tree too (build/app, build/bench).
  set_target_properties(normdyn_passive_wait PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_LIBDIR})
endif()

macro(normdyn_link_passive_wait target)
  if(NORMDYN_STATIC_ARCHIVES)
    set_target_properties(${target} PROPERTIES NORMDYN_STATIC_OPENMP ON)
    target_link_libraries(${target} PRIVATE normdyn_passive_wait_object)
  else()
    add_dependencies(${target} normdyn_passive_wait)
    # Kept in DT_NEEDED though the program calls nothing in it (Debian's GCC links with --as-needed).
    # Once per directory: every C++ program there links it, so each must be passed to this macro.
    if(NOT CMAKE_CXX_STANDARD_LIBRARIES MATCHES "libnormdyn_passive_wait")
      string(APPEND CMAKE_CXX_STANDARD_LIBRARIES
             " -Wl,--push-state,--no-as-needed ${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_LIBDIR}/libnormdyn_passive_wait.so -Wl,--pop-state")
    endif()
    set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS ${PROJECT_BINARY_DIR}/${CMAKE_INSTALL_LIBDIR}/libnormdyn_passive_wait.so)
    # One RUNPATH entry, right in the build tree and once installed.
    set_target_properties(${target} PROPERTIES SKIP_BUILD_RPATH OFF BUILD_WITH_INSTALL_RPATH ON
                                               INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
  endif()
endmacro()
