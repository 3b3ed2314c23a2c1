// Apple SDK header that SPIRV-Cross output includes; its simd vector types are the shim's MSL vectors.
#pragma once
