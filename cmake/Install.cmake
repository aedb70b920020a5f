# `cmake --install` and the Debian package (CPack DEB), included from the
# top-level CMakeLists.txt. Layout under the prefix (/usr for the .deb,
# /usr/local by default):
#   bin/tosa-lsp
#   share/vim/vimfiles/pack/tosa-lsp/start/tosa-lsp/  editors/vim, where
#       Debian's Vim finds it (/usr/share/vim/vimfiles is on its 'packpath')
#   share/nvim/site/pack/tosa-lsp/start/tosa-lsp/     the same plugin, where
#       Neovim finds it ($XDG_DATA_DIRS/nvim/site; /usr/local/share and
#       /usr/share by default)
#   share/tosa-lsp/tosa-lsp-VERSION.vsix              the VS Code extension,
#       if editors/vscode/build.sh (scripts/setup.sh) has built it
#   share/doc/tosa-lsp/{README.md,editors.md,vim.md,vscode.md}
#   share/man/man1/tosa-lsp.1.gz
include(GNUInstallDirs)

# The installed binary finds libMLIR.so.22.1 (not on the loader's default
# path) through a RUNPATH to the system's LLVM lib directory, never to the
# build tree (CMake's build RPATH is replaced at install).
set_target_properties(tosa-lsp PROPERTIES
  INSTALL_RPATH "${LLVM_LIBRARY_DIR}"
  INSTALL_RPATH_USE_LINK_PATH OFF)
