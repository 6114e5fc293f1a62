// The CPU emulator's stand-ins for the CUDA built-ins (see kernels/compat.h). Each
// generated translation unit holds one program's kernels (fhe_gpu::Program); everything
// here has internal linkage, so the units link side by side.
#include <barrier>
#include <cstring>
#include <thread>
#include <vector>

namespace {
struct LuxDim3 {
    unsigned x, y, z;
};
thread_local LuxDim3 threadIdx;
thread_local LuxDim3 blockIdx;
LuxDim3 blockDim;
LuxDim3 gridDim;
thread_local std::barrier<>* lux_emu_barrier;
unsigned char* lux_emu_dyn_smem;
}  // namespace
