// The host program of a kernel's CUDA module (`mtlgen verify --gpu cuda`, `mtlgen bench --gpu
// cuda`): runs one case described by <dir>/case.txt, which mtlgen writes, and answers in
// <dir>/result.txt. The dispatch is the glue's: the generated host description
// (mtlsim_host_dispatch, from the simulator's reference bridge) gives the grid, threadgroup size,
// threadgroup memory and parameter struct. Inputs come as in_<i>.bin (mtlgen fills them as the
// simulator path does); the GPU's outputs go to gpu_<i>.bin and the reference's to ref_<i>.bin.
//
// case.txt, whitespace-separated:
//   variant <index> reference <symbol> entry <host name>
//   dims <n> <values...> scalars <n> <values...> constants <n> <values...>
//   buffers <n> then per buffer: <name> <element bytes> <elements> <in|out|inout>
//   arguments <n> then per argument blob: <bytes>          (hand-written kernels; arg_<i>.bin)
//   mode verify | mode bench <warm-up launches> <timed launches>
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

// Defined by the generated launcher.cu.
extern const mtlcu::EntryPoint mtlcu_entry_points[];
extern const int mtlcu_entry_point_count;
extern const ReferenceEntry mtlcu_references[];
extern const int mtlcu_reference_count;
extern void mtlcu_set_function_constants(const double* values);
extern "C" int mtlsim_host_dispatch(int variant, const uint64_t* dims, const double* scalars, mtlsim::HostDispatch* out);

