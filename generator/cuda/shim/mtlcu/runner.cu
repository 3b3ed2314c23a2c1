// The host program of a kernel's CUDA module (`mtlgen verify --gpu cuda`, `mtlgen bench --gpu
// cuda`): runs one case described by <dir>/case.txt, which mtlgen writes, and answers in
// <dir>/result.txt. A case is a list of dispatches over one set of device buffers, run in order
// as one command buffer runs them: one for a kernel, one per step for a kernel family. Each
// dispatch is the glue's: its kernel's generated host description (mtlsim_host_dispatch of the
// simulator's bridge) gives the grid, threadgroup size, threadgroup memory and parameter struct.
// Inputs come as in_<i>.bin (mtlgen fills them as the simulator path does); the GPU's outputs go
// to gpu_<i>.bin and the reference's to ref_<i>.bin.
//
// case.txt, whitespace-separated:
//   reference <symbol> dims <n> <values...> scalars <n> <values...> constants <n> <values...>
//   buffers <n> then per buffer: <name> <element bytes> <elements> <in|out|inout|scratch>
//     (scratch: a family's intermediate, 0xFF-filled, not the reference's)
//   arguments <n> then per argument blob: <bytes>          (hand-written kernels; arg_<i>.bin)
//   dispatches <n> then per dispatch: <module> <variant> <entry point>
//     dims <n> <values...> scalars <n> <values...> constants <n> <values...>
//     slots <n> <buffer index per kernel buffer>
//   mode verify | mode bench <warm-up launches> <timed launches>
// result.txt, `key value` lines: device, peak_gbps; in bench mode median_us and min_us of a whole
// run, and for a family member_us_<i>, the median time of dispatch i within it.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <mtlsim/host_dispatch.h>

#include "mtlcu/launch.h"

using ReferenceFn = int (*)(void* const* slot, const uint64_t* elements, const uint64_t* dims, const double* scalars,
                            const double* constants, char* error, size_t error_size);
struct ReferenceEntry {
  const char* symbol;
  ReferenceFn fn;
};

// Defined by the generated modules.cu.
extern const mtlcu::Module* const mtlcu_modules[];
extern const int mtlcu_module_count;
extern const ReferenceEntry mtlcu_references[];
extern const int mtlcu_reference_count;

