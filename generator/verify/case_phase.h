#pragma once
// What a case's child is doing, kept by the case run (case_runner.cpp) and read by the child's
// signal handlers and exit hooks (case_isolation.cpp) for their reports: spec code runs while the
// module loads (file-scope constructors), in the kernel and in the reference.
namespace mtlgen::verify {

const char* case_phase();  // "in the kernel", ...; async-signal-safe
void enter_module_load();  // before the simulator module (spec code) is loaded

}  // namespace mtlgen::verify
