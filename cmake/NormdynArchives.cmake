# Shared or static, as each final target chooses.
#
# Debian ships a static archive beside most of the shared libraries normdyn uses (libhdf5.a beside
# libhdf5.so). The program links the archives: every shared library costs a process start about a
# millisecond (mapping, relocating, symbol lookups; `perf stat` of an empty C++ program: 1.3 ms, and
# 2.1–2.6 ms with one of libtomlplusplus, libfftw3, libsz or libgomp added), while a small run
# integrates in a few milliseconds. The shared libhdf5 also brings libcurl (its S3 driver) and some
# 30 libraries behind it; from the archive the linker takes only the objects normdyn calls, the S3
# driver is not among them, and --as-needed drops libcurl. The Python module and the tests keep the
# shared libraries: h5py loads the shared libhdf5 into the same process.
#
# A final target chooses with its property NORMDYN_STATIC_ARCHIVES (the program sets it from the
# option of that name, see app/CMakeLists.txt); libgomp has its own, NORMDYN_STATIC_OPENMP, which
# the program sets with the option (its passive waiting then differs, app/CMakeLists.txt).
#
#   normdyn_dependency(<name> [PROPERTY <property>] [REQUIRED] <library file>...)
#
# defines the INTERFACE target <name>, which links each library file as given, except that for a
# target whose <property> (default NORMDYN_STATIC_ARCHIVES) is true a lib<x>.so whose x is in
# NORMDYN_ARCHIVE_NAMES and whose lib<x>.a exists is replaced by the archive (followed by the
# archives it needs, from NORMDYN_ARCHIVE_NEEDS_<x>). A library without its archive stays shared,
# with a status message; with REQUIRED, configuration stops instead.
#
#   normdyn_link_archives(<target>)
#
# makes <target> a program linked as normdyn is: the archives if the option NORMDYN_STATIC_ARCHIVES
# is on, and only the shared libraries it calls.

# One entry per library the program takes from its archive.
set(NORMDYN_ARCHIVE_NAMES hdf5 hdf5_hl sz z fftw3 gomp)
# libsz is a wrapper of libaec: its archive needs libaec's.
set(NORMDYN_ARCHIVE_NEEDS_sz aec)

function(normdyn_dependency name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "REQUIRED" "PROPERTY" "")
  if(NOT arg_PROPERTY)
    set(arg_PROPERTY NORMDYN_STATIC_ARCHIVES)
  endif()
  set(shared ${arg_UNPARSED_ARGUMENTS})
  set(static)
  foreach(lib IN LISTS shared)
    set(choice "${lib}")
    if(lib MATCHES "/lib([^/]+)\\.so$" AND CMAKE_MATCH_1 IN_LIST NORMDYN_ARCHIVE_NAMES)
      set(base "${CMAKE_MATCH_1}")
      get_filename_component(dir "${lib}" DIRECTORY)
      set(archives "${dir}/lib${base}.a")
      foreach(need IN LISTS NORMDYN_ARCHIVE_NEEDS_${base})
        list(APPEND archives "${dir}/lib${need}.a")
      endforeach()
      set(all_found TRUE)
      foreach(archive IN LISTS archives)
        if(NOT EXISTS "${archive}" AND arg_REQUIRED)
          message(FATAL_ERROR "${archive} not found (it comes with the -dev package of ${lib})")
        elseif(NOT EXISTS "${archive}")
          set(all_found FALSE)
          message(STATUS "${archive} not found: the program links ${lib}")
        endif()
      endforeach()
      if(all_found)
        set(choice ${archives})
      endif()
    endif()
    list(APPEND static ${choice})
  endforeach()
  add_library(${name} INTERFACE)
  target_link_libraries(${name} INTERFACE
    "$<IF:$<BOOL:$<TARGET_PROPERTY:${arg_PROPERTY}>>,${static},${shared}>")
endfunction()

function(normdyn_link_archives target)
  set_target_properties(${target} PROPERTIES NORMDYN_STATIC_ARCHIVES ${NORMDYN_STATIC_ARCHIVES})
  # HDF5's link line names libcurl and libcrypto for its S3 driver, which the objects taken from its
  # archive do not need. Debian's GCC passes --as-needed itself, except with -fsanitize: explicit, so
  # that every build loads the same libraries.
  target_link_options(${target} PRIVATE LINKER:--as-needed)
endfunction()
