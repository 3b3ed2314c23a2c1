// See kernel_source_begin.h.
#undef return
