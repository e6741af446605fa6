# Lint (label lint): formatting (tests/lint/format.sh, clang-format-14 and .clang-format) and static
# analysis (tests/lint/analyze.sh, clang-tidy-14 and .clang-tidy) of the sources. Each skips with
# exit 77 when its tool is not installed.
ingot_add_test(NAME lint.format LABELS lint
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/lint/format.sh --check)

# The analysis reads the compile commands of the library's layers and of the apps, whatever
# CMAKE_EXPORT_COMPILE_COMMANDS says.
get_property(_lint_targets GLOBAL PROPERTY INGOT_LAYER_TARGETS)
get_property(_lint_apps DIRECTORY ${PROJECT_SOURCE_DIR}/apps PROPERTY BUILDSYSTEM_TARGETS)
if(TARGET ingot_python)
  list(APPEND _lint_apps ingot_python)
endif()
set_target_properties(${_lint_targets} ${_lint_apps} PROPERTIES EXPORT_COMPILE_COMMANDS ON)
ingot_add_test(NAME lint.analyze LABELS lint
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/lint/analyze.sh ${PROJECT_BINARY_DIR})
set_tests_properties(lint.analyze PROPERTIES PROCESSORS 2) # clang-tidy -j 2
