# Layering and ABI: includes point down (file:line otherwise), globals start with ingot_, and
# a test of both checkers on deliberate violations. The link half of the rule is in the build:
# each layer links alone with -Wl,--no-undefined (cmake/layers.cmake).
find_package(Python3 COMPONENTS Interpreter)
if(Python3_FOUND)
  ingot_add_test(NAME layers.includes LABELS layers
                 COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/layers/check_includes.py
                         ${PROJECT_SOURCE_DIR})
  ingot_add_test(NAME layers.catch LABELS layers
                 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/layers/catch_test.sh ${PROJECT_SOURCE_DIR}
                         ${CMAKE_CURRENT_BINARY_DIR} ${PROJECT_BINARY_DIR} ${CMAKE_C_COMPILER})
endif()
ingot_add_test(NAME layers.symbols LABELS layers
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/layers/check_symbols.sh
                       $<TARGET_FILE:ingot_static> $<TARGET_FILE:ingot>)