namespace {

struct BufferSpec {
  std::string name;
  size_t element_bytes = 0;
  size_t elements = 0;
  std::string role;  // in, out, inout, scratch
  size_t bytes() const { return element_bytes * elements; }
  bool written_back() const { return role == "out" || role == "inout"; }
};

// What a kernel's or a reference's call takes besides buffers.
struct Values {
  std::vector<uint64_t> dims;
  std::vector<double> scalars, constants;
};

struct DispatchSpec {
  int module = 0, variant = 0;
  std::string entry;
  Values values;
  std::vector<size_t> slots;  // the case's buffer bound to each of the kernel's buffers
};

struct Case {
  std::string reference, mode = "verify";
  Values values;
  std::vector<BufferSpec> buffers;
  std::vector<size_t> argument_bytes;
  std::vector<DispatchSpec> dispatches;
  int warmups = 0, repeats = 0;
};

std::string g_dir;
std::ofstream g_result;

[[noreturn]] void fail(const std::string& message) {
  g_result << "error " << message << "\n";
  g_result.close();
  std::exit(1);
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail(std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

template <class T>
std::vector<T> read_list(std::istream& in, const char* key) {
  std::string word;
  size_t n = 0;
  if (!(in >> word >> n) || word != key) fail(std::string("case.txt: expected `") + key + "`");
  std::vector<T> values(n);
  for (auto& v : values) in >> v;
  return values;
}

Values read_values(std::istream& in) {
  Values v;
  v.dims = read_list<uint64_t>(in, "dims");
  v.scalars = read_list<double>(in, "scalars");
  v.constants = read_list<double>(in, "constants");
  return v;
}

std::vector<DispatchSpec> read_dispatches(std::istream& in, size_t buffers) {
  std::string word;
  size_t n = 0;
  if (!(in >> word >> n) || word != "dispatches") fail("case.txt: expected `dispatches`");
  std::vector<DispatchSpec> list(n);
  for (auto& d : list) {
    in >> d.module >> d.variant >> d.entry;
    d.values = read_values(in);
    d.slots = read_list<size_t>(in, "slots");
    if (d.module < 0 || d.module >= mtlcu_module_count) fail("case.txt: a dispatch names no module of this program");
    for (size_t b : d.slots)
      if (b >= buffers) fail("case.txt: a dispatch binds a buffer the case does not have");
  }
  return list;
}

Case read_case() {
  std::ifstream in(g_dir + "/case.txt");
  Case c;
  std::string word;
  in >> word >> c.reference;
  c.values = read_values(in);
  size_t n = 0;
  in >> word >> n;
  c.buffers.resize(n);
  for (auto& b : c.buffers) in >> b.name >> b.element_bytes >> b.elements >> b.role;
  c.argument_bytes = read_list<size_t>(in, "arguments");
  c.dispatches = read_dispatches(in, c.buffers.size());
  in >> word >> c.mode;
  if (c.mode == "bench") in >> c.warmups >> c.repeats;
  if (!in) fail("case.txt is incomplete");
  return c;
}

std::vector<unsigned char> read_file(const std::string& name, size_t bytes) {
  std::vector<unsigned char> data(bytes);
  std::ifstream in(g_dir + "/" + name, std::ios::binary);
  if (!in.read(reinterpret_cast<char*>(data.data()), std::streamsize(bytes))) fail("cannot read " + name);
  return data;
}

void write_file(const std::string& name, const void* data, size_t bytes) {
  std::ofstream out(g_dir + "/" + name, std::ios::binary);
  out.write(static_cast<const char*>(data), std::streamsize(bytes));
}

// Device memory, filled: inputs from mtlgen's files, write-only outputs and a family's
// intermediates with 0xFF bytes (NaN, or the largest integer) so that elements no thread writes
// show in the comparison. Each allocation is exactly its bytes (Metal would round to 16):
// compute-sanitizer's memcheck then reports any access past the last element.
struct DeviceMemory {
  std::vector<void*> owned;
  ~DeviceMemory() {
    for (void* p : owned) cudaFree(p);
  }
  void* add(const void* data, size_t bytes) {
    void* p = nullptr;
    size_t size = std::max<size_t>(bytes, 1);
    check(cudaMalloc(&p, size), "cudaMalloc");
    owned.push_back(p);
    if (data) check(cudaMemcpy(p, data, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
    else check(cudaMemset(p, 0xFF, size), "cudaMemset");
    return p;
  }
};

const mtlcu::EntryPoint& find_entry(const mtlcu::Module& m, const std::string& name) {
  for (int i = 0; i < m.entry_point_count; ++i)
    if (name == m.entry_points[i].name) return m.entry_points[i];
  fail(std::string("the module of ") + m.kernel + " has no entry point `" + name + "`");
}

ReferenceFn find_reference(const std::string& symbol) {
  for (int i = 0; i < mtlcu_reference_count; ++i)
    if (symbol == mtlcu_references[i].symbol) return mtlcu_references[i].fn;
  fail("the module has no reference `" + symbol + "`");
}

// One dispatch, ready to launch: the glue's grid, and the slots its kernel binds.
struct Launch {
  const mtlcu::Module* module = nullptr;
  const mtlcu::EntryPoint* entry = nullptr;
  std::vector<double> constants;
  dim3 grid, block;
  size_t shared = 0;
  mtlcu::Slots slots{};

  cudaError_t run(bool set_constants) const {
    if (set_constants) module->set_function_constants(constants.data());
    return entry->launch(grid, block, shared, slots);
  }
};

// The glue's dispatch, and the threadgroup arrays' places in dynamic shared memory (16-byte
// aligned, as setThreadgroupMemoryLength rounds).
void plan_grid(const mtlsim::HostDispatch& host, Launch& l) {
  l.grid = dim3(unsigned(host.threadgroups[0]), unsigned(host.threadgroups[1]), unsigned(host.threadgroups[2]));
  l.block = dim3(unsigned(host.threads_per_threadgroup[0]), unsigned(host.threads_per_threadgroup[1]),
                 unsigned(host.threads_per_threadgroup[2]));
  for (int i = 0; i < host.threadgroup_arrays; ++i) {
    l.slots.threadgroup_offset[i] = unsigned(l.shared);
    l.shared += (host.threadgroup_memory_bytes[i] + 15) / 16 * 16;
  }
}

// Slots in binding-table order: the kernel's buffers, its parameter struct, then a hand-written
// kernel's argument blobs.
Launch plan_launch(const DispatchSpec& d, const std::vector<void*>& buffers, const std::vector<void*>& arguments,
                   DeviceMemory& memory) {
  Launch l;
  l.module = mtlcu_modules[d.module];
  mtlsim::HostDispatch host;
  if (l.module->host_dispatch(d.variant, d.values.dims.data(), d.values.scalars.data(), &host) != 0)
    fail(std::string("check_dims of ") + l.module->kernel + " rejected the case: " + host.error);
  if (d.entry != host.entry_point)
    fail("the host description names entry point `" + std::string(host.entry_point) + "`, mtlgen `" + d.entry + "`");
  l.entry = &find_entry(*l.module, d.entry);
  l.constants = d.values.constants;
  plan_grid(host, l);
  if (d.slots.size() + 1 + arguments.size() > size_t(mtlcu::kMaxSlots)) fail("too many slots for one dispatch");
  size_t at = 0;
  for (size_t b : d.slots) l.slots.slot[at++] = buffers[b];
  l.slots.slot[at++] = memory.add(host.params, host.params_size);
  for (void* a : arguments) l.slots.slot[at++] = a;
  return l;
}

// Function constants are set before each dispatch; a timed repeat of one dispatch keeps them
// (cudaMemcpyToSymbol would be timed too).
void run_all(const std::vector<Launch>& launches, bool set_constants = true) {
  for (const Launch& l : launches) check(l.run(set_constants), "launch");
}

// The reference sees every buffer but a family's intermediates, in the case's order.
void run_reference(const Case& c, const std::vector<std::vector<unsigned char>>& inputs) {
  std::vector<std::vector<unsigned char>> ref(c.buffers.size());
  std::vector<void*> slots;
  std::vector<uint64_t> elements;
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    if (c.buffers[i].role == "scratch") continue;
    ref[i] = inputs[i].empty() ? std::vector<unsigned char>(c.buffers[i].bytes()) : inputs[i];
    slots.push_back(ref[i].data());
    elements.push_back(c.buffers[i].elements);
  }
  char error[1024] = "";
  if (find_reference(c.reference)(slots.data(), elements.data(), c.values.dims.data(), c.values.scalars.data(),
                                  c.values.constants.data(), error, sizeof error) != 0)
    fail(std::string("the reference rejected this case: ") + error);
  for (size_t i = 0; i < c.buffers.size(); ++i)
    if (c.buffers[i].written_back()) write_file("ref_" + std::to_string(i) + ".bin", ref[i].data(), ref[i].size());
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Each timed run (every dispatch of the case) after a write that evicts L2, so the kernels read
// from DRAM as on a cold call. An event after each dispatch splits a family's run by member
// (member_us_<i>: its median); the events cost nothing the stream would not wait for anyway.
void bench(const Case& c, const std::vector<Launch>& launches) {
  int device = 0, l2 = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
  void* flush = nullptr;
  size_t flush_bytes = std::max<size_t>(size_t(l2) * 2, 1 << 20);
  check(cudaMalloc(&flush, flush_bytes), "cudaMalloc");
  for (int i = 0; i < c.warmups; ++i) run_all(launches);
  std::vector<cudaEvent_t> marks(launches.size() + 1);
  for (cudaEvent_t& e : marks) cudaEventCreate(&e);
  const bool family = launches.size() > 1;
  std::vector<float> us;
  std::vector<std::vector<float>> member_us(launches.size());
  for (int i = 0; i < c.repeats; ++i) {
    check(cudaMemsetAsync(flush, i & 0xFF, flush_bytes), "cudaMemsetAsync");
    cudaEventRecord(marks[0]);
    for (size_t d = 0; d < launches.size(); ++d) {
      check(launches[d].run(family), "launch");
      cudaEventRecord(marks[d + 1]);
    }
    check(cudaEventSynchronize(marks.back()), "the kernel");
    float ms = 0;
    cudaEventElapsedTime(&ms, marks.front(), marks.back());
    us.push_back(ms * 1000);
    for (size_t d = 0; d < launches.size(); ++d) {
      cudaEventElapsedTime(&ms, marks[d], marks[d + 1]);
      member_us[d].push_back(ms * 1000);
    }
  }
  for (cudaEvent_t e : marks) cudaEventDestroy(e);
  cudaFree(flush);
  if (us.empty()) return;
  g_result << "median_us " << median(us) << "\nmin_us " << *std::min_element(us.begin(), us.end()) << "\n";
  if (family)
    for (size_t d = 0; d < launches.size(); ++d) g_result << "member_us_" << d << " " << median(member_us[d]) << "\n";
}

void describe_device() {
  int device = 0, clock_khz = 0, bus_bits = 0;
  cudaDeviceProp prop{};
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device);
  cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, device);
  g_result << "device " << prop.name << "\n";
  // Double data rate: two transfers per clock.
  g_result << "peak_gbps " << 2.0 * clock_khz * 1e3 * (bus_bits / 8) / 1e9 << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <case directory>\n", argv[0]);
    return 2;
  }
  g_dir = argv[1];
  g_result.open(g_dir + "/result.txt");
  Case c = read_case();
  describe_device();
  DeviceMemory memory;
  std::vector<std::vector<unsigned char>> inputs(c.buffers.size());
  std::vector<void*> buffers, arguments;
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    const BufferSpec& b = c.buffers[i];
    if (b.role == "in" || b.role == "inout") inputs[i] = read_file("in_" + std::to_string(i) + ".bin", b.bytes());
    buffers.push_back(memory.add(inputs[i].empty() ? nullptr : inputs[i].data(), b.bytes()));
  }
  for (size_t i = 0; i < c.argument_bytes.size(); ++i) {
    auto blob = read_file("arg_" + std::to_string(i) + ".bin", c.argument_bytes[i]);
    arguments.push_back(memory.add(blob.data(), blob.size()));
  }
  std::vector<Launch> launches;
  for (const DispatchSpec& d : c.dispatches) launches.push_back(plan_launch(d, buffers, arguments, memory));
  run_all(launches);
  check(cudaDeviceSynchronize(), "the kernel");
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    if (!c.buffers[i].written_back()) continue;
    std::vector<unsigned char> out(c.buffers[i].bytes());
    check(cudaMemcpy(out.data(), buffers[i], out.size(), cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
    write_file("gpu_" + std::to_string(i) + ".bin", out.data(), out.size());
  }
  if (c.mode == "bench") bench(c, launches);
  else run_reference(c, inputs);
  g_result << "ok\n";
  return 0;
}
