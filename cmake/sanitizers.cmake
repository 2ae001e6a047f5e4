# Sanitizer builds (preset asan-ubsan: "address,undefined" with g++; ci:
# the same with clang and libFuzzer's coverage, "fuzzer-no-link", so that one
# build serves the suite and the fuzz targets; tsan: "thread";
# doc/sanitizers.md). BATON_SANITIZE is the -fsanitize= list, empty for a
# plain build.
set(BATON_SANITIZE "" CACHE STRING
    "Sanitizers to build with (-fsanitize= list): address,undefined or thread")
set(BATON_SANITIZE_DEBUG_INFO "-g1" CACHE STRING
    "Debug info of a sanitizer build: -g1 (enough for reports) or -g")

if(BATON_SANITIZE)
  # -O1 keeps the suite's run time near a plain build's while the reports
  # stay readable. -fno-sanitize-recover=all: an UBSan finding aborts, as
  # an ASan one does, so the test that hit it fails instead of printing and
  # passing.
  # -g1 (line tables and function names, no variables or types): what a
  # report's stack needs, and a third less compile time than -g, most of it
  # spent on the debug info of template instances (doc/sanitizers.md).
  add_compile_options(-fsanitize=${BATON_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -O1 ${BATON_SANITIZE_DEBUG_INFO})
  add_link_options(-fsanitize=${BATON_SANITIZE} -fno-sanitize-recover=all)
  # Where the baton binary's processes report: batond and the supervisor
  # run detached with stderr on /dev/null, and a CLI's report on stderr
  # would be lost in a test that expects it to fail anyway. The fixture
  # below fails the run when any report is there.
  set(BATON_SANITIZER_LOG_DIR ${CMAKE_BINARY_DIR}/sanitizer-reports)
  file(MAKE_DIRECTORY ${BATON_SANITIZER_LOG_DIR})
  if(BATON_SANITIZE MATCHES "address")
    # Not a position-independent executable: an ASan+UBSan baton has 1.7
    # million relative relocations (instrumented globals, UBSan's check
    # records), which the loader applied at every start of every CLI
    # call, 0.2 s of CPU each; without PIE the linker resolves them.
    add_link_options(-no-pie)
  endif()
  set(BATON_GTEST_PROPERTIES FIXTURES_REQUIRED sanitizer)
  # Every process start costs more under the sanitizers (the runtime's set
  # up, the leak check at exit): tests' time limits are this many times
  # their plain ones.
  set(BATON_TEST_TIME_FACTOR 3)
else()
  set(BATON_GTEST_PROPERTIES)
  set(BATON_TEST_TIME_FACTOR 1)
endif()

# Called once the tests are defined: the fixture that clears the reports
# before the tests and fails after them if any process of the baton binary
# reported. Tests found by gtest_discover_tests are only known at build time:
# they get FIXTURES_REQUIRED through BATON_GTEST_PROPERTIES.
function(baton_sanitizer_fixture)
  if(NOT BATON_SANITIZE)
    return()
  endif()
  add_test(NAME sanitizer_reports_clear
           COMMAND ${CMAKE_SOURCE_DIR}/scripts/sanitizer-reports clear
                   ${BATON_SANITIZER_LOG_DIR})
  add_test(NAME sanitizer_reports
           COMMAND ${CMAKE_SOURCE_DIR}/scripts/sanitizer-reports check
                   ${BATON_SANITIZER_LOG_DIR})
  set_tests_properties(sanitizer_reports_clear PROPERTIES
                       FIXTURES_SETUP sanitizer)
  set_tests_properties(sanitizer_reports PROPERTIES
                       FIXTURES_CLEANUP sanitizer)
  get_property(tests DIRECTORY ${CMAKE_SOURCE_DIR} PROPERTY TESTS)
  foreach(test IN LISTS tests)
    if(NOT test MATCHES "^sanitizer_reports")
      set_property(TEST ${test} APPEND PROPERTY FIXTURES_REQUIRED sanitizer)
    endif()
  endforeach()
endfunction()

# Makes the test executable `target` of a sanitizer build report where the
# fixture looks (tests/sanitizer_report_path.cc).
function(baton_sanitizer_test_binary target)
  if(BATON_SANITIZE)
    target_sources(${target} PRIVATE
                   ${CMAKE_SOURCE_DIR}/tests/sanitizer_report_path.cc)
    target_compile_definitions(${target} PRIVATE
      BATON_SANITIZER_LOG_DIR="${BATON_SANITIZER_LOG_DIR}")
  endif()
endfunction()

# Test code (the test binaries, tests/support) compiles at -O0 in every
# build: its speed does not matter, and the optimizer was most of its
# compile time (at -O1 under ASan, request_cases.cc took 18 s, at -O0 5 s;
# doc/testing.md). The code under test keeps its build's level.
function(baton_test_code target)
  target_compile_options(${target} PRIVATE -O0)
endfunction()

# In the fuzzing build (BATON_FUZZ, preset ci), the libraries the fuzz
# targets run, and what they use, carry libFuzzer's coverage
# (-fsanitize=fuzzer-no-link); the others do not, and neither do the test
# binaries. Coverage tables are writable data that LeakSanitizer scans at
# every process exit, and the suite starts thousands of processes
# (doc/testing.md). For the same reason the libraries stay at -O1: at -O0
# the baton binary held 10 MB of UBSan's check records instead of 2.8 MB,
# and `baton ls` cost 81 ms instead of 61. A fuzz target names its libraries (baton_fuzz_target's
# DEPS), so a new one instruments what it runs by itself.
function(baton_instrument_for_fuzzing)
  if(NOT BATON_FUZZ)
    return()
  endif()
  get_property(pending GLOBAL PROPERTY BATON_FUZZED_LIBRARIES)
  set(fuzzed)
  while(pending)
    list(POP_FRONT pending lib)
    if(lib IN_LIST fuzzed OR NOT TARGET ${lib})
      continue()
    endif()
    list(APPEND fuzzed ${lib})
    get_target_property(uses ${lib} BATON_USES)
    if(uses)
      list(APPEND pending ${uses})
    endif()
  endwhile()
  foreach(lib IN LISTS fuzzed)
    target_compile_options(${lib} PRIVATE -fsanitize=fuzzer-no-link)
  endforeach()
  message(STATUS "Fuzzed libraries, with coverage: ${fuzzed}")
endfunction()
