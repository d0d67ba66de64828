# fl_library(NAME DIR DEPS...): a static library of every *.cc in DIR except *_test.cc and
# *_main.cc, plus one gtest executable per *_test.cc, registered with gtest_discover_tests.
# Files are globbed with CONFIGURE_DEPENDS so adding a file needs no CMake edit.
function(fl_library name dir)
  cmake_parse_arguments(FL "" "" "DEPS;TEST_DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${dir}/*.cc)
  file(GLOB tests CONFIGURE_DEPENDS ${dir}/*_test.cc)
  list(FILTER srcs EXCLUDE REGEX "(_test|_main|_fuzz)\\.cc$")
  if(srcs)
    add_library(${name} STATIC ${srcs})
    target_link_libraries(${name} PUBLIC ${FL_DEPS})
  else()
    add_library(${name} INTERFACE)
    target_link_libraries(${name} INTERFACE ${FL_DEPS})
  endif()
  if(srcs)
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  else()
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR})
  endif()
  foreach(test_src ${tests})
    get_filename_component(test_name ${test_src} NAME_WE)
    add_executable(${test_name} ${test_src})
    target_link_libraries(${test_name} PRIVATE ${name} ${FL_TEST_DEPS} rapidcheck_gtest rapidcheck
                          GTest::gmock GTest::gtest_main)
    target_compile_definitions(${test_name} PRIVATE
      FAULTLINE_SOURCE_DIR="${PROJECT_SOURCE_DIR}" FAULTLINE_BINARY_DIR="${PROJECT_BINARY_DIR}"
      REDIS_SERVER_PATH="${REDIS_SERVER}")
    # RapidCheck suites run with a fixed seed under CTest, so CI is reproducible; run a test
    # binary directly (or with RC_PARAMS="seed=N max_success=M") to explore other seeds.
    gtest_discover_tests(${test_name} DISCOVERY_TIMEOUT 60
                         PROPERTIES TIMEOUT 600 ENVIRONMENT "RC_PARAMS=seed=20261130")
  endforeach()
endfunction()