install(TARGETS tosa-lsp RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

set(TOSA_LSP_VIM_DIR "${CMAKE_INSTALL_DATADIR}/vim/vimfiles" CACHE STRING
  "Where the Vim plugin goes (pack/tosa-lsp/start/tosa-lsp below it); Debian's Vim has /usr/share/vim/vimfiles on 'packpath'")
set(TOSA_LSP_NVIM_DIR "${CMAKE_INSTALL_DATADIR}/nvim/site" CACHE STRING
  "Where the Neovim plugin goes (pack/tosa-lsp/start/tosa-lsp below it)")
foreach(dir ${TOSA_LSP_VIM_DIR} ${TOSA_LSP_NVIM_DIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/editors/vim/
    DESTINATION ${dir}/pack/tosa-lsp/start/tosa-lsp
    PATTERN "README.md" EXCLUDE)
endforeach()

# The .vsix is built after the C++ build (scripts/setup.sh): installed when
# present at install time.
file(READ ${PROJECT_SOURCE_DIR}/editors/vscode/package.json vscode_package)
string(JSON TOSA_LSP_VSIX_VERSION GET "${vscode_package}" version)
set(TOSA_LSP_VSIX
  ${PROJECT_SOURCE_DIR}/editors/vscode/tosa-lsp-${TOSA_LSP_VSIX_VERSION}.vsix)
install(FILES ${TOSA_LSP_VSIX} DESTINATION ${CMAKE_INSTALL_DATADIR}/tosa-lsp
  OPTIONAL)

install(FILES ${PROJECT_SOURCE_DIR}/README.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(FILES ${PROJECT_SOURCE_DIR}/editors/README.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME editors.md)
install(FILES ${PROJECT_SOURCE_DIR}/editors/vim/README.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME vim.md)
install(FILES ${PROJECT_SOURCE_DIR}/editors/vscode/README.md
  DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME vscode.md)

# The man page, compressed as Debian installs them (gzip -n: reproducible).
find_program(GZIP_EXECUTABLE gzip)
if(GZIP_EXECUTABLE)
  set(man_gz ${CMAKE_CURRENT_BINARY_DIR}/tosa-lsp.1.gz)
  add_custom_command(OUTPUT ${man_gz}
    COMMAND ${GZIP_EXECUTABLE} -9nc ${PROJECT_SOURCE_DIR}/docs/tosa-lsp.1 > ${man_gz}
    DEPENDS ${PROJECT_SOURCE_DIR}/docs/tosa-lsp.1
    COMMENT "gzip tosa-lsp.1")
  add_custom_target(tosa-lsp-man ALL DEPENDS ${man_gz})
  install(FILES ${man_gz} DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  install(FILES ${PROJECT_SOURCE_DIR}/docs/tosa-lsp.1
    DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
endif()

# --- Debian package: cpack -G DEB (in the build directory) -----------------
# Depends: the package (and version, at least the one built against) of
# each shared library the binary links -- libmimalloc, libstdc++, libgcc_s,
# libc, and libMLIR (libmlir-22) and libLLVM (libllvm22), or with
# TOSA_LSP_STATIC_LLVM zlib and zstd instead -- and of MLIR's runtime
# library, which `run` loads at run time and `compile --emit=shared` links
# (libmlir-22, which needs both). Read here from dpkg's database
# (dpkg-shlibdeps took 36 s on libLLVM/libMLIR and dropped libllvm22);
# test/install/deb.sh checks that every library ldd finds is covered.
# `compile --emit=shared` also calls `cc`: recommended (gcc, and libc6-dev
# for crti.o and libm), and the error names them when missing.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tosa-lsp)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "TOSA/MLIR 22 checker and language server")
set(CPACK_PACKAGE_DESCRIPTION
  "Reports every parse and verifier error of TOSA .mlir files, explains\n\
Broadcastable shape inference, and serves them over LSP (diagnostics,\n\
hover, inlay hints, quick fixes, lowering preview, native compilation).\n\
Includes the Vim 9 / Neovim plugin and the VS Code extension (.vsix).")
set(CPACK_PACKAGE_CONTACT "tosa-lsp maintainers <tosa-lsp@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)

set(TOSA_LSP_DEB_DEPENDS "" CACHE STRING
  "Depends of the .deb (default: the packages of the linked libraries, from dpkg -S)")
set(deb_depends "${TOSA_LSP_DEB_DEPENDS}")
if(NOT deb_depends AND DPKG_QUERY)
  set(libs
    "${LLVM_LIBRARY_DIR}/libMLIR.so" "${LLVM_LIBRARY_DIR}/libLLVM.so"
    "${TOSA_LSP_MLIR_RUNTIME}")
  if(TOSA_LSP_MIMALLOC AND MIMALLOC_LIBRARY)
    list(APPEND libs "${MIMALLOC_LIBRARY}")
  endif()
  set(system_libs libstdc++.so.6 libgcc_s.so.1 libm.so.6 libc.so.6)
  if(TOSA_LSP_STATIC_LLVM)
    # What LLVM's static archives need (libLLVM.so brought them before).
    list(APPEND system_libs libz.so.1 libzstd.so.1)
  endif()
  foreach(lib ${system_libs})
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${lib}
      OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(IS_ABSOLUTE "${path}")
      list(APPEND libs "${path}")
    endif()
  endforeach()
  set(pkgs "")
  foreach(lib ${libs})
    get_filename_component(real "${lib}" REALPATH)
    execute_process(COMMAND ${DPKG_QUERY} -S "${real}"
      OUTPUT_VARIABLE owner RESULT_VARIABLE rc ERROR_QUIET)
    # Merged /usr: dpkg knows libc as /lib/x86_64-linux-gnu/libc.so.6.
    if(NOT rc EQUAL 0 AND real MATCHES "^/usr(/lib.*)")
      execute_process(COMMAND ${DPKG_QUERY} -S "${CMAKE_MATCH_1}"
        OUTPUT_VARIABLE owner RESULT_VARIABLE rc ERROR_QUIET)
    endif()
    if(NOT rc EQUAL 0 OR NOT owner MATCHES "^([^:, ]+)")
      message(WARNING "tosa-lsp .deb: no Debian package owns ${real}; not in Depends")
      continue()
    endif()
    set(pkg "${CMAKE_MATCH_1}")
    if(pkg IN_LIST pkgs)
      continue()
    endif()
    list(APPEND pkgs "${pkg}")
    execute_process(COMMAND ${DPKG_QUERY} -W -f=\${Version} ${pkg}
      OUTPUT_VARIABLE ver RESULT_VARIABLE rc ERROR_QUIET)
    # The upstream part of the version built against (epoch kept).
    if(rc EQUAL 0 AND ver MATCHES "^(([0-9]+:)?[0-9][0-9.]*[0-9])")
      list(APPEND deb_depends "${pkg} (>= ${CMAKE_MATCH_1})")
    else()
      list(APPEND deb_depends "${pkg}")
    endif()
  endforeach()
  list(JOIN deb_depends ", " deb_depends)
endif()
if(deb_depends)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "${deb_depends}")
else()
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
endif()
# cc links `compile --emit=shared`; libomp5 runs `--threads` code.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "gcc, libc6-dev, libomp5")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "vim | neovim, emacs-nox, elpa-eglot")
# Only the install rules above go in: nothing from the tests or the build tree.
include(CPack)
