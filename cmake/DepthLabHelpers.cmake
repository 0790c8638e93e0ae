# Small helpers shared by the DepthLab targets: warnings/sanitizers, SQL embedding, tests.

# depthlab_target_defaults(target): warnings and sanitizer flags for one of our targets.
function(depthlab_target_defaults target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(DEPTHLAB_WARNINGS_AS_ERRORS)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(DEPTHLAB_ENABLE_ASAN)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  if(DEPTHLAB_ENABLE_TSAN)
    target_compile_options(${target} PRIVATE -fsanitize=thread)
    target_link_options(${target} PRIVATE -fsanitize=thread)
  endif()
endfunction()

# depthlab_embed_sql(OUT header VAR name FILES a.sql b.sql ...): generates a header holding
# every migration as a raw string, in file order, so the binary carries its own schema.
function(depthlab_embed_sql)
  cmake_parse_arguments(E "" "OUT;VAR" "FILES" ${ARGN})
  set(body "// Generated from core/store/schema/*.sql by CMake. Do not edit.\n#pragma once\n#include <array>\n#include <string_view>\nnamespace depthlab::store {\ninline constexpr std::array<std::string_view, ")
  list(LENGTH E_FILES n)
  string(APPEND body "${n}> ${E_VAR} = {\n")
  foreach(f ${E_FILES})
    file(READ ${f} sql)
    string(APPEND body "  std::string_view(R\"depthlab_sql(${sql})depthlab_sql\"),\n")
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${f})
  endforeach()
  string(APPEND body "};\n}  // namespace depthlab::store\n")
  file(CONFIGURE OUTPUT ${E_OUT} CONTENT "${body}" @ONLY)
endfunction()

# depthlab_test_optimisation(target): test code compiles at -O1 in optimised builds (the code
# under test keeps -O3 in its own targets). A test source at -O3 spent ~60% of its ~25-35 s in
# the optimiser; -O1 takes a third off, over ~160 test sources and both CI legs. -O1 still
# defines __OPTIMIZE__, so depthlab_core's precompiled header (built at -O3) stays valid.
function(depthlab_test_optimisation target)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release,RelWithDebInfo>:-O1>)
endfunction()

# depthlab_add_gtest(NAME name SOURCES ... LIBS ... [LABELS ...]): one GoogleTest executable,
# each TEST registered with CTest on its own.
function(depthlab_add_gtest)
  cmake_parse_arguments(T "" "NAME;TIMEOUT;MAIN" "SOURCES;LIBS;LABELS;ENV" ${ARGN})
  # MAIN: a source with its own main() (GUI tests); otherwise GoogleTest's.
  add_executable(${T_NAME} ${T_SOURCES} ${T_MAIN})
  if(T_MAIN)
    target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest)
  else()
    target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} GTest::gtest GTest::gtest_main)
  endif()
  depthlab_target_defaults(${T_NAME})
  depthlab_test_optimisation(${T_NAME})
  # Tests define no QObjects of their own: no moc pass (saves compile time on 2 cores).
  set_target_properties(${T_NAME} PROPERTIES AUTOMOC OFF)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 600)
  endif()
  include(GoogleTest)
  gtest_discover_tests(${T_NAME}
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
    DISCOVERY_TIMEOUT 60
    PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}" ENVIRONMENT "${T_ENV}")
endfunction()
