# The build's own checks (tests/build/): the install (a throwaway consumer built with
# find_package(ingot) and with pkg-config against an install prefix; label install, which the
# sanitizer tiers leave out: an uninstrumented consumer cannot link an instrumented library);
# the layers (includes point down, named file:line; globals start with ingot_; one place decides
# whether a string is a URL, base/location.c; a test of the checkers and of the build's refusal
# on deliberate violations: the link half of the rule is in the build itself, each layer linking
# alone with -Wl,--no-undefined); lint (clang-format-14,
# clang-tidy-14; each skips with 77 when its tool is missing).
set(_bd ${INGOT_TESTS}/build)
ingot_add_test(NAME build.install.consumer LABELS unit install
               COMMAND ${_bd}/install/run.sh ${PROJECT_BINARY_DIR} ${_bd}/install)
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
  ingot_add_test(NAME build.layers.includes LABELS layers
                 COMMAND ${Python3_EXECUTABLE} ${_bd}/layers/check_includes.py ${PROJECT_SOURCE_DIR})
  ingot_add_test(NAME build.layers.urls LABELS layers
                 COMMAND ${Python3_EXECUTABLE} ${_bd}/layers/check_urls.py ${PROJECT_SOURCE_DIR})
  ingot_add_test(NAME build.layers.catch LABELS layers
                 COMMAND ${_bd}/layers/catch_test.sh ${PROJECT_SOURCE_DIR}
                         ${CMAKE_CURRENT_BINARY_DIR} ${PROJECT_BINARY_DIR} ${CMAKE_C_COMPILER})
endif()
ingot_add_test(NAME build.layers.symbols LABELS layers
               COMMAND ${_bd}/layers/check_symbols.sh $<TARGET_FILE:ingot_static> $<TARGET_FILE:ingot>)
ingot_add_test(NAME build.lint.format LABELS lint COMMAND ${_bd}/lint/format.sh --check)
# The analysis reads the compile commands of the library's layers and of the apps, whatever
# CMAKE_EXPORT_COMPILE_COMMANDS says.
get_property(_lint_targets GLOBAL PROPERTY INGOT_LAYER_TARGETS)
get_property(_lint_apps DIRECTORY ${PROJECT_SOURCE_DIR}/apps PROPERTY BUILDSYSTEM_TARGETS)
if(TARGET ingot_python)
  list(APPEND _lint_apps ingot_python)
endif()
set_target_properties(${_lint_targets} ${_lint_apps} PROPERTIES EXPORT_COMPILE_COMMANDS ON)
ingot_add_test(NAME build.lint.analyze LABELS lint
               COMMAND ${_bd}/lint/analyze.sh ${PROJECT_BINARY_DIR})
# clang-tidy -j 2; started first (its COST), so the short tests of other labels run beside it
set_tests_properties(build.lint.analyze PROPERTIES PROCESSORS 2 COST 10000)
# The configuration tables a static link keeps: all of them (the build generates their list).
add_executable(static_tables ${_bd}/config/static_tables.c)
target_link_libraries(static_tables PRIVATE ingot_static)
get_property(_layer_folders GLOBAL PROPERTY INGOT_LAYER_FOLDERS)
ingot_add_test(NAME build.config.static_tables LABELS unit install
               COMMAND ${_bd}/config/static_tables.sh ${PROJECT_SOURCE_DIR} $<TARGET_FILE:static_tables>
                       ${_layer_folders})
# The loader's files call each other one way (planner, readers, workers over run.c): no loop.
if(Python3_FOUND)
  ingot_add_test(NAME build.layers.loader_calls LABELS layers
                 COMMAND ${Python3_EXECUTABLE} ${_bd}/layers/file_calls.py
                         ${PROJECT_BINARY_DIR}/runtime/CMakeFiles/ingot_runtime.dir/loader loader)
endif()
