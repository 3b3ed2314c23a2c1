// Included from tile_transpose.h through the include root, as MLX's headers include each other
// ("mlx/backend/metal/kernels/..."): found only with the root on the include path.
#pragma once

constant constexpr int TILE = 16;
