# cmake -DIN=<file.metal> -DOUT=<copy> -P prepare_msl.cmake
# The build-time twin of mtlsim::prepare_msl_for_sim (runtime/mtlsim/msl_source.h):
# respells the [[threadgroup(n)]] attribute as [[mtlsim_tgrp(n)]], leaving all else intact.
file(READ "${IN}" text)
string(REGEX REPLACE "\\[\\[([ \t]*)threadgroup([ \t]*)\\(" "[[\\1mtlsim_tgrp\\2(" text "${text}")
file(WRITE "${OUT}.tmp" "${text}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