namespace {

struct BufferSpec {
  std::string name;
  size_t element_bytes = 0;
  size_t elements = 0;
  std::string role;  // in, out, inout
  size_t bytes() const { return element_bytes * elements; }
};

struct Case {
  int variant = 0;
  std::string reference, entry, mode = "verify";
  std::vector<uint64_t> dims;
  std::vector<double> scalars, constants;
  std::vector<BufferSpec> buffers;
  std::vector<size_t> argument_bytes;
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

Case read_case() {
  std::ifstream in(g_dir + "/case.txt");
  Case c;
  std::string word;
  in >> word >> c.variant >> word >> c.reference >> word >> c.entry;
  c.dims = read_list<uint64_t>(in, "dims");
  c.scalars = read_list<double>(in, "scalars");
  c.constants = read_list<double>(in, "constants");
  size_t n = 0;
  in >> word >> n;
  c.buffers.resize(n);
  for (auto& b : c.buffers) in >> b.name >> b.element_bytes >> b.elements >> b.role;
  c.argument_bytes = read_list<size_t>(in, "arguments");
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

// Device memory for every slot, filled: inputs from mtlgen's files, write-only outputs with 0xFF
// bytes (NaN, or the largest integer) so that elements no thread writes show in the comparison.
// Each allocation is exactly the buffer's bytes (Metal would round to 16): compute-sanitizer's
// memcheck then reports any access past the last element.
struct DeviceSlots {
  mtlcu::Slots slots{};
  std::vector<void*> owned;
  ~DeviceSlots() {
    for (void* p : owned) cudaFree(p);
  }
  void* add(const void* data, size_t bytes, int at) {
    void* p = nullptr;
    size_t size = std::max<size_t>(bytes, 1);
    check(cudaMalloc(&p, size), "cudaMalloc");
    owned.push_back(p);
    if (data) check(cudaMemcpy(p, data, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
    else check(cudaMemset(p, 0xFF, size), "cudaMemset");
    slots.slot[at] = p;
    return p;
  }
};

const mtlcu::EntryPoint& find_entry(const std::string& name) {
  for (int i = 0; i < mtlcu_entry_point_count; ++i)
    if (name == mtlcu_entry_points[i].name) return mtlcu_entry_points[i];
  fail("the module has no entry point `" + name + "`");
}

ReferenceFn find_reference(const std::string& symbol) {
  for (int i = 0; i < mtlcu_reference_count; ++i)
    if (symbol == mtlcu_references[i].symbol) return mtlcu_references[i].fn;
  fail("the module has no reference `" + symbol + "`");
}

struct Launch {
  dim3 grid, block;
  size_t shared = 0;
};

// The glue's dispatch, and the threadgroup arrays' places in dynamic shared memory (16-byte
// aligned, as setThreadgroupMemoryLength rounds).
Launch plan_launch(const Case& c, const mtlsim::HostDispatch& host, mtlcu::Slots& slots) {
  Launch l;
  l.grid = dim3(unsigned(host.threadgroups[0]), unsigned(host.threadgroups[1]), unsigned(host.threadgroups[2]));
  l.block = dim3(unsigned(host.threads_per_threadgroup[0]), unsigned(host.threads_per_threadgroup[1]),
                 unsigned(host.threads_per_threadgroup[2]));
  for (int i = 0; i < host.threadgroup_arrays; ++i) {
    slots.threadgroup_offset[i] = unsigned(l.shared);
    l.shared += (host.threadgroup_memory_bytes[i] + 15) / 16 * 16;
  }
  if (c.entry != host.entry_point) fail("the host description names entry point `" + std::string(host.entry_point) + "`, mtlgen `" + c.entry + "`");
  return l;
}

void run_reference(const Case& c, const std::vector<std::vector<unsigned char>>& inputs) {
  std::vector<std::vector<unsigned char>> ref(c.buffers.size());
  std::vector<void*> slots;
  std::vector<uint64_t> elements;
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    ref[i] = inputs[i].empty() ? std::vector<unsigned char>(c.buffers[i].bytes()) : inputs[i];
    slots.push_back(ref[i].data());
    elements.push_back(c.buffers[i].elements);
  }
  char error[1024] = "";
  if (find_reference(c.reference)(slots.data(), elements.data(), c.dims.data(), c.scalars.data(), c.constants.data(),
                                  error, sizeof error) != 0)
    fail(std::string("the reference rejected this case: ") + error);
  for (size_t i = 0; i < c.buffers.size(); ++i)
    if (c.buffers[i].role != "in") write_file("ref_" + std::to_string(i) + ".bin", ref[i].data(), ref[i].size());
}

// Each timed launch after a write that evicts L2, so the kernel reads from DRAM as on a cold call.
void bench(const Case& c, const mtlcu::EntryPoint& entry, const Launch& l, const mtlcu::Slots& slots) {
  int device = 0, l2 = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
  void* flush = nullptr;
  size_t flush_bytes = std::max<size_t>(size_t(l2) * 2, 1 << 20);
  check(cudaMalloc(&flush, flush_bytes), "cudaMalloc");
  for (int i = 0; i < c.warmups; ++i) check(entry.launch(l.grid, l.block, l.shared, slots), "launch");
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> us;
  for (int i = 0; i < c.repeats; ++i) {
    check(cudaMemsetAsync(flush, i & 0xFF, flush_bytes), "cudaMemsetAsync");
    cudaEventRecord(start);
    check(entry.launch(l.grid, l.block, l.shared, slots), "launch");
    cudaEventRecord(stop);
    check(cudaEventSynchronize(stop), "the kernel");
    float ms = 0;
    cudaEventElapsedTime(&ms, start, stop);
    us.push_back(ms * 1000);
  }
  cudaFree(flush);
  std::sort(us.begin(), us.end());
  if (!us.empty()) g_result << "median_us " << us[us.size() / 2] << "\nmin_us " << us.front() << "\n";
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
  mtlsim::HostDispatch host;
  if (mtlsim_host_dispatch(c.variant, c.dims.data(), c.scalars.data(), &host) != 0)
    fail(std::string("check_dims rejected the case: ") + host.error);
  describe_device();
  DeviceSlots device;
  std::vector<std::vector<unsigned char>> inputs(c.buffers.size());
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    if (c.buffers[i].role != "out") inputs[i] = read_file("in_" + std::to_string(i) + ".bin", c.buffers[i].bytes());
    device.add(inputs[i].empty() ? nullptr : inputs[i].data(), c.buffers[i].bytes(), int(i));
  }
  device.add(host.params, host.params_size, int(c.buffers.size()));
  for (size_t i = 0; i < c.argument_bytes.size(); ++i) {
    auto blob = read_file("arg_" + std::to_string(i) + ".bin", c.argument_bytes[i]);
    device.add(blob.data(), blob.size(), int(c.buffers.size() + 1 + i));
  }
  mtlcu_set_function_constants(c.constants.data());
  const mtlcu::EntryPoint& entry = find_entry(c.entry);
  Launch l = plan_launch(c, host, device.slots);
  check(entry.launch(l.grid, l.block, l.shared, device.slots), "launch");
  check(cudaDeviceSynchronize(), "the kernel");
  for (size_t i = 0; i < c.buffers.size(); ++i) {
    if (c.buffers[i].role == "in") continue;
    std::vector<unsigned char> out(c.buffers[i].bytes());
    check(cudaMemcpy(out.data(), device.slots.slot[i], out.size(), cudaMemcpyDeviceToHost), "cudaMemcpy to the host");
    write_file("gpu_" + std::to_string(i) + ".bin", out.data(), out.size());
  }
  if (c.mode == "bench") bench(c, entry, l, device.slots);
  else run_reference(c, inputs);
  g_result << "ok\n";
  return 0;
}
