# Run at build time (cmake -P) by the tosa-lsp-version target: writes OUT
# from IN with TOSA_LSP_GIT_REVISION set to the source tree's commit (plus
# "-dirty" when tracked files differ from it). configure_file rewrites OUT
# only when its text changes, so an unchanged revision rebuilds nothing.
#   -DSRC=source dir -DIN=Version.cpp.in -DOUT=Version.cpp
#   -DREVISION=fixed revision (TOSA_LSP_GIT_REVISION at configure time; a
#    source tarball has no .git)
if(REVISION)
  set(TOSA_LSP_GIT_REVISION "${REVISION}")
else()
  set(TOSA_LSP_GIT_REVISION "unknown")
  find_program(GIT git)
  if(GIT AND EXISTS "${SRC}/.git")
    execute_process(COMMAND "${GIT}" -C "${SRC}" rev-parse --short=12 HEAD
      OUTPUT_VARIABLE rev OUTPUT_STRIP_TRAILING_WHITESPACE
      RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND rev)
      set(TOSA_LSP_GIT_REVISION "${rev}")
      # --no-optional-locks: never take .git/index.lock (others may be
      # committing in the same tree while this builds).
      execute_process(COMMAND "${GIT}" --no-optional-locks -C "${SRC}"
          status --porcelain --untracked-files=no
        OUTPUT_VARIABLE changes RESULT_VARIABLE rc ERROR_QUIET)
      if(rc EQUAL 0 AND NOT changes STREQUAL "")
        string(APPEND TOSA_LSP_GIT_REVISION "-dirty")
      endif()
    endif()
  endif()
endif()
configure_file("${IN}" "${OUT}" @ONLY)
