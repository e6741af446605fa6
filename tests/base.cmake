# Build-system and app tests of the foundation.
ingot_add_test(NAME install.consumer LABELS unit
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/consumer/run.sh ${PROJECT_BINARY_DIR}
                       ${CMAKE_CURRENT_SOURCE_DIR}/consumer)
# ingot-info starts MPI in-process (a singleton) to show the all-reduce backend: Open MPI's and
# the static CUDA runtime's allocations at exit are not leaks of ingot's.
ingot_add_test(NAME app.ingot_info LABELS unit
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/apps/ingot_info.sh $<TARGET_FILE:ingot-info>
               ENV ASAN_OPTIONS=detect_leaks=0)
