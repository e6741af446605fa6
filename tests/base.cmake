# Build-system and app tests of the foundation.
ingot_add_test(NAME install.consumer LABELS unit
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/consumer/run.sh ${PROJECT_BINARY_DIR}
                       ${CMAKE_CURRENT_SOURCE_DIR}/consumer)
ingot_add_test(NAME app.ingot_info LABELS unit
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/apps/ingot_info.sh $<TARGET_FILE:ingot-info>)
