# corrtrack.1 from the CLI's own help (help2man): `corrtrack --help` for NAME, SYNOPSIS and
# OPTIONS, then every subcommand's --help (found in the Subcommands: list) as it prints it.
# Run (by the build, cmake/package.cmake): cmake -DCLI=<binary> -DHELP2MAN=<help2man>
#   -DVERSION=<version> -DOUT=<corrtrack.1> -P cmake/man_page.cmake
cmake_minimum_required(VERSION 3.20)
# Run as "corrtrack" through PATH, so that the usage lines name the command, not the build path.
get_filename_component(out_dir "${OUT}" DIRECTORY)
set(bin_dir "${out_dir}/man_bin")
file(REMOVE_RECURSE "${bin_dir}")
file(MAKE_DIRECTORY "${bin_dir}")
file(CREATE_LINK "${CLI}" "${bin_dir}/corrtrack" SYMBOLIC)
set(ENV{PATH} "${bin_dir}:$ENV{PATH}")
unset(ENV{DISPLAY})
unset(ENV{WAYLAND_DISPLAY})

execute_process(COMMAND corrtrack --help OUTPUT_VARIABLE top RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "corrtrack --help failed (${rc})")
endif()
string(REGEX MATCH "\nSubcommands:\n(  [^\n]*\n)+" list "${top}")
string(REGEX MATCHALL "\n  [a-z]+ " commands "${list}")
if(NOT commands)
  message(FATAL_ERROR "no subcommands in corrtrack --help:\n${top}")
endif()

set(inc "[COMMANDS]\nEach command's own options, as `corrtrack COMMAND --help` prints them.\n")
foreach(c IN LISTS commands)
  string(STRIP "${c}" c)
  execute_process(COMMAND corrtrack ${c} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "corrtrack ${c} --help failed (${rc})")
  endif()
  # roff: backslashes escaped, no line may start with a control character.
  string(REPLACE "\\" "\\e" help "${help}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
  string(APPEND inc ".SS \"corrtrack ${c}\"\n.nf\n${help}.fi\n")
endforeach()
string(APPEND inc "[FILES]\n.TP\n.I ../share/corrtrack/\n"
  "beside the binary (/usr/share/corrtrack in the Debian package): the sample clip sample.mp4, "
  "its default box sample.box and its licence; `corrtrack track` and `corrtrack gui` without an "
  "input use it.\n")
file(WRITE "${out_dir}/corrtrack.h2m" "${inc}")

execute_process(COMMAND "${HELP2MAN}" --no-info --no-discard-stderr "--version-string=${VERSION}"
    "--name=real-time object tracking in video by normalized cross-correlation"
    "--include=${out_dir}/corrtrack.h2m" --output=${OUT} corrtrack
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed (${rc}): ${err}")
endif()
