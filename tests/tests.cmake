# Torch-using core tests, one executable per folder, sharing depthlab_core's precompiled header.
foreach(area kernels model train experiment data io probes analysis distributed hf bench watch tasks)
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/core/${area}/*.cpp)
  if(sources)
    depthlab_add_gtest(NAME test_core_${area} SOURCES ${sources}
      LIBS depthlab_test_support LABELS core)
    target_precompile_headers(test_core_${area} REUSE_FROM depthlab_core)
    add_dependencies(test_core_${area} depthlab-cli)
  endif()
endforeach()
# The command line end to end: bad input answered clearly (runs the real depthlab-cli).
file(GLOB DEPTHLAB_TEST_CLI CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/app/cli/*.cpp)
depthlab_add_gtest(NAME test_cli SOURCES ${DEPTHLAB_TEST_CLI}
  LIBS depthlab_test_support depthlab_cli_commands LABELS cli)
add_dependencies(test_cli depthlab-cli)
