# Build speed (issue 45, docs/PERFORMANCE.md "From clone to window"): precompiled headers, the
# optimisation levels and the tests' unity builds, applied here, in one place, after every target exists, so that no
# folder's CMakeLists.txt has to know about them.
#
# - Precompiled headers (cmake/pch/*.h): one per kind of translation unit, built once per target
#   (or once for a family of targets with identical flags, REUSE_FROM). Measured on this machine
#   (2 cores, GCC 12): a torch TU of the engine 22 -> 11 CPU-s, a plot TU of the widgets (QCustomPlot)
#   12 -> 6.5 CPU-s, a json TU ~1.2 CPU-s less; the figures of a whole build are in
#   docs/PERFORMANCE.md. -DPITLANE_PCH=OFF (or CMake's own CMAKE_DISABLE_PRECOMPILE_HEADERS) builds
#   without them, which is also how to check that every file includes what it uses.
# - The product's Release build is -O2, not CMake's -O3 (PITLANE_RELEASE_OPT): its own code is
#   plumbing around libtorch (which keeps its own flags: what a worker measures is libtorch's code),
#   JSON, Qt and statistics, and -O3's extra code generation was 8 % of its TUs' CPU time (six of
#   the costliest TUs: 53.8 -> 49.6 CPU-s, GCC 12), about 40 s of the first command's wall time on
#   2 cores (issue 45).
# - Tests (targets under tests/) compile at -Og: their code is assertions, fixtures and process
#   plumbing, and their code generation was most of their cost (test_results.cpp at -O3 / -O1 / -Og:
#   18 / 12 / 9.8 CPU-s; four test TUs without the PCH 31.7 CPU-s at -O1, 27.8 at -Og). The product
#   libraries they test keep the product's level: they link the same objects as the product.
# - GCC's garbage collector runs less often (PITLANE_GCC_GC: --param ggc-min-expand=400
#   ggc-min-heapsize=1048576, i.e. collect when the heap grew 400 % over at least 1 GiB): it was
#   11-14 % of a test TU's time (-ftime-report). Measured side by side (GCC 12, with the PCH): a GUI
#   test TU 9.4 -> 8.4 s at 0.99 -> 1.10 GB peak, an integration test TU 7.5 -> 6.6 s at 0.57 ->
#   0.69 GB; a torch TU of the engine unchanged (8.9 / 8.3 s, 1.19 GB either way).
option(PITLANE_PCH "Precompiled headers (cmake/PitlanePch.cmake)" ON)
option(PITLANE_GCC_GC "Fewer GCC garbage collections while compiling (more memory per compile)" ON)
if(PITLANE_GCC_GC AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options("SHELL:--param ggc-min-expand=400" "SHELL:--param ggc-min-heapsize=1048576")
endif()
option(PITLANE_TEST_UNITY "Unity builds of the unit-test executables of several files" ON)
set(PITLANE_RELEASE_OPT "-O2" CACHE STRING "Optimisation flag of the product's Release build (CMake's default is -O3)")
string(REGEX REPLACE "(^| )-O[0-9s]( |$)" "\\1${PITLANE_RELEASE_OPT}\\2" CMAKE_CXX_FLAGS_RELEASE "${CMAKE_CXX_FLAGS_RELEASE}")
set(PITLANE_TEST_OPT "-Og" CACHE STRING "Optimisation flag of the tests' own code (the product's is PITLANE_RELEASE_OPT)")
set(PITLANE_PCH_DIR ${CMAKE_CURRENT_LIST_DIR}/pch)

# pitlane_pch(TARGET HEADER): TARGET precompiles cmake/pch/HEADER.h (when the target exists).
function(pitlane_pch target header)
  if(PITLANE_PCH AND TARGET ${target})
    target_precompile_headers(${target} PRIVATE ${PITLANE_PCH_DIR}/${header}.h)
  endif()
endfunction()

# pitlane_pch_reuse(FROM TARGET...): each TARGET uses FROM's precompiled header (same flags).
function(pitlane_pch_reuse from)
  if(NOT PITLANE_PCH OR NOT TARGET ${from})
    return()
  endif()
  foreach(target ${ARGN})
    if(TARGET ${target})
      target_precompile_headers(${target} REUSE_FROM ${from})
    endif()
  endforeach()
endfunction()

# Every buildsystem target defined in DIR and the folders below it.
function(pitlane_targets_below dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(sub ${subdirs})
    pitlane_targets_below(${sub} sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# AUTOMOC only where moc has work (issue 45). CMake compiles a target's generated
# mocs_compilation.cpp even when it is empty (no Q_OBJECT, or every moc output #included by its
# .cpp, as the GUI tests do), and with the target's precompiled header that empty file cost
# 0.5-5 CPU-s: 58 test targets, 62 CPU-s of the test build; pitlane_engine's 4.6 (torch's PCH).
# A target none of whose sources (and the headers beside them, which AUTOMOC also scans) name a
# Qt meta-object macro gets no AUTOMOC; one whose every such file is a .cpp that includes its own
# .moc keeps AUTOMOC (it makes that .moc) but compiles the empty file without the PCH. Any other
# target is left as it is. Reading the sources here is what AUTOMOC's scan does at build time.
function(pitlane_trim_automoc)
  pitlane_targets_below(${CMAKE_SOURCE_DIR} targets)
  foreach(t ${targets})
    get_target_property(automoc ${t} AUTOMOC)
    get_target_property(type ${t} TYPE)
    if(NOT automoc OR type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY")
      continue()
    endif()
    get_target_property(sources ${t} SOURCES)
    get_target_property(src_dir ${t} SOURCE_DIR)
    set(files)
    foreach(f ${sources})
      if(f MATCHES "^\\$<" OR NOT f MATCHES "\\.(cpp|cc|cxx|h|hpp)$")
        continue()
      endif()
      if(NOT IS_ABSOLUTE "${f}")
        set(f "${src_dir}/${f}")
      endif()
      list(APPEND files "${f}")
      get_filename_component(dir "${f}" DIRECTORY)
      get_filename_component(base "${f}" NAME_WE)
      foreach(ext h hpp)
        if(EXISTS "${dir}/${base}.${ext}")
          list(APPEND files "${dir}/${base}.${ext}")
        endif()
      endforeach()
    endforeach()
    list(REMOVE_DUPLICATES files)
    set(moc_files 0)
    set(included_only TRUE)
    foreach(f ${files})
      if(NOT EXISTS "${f}")
        set(included_only FALSE)  # generated at build time: leave the target as it is
        continue()
      endif()
      file(STRINGS "${f}" meta REGEX "Q_OBJECT|Q_GADGET|Q_NAMESPACE")
      if(NOT meta)
        continue()
      endif()
      math(EXPR moc_files "${moc_files} + 1")
      get_filename_component(base "${f}" NAME_WE)
      file(STRINGS "${f}" own_moc REGEX "#include [\"<]${base}\\.moc[\">]")
      if(NOT f MATCHES "\\.(cpp|cc|cxx)$" OR NOT own_moc)
        set(included_only FALSE)
      endif()
    endforeach()
    if(moc_files EQUAL 0 AND included_only)
      set_target_properties(${t} PROPERTIES AUTOMOC OFF)
    elseif(included_only)
      get_target_property(bin_dir ${t} BINARY_DIR)
      set_source_files_properties("${bin_dir}/${t}_autogen/mocs_compilation.cpp" TARGET_DIRECTORY ${t}
                                  PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
endfunction()

# Whether TARGET links LIB directly.
function(pitlane_links target lib out)
  get_target_property(links ${target} LINK_LIBRARIES)
  if(links AND lib IN_LIST links)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

function(pitlane_apply_build_speed)
  pitlane_trim_automoc()
  # The engine's torch TUs (the CUDA module is one TU: nothing to share).
  pitlane_pch(pitlane_engine torch)
  # Qt-free, torch-free libraries with several TUs.
  foreach(t pitlane_spec pitlane_protocol pitlane_results pitlane_engine_sys)
    pitlane_pch(${t} core)
  endforeach()
  if(PITLANE_WORKER_ONLY)
    return()
  endif()
  # QtCore libraries and the CLI.
  foreach(t pitlane_session pitlane_store pitlane_report pitlane-cli)
    pitlane_pch(${t} qt_core)
  endforeach()
  # The window: one header for the widgets, reused by the window's library and main.
  pitlane_pch(pitlane_widgets widgets)
  pitlane_pch_reuse(pitlane_widgets pitlane_window pitlane)

  # Tests: -O1, and one precompiled header per family of identical flags.
  pitlane_targets_below(${CMAKE_SOURCE_DIR}/tests test_targets)
  set(gui_tests)
  set(harness_tests)
  foreach(t ${test_targets})
    get_target_property(type ${t} TYPE)
    if(NOT type MATCHES "EXECUTABLE|STATIC_LIBRARY|OBJECT_LIBRARY|SHARED_LIBRARY")
      continue()
    endif()
    target_compile_options(${t} PRIVATE ${PITLANE_TEST_OPT})
    pitlane_links(${t} pitlane_window gui)
    pitlane_links(${t} pitlane_itest_harness harness)
    pitlane_links(${t} pitlane_knobs_harness knobs)
    if(gui)
      list(APPEND gui_tests ${t})
    elseif((harness OR knobs) AND NOT t STREQUAL "pitlane_itest_harness")
      list(APPEND harness_tests ${t})
    endif()
  endforeach()
  # GUI tests (one TU each, same folder, same flags): the first precompiles, the others reuse.
  if(gui_tests)
    list(SORT gui_tests)
    list(POP_FRONT gui_tests gui_owner)
    pitlane_pch(${gui_owner} gui_test)
    pitlane_pch_reuse(${gui_owner} ${gui_tests})
  endif()
  # Integration and knob tests: the harness precompiles, every test linking it reuses.
  pitlane_pch(pitlane_itest_harness qt_core_test)
  pitlane_pch_reuse(pitlane_itest_harness ${harness_tests})
  # Unit-test executables of several TUs: a precompiled header each, and a unity build (their
  # files compiled 10 to a TU, CMake's UNITY_BUILD): the TUs share gtest's, json's and Qt's
  # template instances, which each TU otherwise generates again. Measured (GCC 12, PCH, -O1):
  # test_session's 10 files 33.8 CPU-s apart, 13.1 in one TU; test_unit's 19 files 93 CPU-s apart,
  # 33.3 in one TU. File-local helpers must have names of their own in such a target (an
  # anonymous namespace is the whole unity TU's): shared ones live in the folder's header
  # (tests/store/cli_run.h, tests/report/report_fixture.h, report_samples.h).
  # -DPITLANE_TEST_UNITY=OFF compiles them file by file.
  pitlane_pch(test_unit core_test)
  foreach(t test_session test_store test_store_cli test_report)
    pitlane_pch(${t} qt_core_test)
  endforeach()
  foreach(t test_unit test_session test_store test_store_cli test_report)
    if(PITLANE_TEST_UNITY AND TARGET ${t})
      set_target_properties(${t} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 10)
    endif()
  endforeach()
endfunction()
