# Runs at build time (cmake -P): writes OUT from TEMPLATE with the git commit of
# SOURCE_DIR ("-dirty" when tracked files differ from it; "unknown" outside a git
# checkout, or ENVGATE_GIT_COMMIT from the environment when set, e.g. for a source
# tarball). configure_file only rewrites OUT when a value changed, so an unchanged
# commit rebuilds nothing.
if(DEFINED ENV{ENVGATE_GIT_COMMIT})
  set(ENVGATE_GIT_COMMIT "$ENV{ENVGATE_GIT_COMMIT}")
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse HEAD
    OUTPUT_VARIABLE ENVGATE_GIT_COMMIT RESULT_VARIABLE rc
    OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(NOT rc EQUAL 0)
    set(ENVGATE_GIT_COMMIT unknown)
  else()
    execute_process(COMMAND git -C "${SOURCE_DIR}" status --porcelain --untracked-files=no
      OUTPUT_VARIABLE changes ERROR_QUIET)
    if(NOT changes STREQUAL "")
      string(APPEND ENVGATE_GIT_COMMIT "-dirty")
    endif()
  endif()
endif()
configure_file("${TEMPLATE}" "${OUT}" @ONLY)
