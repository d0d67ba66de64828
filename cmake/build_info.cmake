# Writes OUT, a C++ source defining fl::build_commit(): the git commit of SRC when the binary was
# built, with "-dirty" when tracked files differed from it, or "unknown (no git commit)".
# Run at every build (harness/CMakeLists.txt); OUT is rewritten only when its text changes, so
# an unchanged commit recompiles nothing.
#   cmake -DSRC=<source dir> -DOUT=<file> -P build_info.cmake
execute_process(COMMAND git rev-parse HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE head OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
string(LENGTH "${head}" head_length)
if(NOT rc EQUAL 0 OR NOT head_length EQUAL 40)
  set(commit "unknown (no git commit)")
else()
  set(commit "${head}")
  execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SRC}
                  OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT changes STREQUAL "")
    set(commit "${commit}-dirty")
  endif()
endif()
set(text "// Generated at build time by cmake/build_info.cmake: do not edit.\n#include \"harness/build_info.h\"\n\nnamespace fl {\n\nconst char* build_commit() { return \"${commit}\"; }\n\n}  // namespace fl\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
