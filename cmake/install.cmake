# Installation: the npuforge CLI, the libraries (static) with their headers, a CMake package
# (find_package(npuforge) -> npuforge::<folder> targets) and a pkg-config file (npuforge.pc).
# Included from the top-level CMakeLists after every folder was added; it only adds rules for
# targets that exist, so partial builds (NPUFORGE_DIRS) still configure.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(NPUFORGE_INSTALL_INCLUDE ${CMAKE_INSTALL_INCLUDEDIR}/npuforge)
set(NPUFORGE_INSTALL_CONFIGS ${CMAKE_INSTALL_DATADIR}/npuforge/configs)
set(NPUFORGE_INSTALL_CMAKE ${CMAKE_INSTALL_LIBDIR}/cmake/npuforge)

# SystemC as npuforge uses it, under a name of ours (consumers link npuforge::systemc).
add_library(npuforge_systemc INTERFACE)
target_link_libraries(npuforge_systemc INTERFACE PkgConfig::SystemC)
set_target_properties(npuforge_systemc PROPERTIES EXPORT_NAME systemc)

# Link order for pkg-config (static libraries: users before what they use).
set(npuforge_pc_order regress gen sim_verify sim_sc rtl_sc sim planner allocator bundle isa model util)
set(exported npuforge_systemc)
set(NPUFORGE_PC_LIBS "")
set(NPUFORGE_EXPORT_MODEL OFF)
foreach(short ${npuforge_pc_order})
  set(t npuforge_${short})
  if(NOT TARGET ${t})
    continue()
  endif()
  list(APPEND exported ${t})
  string(APPEND NPUFORGE_PC_LIBS " -l${t}")
  if(short STREQUAL "model")
    set(NPUFORGE_EXPORT_MODEL ON)
    string(APPEND NPUFORGE_PC_LIBS " -lonnx -lonnx_proto -lprotobuf")
  endif()
  # Include directories in the source or build tree hold at build time only; installed
  # consumers get include/npuforge (headers keep their folder: "sim/checkers.h").
  get_target_property(incs ${t} INTERFACE_INCLUDE_DIRECTORIES)
  set(fixed "")
  foreach(d IN LISTS incs)
    if(d MATCHES "^\\$<")
      list(APPEND fixed "${d}")
    elseif(d)
      list(APPEND fixed "$<BUILD_INTERFACE:${d}>")
    endif()
  endforeach()
  list(APPEND fixed "$<INSTALL_INTERFACE:${NPUFORGE_INSTALL_INCLUDE}>")
  set_target_properties(${t} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${fixed}" EXPORT_NAME ${short})
  # Verilator's own SystemC target is not exported: the same library as PkgConfig::SystemC.
  get_target_property(links ${t} INTERFACE_LINK_LIBRARIES)
  if(links)
    list(TRANSFORM links REPLACE "^Verilator::systemc$" "PkgConfig::SystemC")
    set_target_properties(${t} PROPERTIES INTERFACE_LINK_LIBRARIES "${links}")
  endif()
  if(NPUFORGE_SANITIZE)  # instrumented archives need the runtime in whatever links them
    set_property(TARGET ${t} APPEND PROPERTY INTERFACE_LINK_OPTIONS
                 "$<INSTALL_INTERFACE:-fsanitize=address,undefined>")
  endif()
endforeach()
set(NPUFORGE_PC_SANITIZE "")
if(NPUFORGE_SANITIZE)
  set(NPUFORGE_PC_SANITIZE "-fsanitize=address,undefined")
endif()

install(TARGETS ${exported} EXPORT npuforgeTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
if(TARGET npuforge)
  install(TARGETS npuforge RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()
foreach(dir util isa bundle allocator planner model gen sim regress)
  if(TARGET npuforge_${dir})
    install(DIRECTORY ${NPUFORGE_SOURCE_DIR}/${dir}/ DESTINATION ${NPUFORGE_INSTALL_INCLUDE}/${dir}
            FILES_MATCHING PATTERN "*.h")
  endif()
endforeach()
install(DIRECTORY ${NPUFORGE_SOURCE_DIR}/configs/ DESTINATION ${NPUFORGE_INSTALL_CONFIGS})
install(EXPORT npuforgeTargets NAMESPACE npuforge:: DESTINATION ${NPUFORGE_INSTALL_CMAKE})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/npuforgeConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/npuforgeConfig.cmake
                              INSTALL_DESTINATION ${NPUFORGE_INSTALL_CMAKE}
                              PATH_VARS NPUFORGE_INSTALL_CONFIGS)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/npuforgeConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/npuforgeConfig.cmake ${CMAKE_BINARY_DIR}/npuforgeConfigVersion.cmake
        DESTINATION ${NPUFORGE_INSTALL_CMAKE})
configure_file(${CMAKE_CURRENT_LIST_DIR}/npuforge.pc.in ${CMAKE_BINARY_DIR}/npuforge.pc @ONLY)
install(FILES ${CMAKE_BINARY_DIR}/npuforge.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
