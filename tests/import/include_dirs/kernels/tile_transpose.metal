// The instantiations only, MLX style: the kernel lives in a header under an include root
// (../root, given as `include_dirs:` in the spec or -I on the command line).
#include "tiles/ops/tile_transpose.h"

template [[host_name("tile_transpose_float32")]] [[kernel]] decltype(tile_transpose<float>) tile_transpose<float>;
template [[host_name("tile_transpose_float16")]] [[kernel]] decltype(tile_transpose<half>) tile_transpose<half>;
