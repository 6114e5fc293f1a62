// Lux FHE kernels: one source for CUDA (NVRTC), HIP (hiprtc) and the CPU emulator
// (fhe-gpu-emu). This header is the only place the three differ. The kernels use
// block-wide barriers only (no warp shuffles or votes), so they are correct for any
// block size and any warp width: 32 on NVIDIA, 64 on AMD CDNA (the host rounds block
// sizes to `GpuDriver::warp_size`). CUDA and HIP share one branch: NVRTC and hiprtc
// accept the same built-ins; the host defines LUX_HIP for hiprtc, which nothing needs yet.
//
// Compile-time shapes (LUX_WORD_BITS; LUX_N, LUX_L, ... of a bit-scheme set) are
// #defines the host prepends (fhe_gpu::source::defines); primes never are: kernels read
// them from table entries (args.h).

#if defined(LUX_HOST_EMU)
// ---- CPU emulator: each block runs as blockDim.x std::threads sharing a barrier;
// blocks run one after another, so `static` storage stands in for shared memory.
#define LUX_DEVICE static inline
#define LUX_KERNEL(name) static void name
#define LUX_SHARED static
#define LUX_DYNAMIC_SHARED(type, name) type* name = reinterpret_cast<type*>(lux_emu_dyn_smem)
#define __syncthreads() lux_emu_barrier->arrive_and_wait()
static inline unsigned long long lux_mulhi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
static inline unsigned int lux_mulhi32(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a * b) >> 32);
}
#define LUX_OFFSETOF(type, member) __builtin_offsetof(type, member)
#else
// ---- CUDA (NVRTC) and HIP (hiprtc).
#define LUX_DEVICE __device__ __forceinline__
#define LUX_KERNEL(name) extern "C" __global__ void name
#define LUX_SHARED __shared__
#define LUX_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#define lux_mulhi(a, b) __umul64hi((a), (b))
#define lux_mulhi32(a, b) __umulhi((a), (b))
// A member's offset as a constant, for the layout checks (no <cstddef> under either
// runtime compiler): hiprtc is clang; NVRTC's EDG front end has no __builtin_offsetof
// but makes an address computation from a null base constant with __INTADDR__.
#if defined(LUX_HIP)
#define LUX_OFFSETOF(type, member) __builtin_offsetof(type, member)
#else
#define LUX_OFFSETOF(type, member) ((unsigned long long)__INTADDR__(&(((type*)0)->member)))
#endif
#endif

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;
