// Links the bytes of the metallib at MTLGEN_METALLIB_PATH (a string literal the build defines,
// an absolute path) into the binary with the assembler's .incbin: no generated source, no tool
// beyond the compiler. The build must recompile this file when the metallib changes.
#include "mtlgen_embedded_metallib.h"

#include <cstdint>

#ifndef MTLGEN_METALLIB_PATH
#error "define MTLGEN_METALLIB_PATH as the quoted absolute path of the .metallib to embed"
#endif

#if defined(__APPLE__)
#define MTLGEN_RODATA ".section __TEXT,__const"
#define MTLGEN_SYMBOL(name) "_" #name
#else
#define MTLGEN_RODATA ".section .rodata"
#define MTLGEN_SYMBOL(name) #name
#endif

__asm__(MTLGEN_RODATA "\n"
        ".balign 16\n"
        ".globl " MTLGEN_SYMBOL(mtlgen_metallib_bytes) "\n"
        MTLGEN_SYMBOL(mtlgen_metallib_bytes) ":\n"
        ".incbin \"" MTLGEN_METALLIB_PATH "\"\n"
        "mtlgen_metallib_bytes_end:\n"
        ".balign 8\n"
        ".globl " MTLGEN_SYMBOL(mtlgen_metallib_length) "\n"
        MTLGEN_SYMBOL(mtlgen_metallib_length) ":\n"
        ".quad mtlgen_metallib_bytes_end - " MTLGEN_SYMBOL(mtlgen_metallib_bytes) "\n"
        ".text\n");

extern "C" const unsigned char mtlgen_metallib_bytes[];
extern "C" const std::uint64_t mtlgen_metallib_length;

namespace mtlgen {

const unsigned char* embedded_metallib() { return mtlgen_metallib_bytes; }
std::size_t embedded_metallib_size() { return static_cast<std::size_t>(mtlgen_metallib_length); }

}  // namespace mtlgen
