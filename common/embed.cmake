# embed.cmake: turns a file into a C source defining a NUL-terminated char
# array NAME and its size in bytes, NAME_size (without the NUL), so the Redis
# Functions library, the warm zygote's Python and its loop's shared object
# ship inside the libraries.
# IN may name several files, separated by "|": they are concatenated in
# that order (the Redis Functions library is one file per concern).
#   cmake -DIN=harness.py -DOUT=harness_py.c -DNAME=sq__harness_py -P embed.cmake
string(REPLACE "|" ";" files "${IN}")
set(hex "")
foreach(f IN LISTS files)
  file(READ "${f}" part HEX)
  string(APPEND hex "${part}")
endforeach()
string(LENGTH "${hex}" size)
math(EXPR size "${size} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}" "/* Generated from ${IN} by common/embed.cmake; do not edit. */\n"
  "extern const char ${NAME}[];\nconst char ${NAME}[] = {\n${bytes}0x00};\n"
  "extern const unsigned long ${NAME}_size;\nconst unsigned long ${NAME}_size = ${size};\n")
