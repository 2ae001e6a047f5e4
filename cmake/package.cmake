# The .deb (CPack's DEB generator), from the same install rules as
# `cmake --install` (doc/install.md, "The .deb"). scripts/package builds it.

# The package's version: the project's, and past it the git description
# when the tree is not exactly a tag of that version:
# 0.1.0+git57.gbb764d2 (57 commits, commit bb764d2; .dirty with changes not
# committed). The count keeps two builds of one project version in order
# for dpkg; "+" sorts them after the plain 0.1.0.
set(BATON_PACKAGE_VERSION ${PROJECT_VERSION})
find_package(Git QUIET)
if(GIT_FOUND AND EXISTS ${CMAKE_SOURCE_DIR}/.git)
  execute_process(
    COMMAND ${GIT_EXECUTABLE} describe --tags --exact-match --match
            "v${PROJECT_VERSION}"
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    RESULT_VARIABLE on_tag OUTPUT_QUIET ERROR_QUIET)
  execute_process(
    COMMAND ${GIT_EXECUTABLE} rev-list --count HEAD
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    OUTPUT_VARIABLE commits OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(
    COMMAND ${GIT_EXECUTABLE} describe --always --dirty --abbrev=7
    WORKING_DIRECTORY ${CMAKE_SOURCE_DIR}
    OUTPUT_VARIABLE described OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT on_tag EQUAL 0 AND commits AND described)
    # The last part of a description is the commit: -g<hash> after a tag,
    # the bare hash without one (the g is not a hex digit, so not matched).
    string(REGEX MATCH "([0-9a-f]+)(-dirty)?$" _ "${described}")
    set(hash ${CMAKE_MATCH_1})
    set(dirty ${CMAKE_MATCH_2})
    set(BATON_PACKAGE_VERSION "${PROJECT_VERSION}+git${commits}.g${hash}")
    if(dirty)
      string(APPEND BATON_PACKAGE_VERSION ".dirty")
    endif()
  endif()
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME baton)
set(CPACK_PACKAGE_VERSION ${BATON_PACKAGE_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "background tasks for AI coding agents and people")
set(CPACK_PACKAGE_DESCRIPTION
    "baton starts shell commands and agent CLIs in the background, waits for \
whichever ends first, reads their output and kills what stopped mattering. \
Tasks outlive its daemon, batond. It is reached as a command line and as an \
MCP server (baton mcp).")
set(CPACK_PACKAGE_CONTACT "baton maintainers <baton@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Without its debug information (a RelWithDebInfo baton is ~190 MB, ~4 MB
# stripped), as Debian's own packages ship.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Depends: what dpkg-shlibdeps finds the binary needs (glibc only: the rest
# is linked statically), and nothing else.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# After an upgrade, the post-install replaces each running batond of the
# old file with the new one (packaging/deb/postinst; doc/install.md).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_SOURCE_DIR}/packaging/deb/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
include(CPack)
