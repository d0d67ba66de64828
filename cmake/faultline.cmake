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

# fl_add_subdirectories([DIR]): adds every direct subfolder of DIR (default: the current source
# directory) that has a CMakeLists.txt, in name order — a new system's folder (impl/<system>,
# model/<system>, harness/systems/<system>, ...) needs no edit of its layer's CMakeLists.txt.
function(fl_add_subdirectories)
  set(parent ${CMAKE_CURRENT_SOURCE_DIR})
  if(ARGC GREATER 0)
    set(parent ${ARGV0})
  endif()
  file(GLOB lists CONFIGURE_DEPENDS ${parent}/*/CMakeLists.txt)
  list(SORT lists)
  foreach(list_file ${lists})
    get_filename_component(dir ${list_file} DIRECTORY)
    add_subdirectory(${dir})
  endforeach()
endfunction()

# fl_system(NAME ADAPTER source... LIBS library... MATRIX file.yaml): declares a system under
# test, from its own folder harness/systems/NAME/. The adapter sources (which define
# `const fl::SystemUnderTest& NAME_system()`) are compiled into fl_harness and the system's
# libraries linked there; the registry (harness/systems_registry.cc.in, generated once every
# declaration is read) lists the system, and its test-matrix rows (MATRIX, YAML, format in
# docs/adding-a-system.md) are compiled in as text. Nothing outside the system's folders names it.
function(fl_system name)
  cmake_parse_arguments(FL "" "MATRIX" "ADAPTER;LIBS" ${ARGN})
  if(NOT name MATCHES "^[a-z][a-z0-9_]*$" OR NOT FL_ADAPTER OR NOT FL_MATRIX OR FL_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "usage: fl_system(name ADAPTER source... LIBS library... MATRIX file.yaml); got ${name} ${ARGN}")
  endif()
  get_filename_component(matrix ${FL_MATRIX} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  if(NOT EXISTS ${matrix})
    message(FATAL_ERROR "fl_system(${name}): no matrix file ${matrix}")
  endif()
  list(TRANSFORM FL_ADAPTER PREPEND ${CMAKE_CURRENT_SOURCE_DIR}/)
  target_sources(fl_harness PRIVATE ${FL_ADAPTER})
  target_link_libraries(fl_harness PUBLIC ${FL_LIBS})
  set_property(GLOBAL APPEND PROPERTY FL_SYSTEMS ${name})
  set_property(GLOBAL APPEND PROPERTY FL_SYSTEM_LIBS ${FL_LIBS})
  set_property(GLOBAL PROPERTY FL_SYSTEM_MATRIX_${name} ${matrix})
endfunction()

# fl_generate_system_registry(TARGET OUT): writes OUT, the registry of every fl_system() declared
# so far (harness/systems_registry.cc.in), and compiles it into TARGET. Re-runs CMake when a
# matrix file changes.
function(fl_generate_system_registry target out)
  get_property(systems GLOBAL PROPERTY FL_SYSTEMS)
  list(SORT systems)
  set(FL_REGISTRY_DECLS "")
  set(FL_REGISTRY_ENTRIES "")
  foreach(s ${systems})
    get_property(matrix GLOBAL PROPERTY FL_SYSTEM_MATRIX_${s})
    file(READ ${matrix} text)
    if(text MATCHES "\\)fl_matrix\"")
      message(FATAL_ERROR "${matrix} contains )fl_matrix\", the end of the raw string it is embedded in")
    endif()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${matrix})
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${matrix})
    string(APPEND FL_REGISTRY_DECLS "const SystemUnderTest& ${s}_system();\n")
    string(APPEND FL_REGISTRY_ENTRIES "      {&${s}_system(), \"${rel}\", R\"fl_matrix(${text})fl_matrix\"},\n")
  endforeach()
  configure_file(${PROJECT_SOURCE_DIR}/harness/systems_registry.cc.in ${out} @ONLY)
  target_sources(${target} PRIVATE ${out})
endfunction()
