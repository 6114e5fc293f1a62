// Runs one launch: blocks one after another, each as blockDim.x threads that share a
// barrier (__syncthreads) and the `static` stand-ins for shared memory.
// LUX_EMU_LAUNCH is this unit's exported name.
typedef void (*LuxKernelFn)(LuxArgs);

extern "C" int LUX_EMU_LAUNCH(const char* name, unsigned grid, unsigned block, unsigned shared_bytes,
                              const LuxArgs* args) {
    LuxKernelFn f = nullptr;
#define LUX_FIND(k) \
    if (std::strcmp(name, #k) == 0) f = k;
    LUX_KERNEL_LIST(LUX_FIND)
#undef LUX_FIND
    if (f == nullptr) return 1;
    if (block == 0 || grid == 0) return 2;
    std::vector<unsigned long long> smem(shared_bytes / 8 + 1);
    lux_emu_dyn_smem = reinterpret_cast<unsigned char*>(smem.data());
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    const LuxArgs a = *args;
    for (unsigned b = 0; b < grid; ++b) {
        std::barrier<> bar(block);
        std::vector<std::thread> threads;
        threads.reserve(block);
        for (unsigned t = 0; t < block; ++t) {
            threads.emplace_back([&bar, &a, f, b, t] {
                threadIdx = {t, 0, 0};
                blockIdx = {b, 0, 0};
                lux_emu_barrier = &bar;
                f(a);
            });
        }
        for (auto& th : threads) th.join();
    }
    return 0;
}
