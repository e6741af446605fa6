# The layers of DESIGN.md as link targets: base <- topology, shard <- transport, client <- source;
# collectives <- runtime.
#
# ingot_layer(NAME [BELOW lower...] [LIBS deps...]) makes the OBJECT library ingot_<NAME> from
# every .c under the calling folder. Its sources see the public headers, their own folder and the
# folders of the layers named in BELOW, nothing else: each layer's include root is a directory of
# the build tree holding one link, <NAME> -> the layer's folder, so "shard/tar.h" resolves inside
# shard/ and in the layers above it, and fails to compile in base/ or topology/.
#
# Compiling is half the rule: a symbol from an upper layer would still resolve silently once the
# objects are merged into libingot. So each layer also links a throwaway shared object from its
# own and its lower layers' objects with -Wl,--no-undefined (INGOT_LAYER_LINK_CHECK, on unless a
# sanitizer or the fuzzer is on: their runtimes leave symbols to the executable).
set_property(GLOBAL PROPERTY INGOT_LAYER_TARGETS "") # lowest first

function(ingot_layer name)
  cmake_parse_arguments(L "" "" "BELOW;LIBS" ${ARGN})
  set(root ${PROJECT_BINARY_DIR}/layers/${name})
  file(MAKE_DIRECTORY ${root})
  file(CREATE_LINK ${CMAKE_CURRENT_SOURCE_DIR} ${root}/${name} SYMBOLIC)
  file(GLOB_RECURSE srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.c)
  if(NOT srcs) # a layer not built yet holds only its README
    return()
  endif()
  set(lib ingot_${name})
  add_library(${lib} OBJECT ${srcs})
  target_include_directories(${lib} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<BUILD_INTERFACE:${root}>)
  target_compile_definitions(${lib} PRIVATE INGOT_BUILDING_LIBRARY _GNU_SOURCE
    $<$<BOOL:${INGOT_FAULT_INJECTION}>:INGOT_FAULT_INJECTION=1>)
  set(below_objs "")
  set(all_libs ${L_LIBS})
  foreach(b ${L_BELOW})
    if(TARGET ingot_${b})
      target_link_libraries(${lib} PUBLIC ingot_${b})
      list(APPEND below_objs $<TARGET_OBJECTS:ingot_${b}>)
      get_property(b_libs GLOBAL PROPERTY INGOT_LAYER_LIBS_${b})
      list(APPEND all_libs ${b_libs})
    else() # README-only layer below: nothing to link, but its headers do not exist either
      target_include_directories(${lib} PUBLIC $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/layers/${b}>)
    endif()
  endforeach()
  target_link_libraries(${lib} PUBLIC ${L_LIBS})
  set_property(GLOBAL PROPERTY INGOT_LAYER_LIBS_${name} ${L_LIBS})
  set_property(GLOBAL APPEND PROPERTY INGOT_LAYER_TARGETS ${lib})

  if(INGOT_LAYER_LINK_CHECK)
    add_library(${lib}_link_check SHARED ${below_objs} $<TARGET_OBJECTS:${lib}>)
    target_link_libraries(${lib}_link_check PRIVATE ${all_libs})
    target_link_options(${lib}_link_check PRIVATE -Wl,--no-undefined)
    set_target_properties(${lib}_link_check PROPERTIES LIBRARY_OUTPUT_DIRECTORY
                          ${PROJECT_BINARY_DIR}/layers/link-check)
  endif()
endfunction()
