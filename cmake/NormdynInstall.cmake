# Installation: the `normdyn` program, the static libraries, the public headers and an exported
# CMake package, so that after `cmake --install build --prefix P` a C++ project finds the libraries
# with `find_package(normdyn CONFIG)` (CMAKE_PREFIX_PATH=P) and links `normdyn::core`,
# `normdyn::solvers`, `normdyn::analysis` or `normdyn::experiment`.
#
# A library joins the package with one line: normdyn_install_library(<target> <exported name>).
# Its build-tree include directories must be wrapped in $<BUILD_INTERFACE:...>.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(NORMDYN_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/normdyn)

function(normdyn_install_library target export_name)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  install(TARGETS ${target} EXPORT normdynTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()

# The compile settings every user of the libraries inherits: the architecture flags (Eigen's
# vectorization and alignment must agree between the libraries and their users) and the
# sanitizers. The warnings travel with the static libraries as link-only dependencies.
normdyn_install_library(normdyn_options options)
normdyn_install_library(normdyn_warnings warnings)
normdyn_install_library(normdyn_hdf5 hdf5)
normdyn_install_library(normdyn_zlib zlib)
normdyn_install_library(normdyn_fftw fftw)
normdyn_install_library(normdyn_sharp sharp)
normdyn_install_library(normdyn_openmp openmp)
normdyn_install_library(normdyn_core core)
normdyn_install_library(normdyn_solvers solvers)
normdyn_install_library(normdyn_analysis analysis)
normdyn_install_library(normdyn_experiment experiment)

install(TARGETS normdyn RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The MPI module (experiment/team_mpi.cpp), loaded from there under an MPI launcher.
if(TARGET normdyn_mpi)
  install(TARGETS normdyn_mpi LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
# The program's RUNPATH is set in app/CMakeLists.txt: none with the archives, else the one directory of
# libnormdyn_passive_wait.so. CMake's default build RUNPATH would list the directory of every library
# linked by full path (Debian's openmpi/lib and hdf5/serial), and the loader probed each of them for
# every library the program needs, at every start.
if(NORMDYN_STATIC_ARCHIVES)
  set_target_properties(normdyn PROPERTIES SKIP_BUILD_RPATH ON INSTALL_RPATH "")
else()
  install(TARGETS normdyn_passive_wait LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/normdyn DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(EXPORT normdynTargets NAMESPACE normdyn:: DESTINATION ${NORMDYN_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/normdynConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/normdynConfig.cmake
                              INSTALL_DESTINATION ${NORMDYN_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/normdynConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/normdynConfig.cmake ${PROJECT_BINARY_DIR}/normdynConfigVersion.cmake
        DESTINATION ${NORMDYN_INSTALL_CMAKEDIR})
