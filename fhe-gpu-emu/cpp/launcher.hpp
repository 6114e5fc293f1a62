// Runs one launch: blocks one after another, run by one set of blockDim.x threads that
// share a barrier (__syncthreads) and the `static` stand-ins for shared memory.
// LUX_EMU_LAUNCH is this unit's exported name.

// Kernel `f` with its argument struct `A`, copied from the host's bytes (as a driver
// copies a by-value parameter); `args_bytes` must be sizeof(A), a last check that the
// host passed the struct this kernel takes.
template <typename A>
static int lux_emu_run(void (*f)(A), const void* args, unsigned args_bytes, unsigned grid, unsigned block,
                       unsigned shared_bytes) {
    if (args_bytes != sizeof(A)) return 3;
    if (block == 0 || grid == 0) return 2;
    A a;
    std::memcpy(&a, args, sizeof(A));
    std::vector<unsigned long long> smem(shared_bytes / 8 + 1);
    lux_emu_dyn_smem = reinterpret_cast<unsigned char*>(smem.data());
    gridDim = {grid, 1, 1};
    blockDim = {block, 1, 1};
    // One set of blockDim threads runs the blocks one after another (starting threads
    // per block dominated the emulator's time); the barrier after each block keeps the
    // next block from touching shared memory before every thread has left this one.
    std::barrier<> bar(block);
    std::vector<std::thread> threads;
    threads.reserve(block);
    for (unsigned t = 0; t < block; ++t) {
        threads.emplace_back([&bar, &a, f, grid, t] {
            threadIdx = {t, 0, 0};
            lux_emu_barrier = &bar;
            for (unsigned b = 0; b < grid; ++b) {
                blockIdx = {b, 0, 0};
                f(a);
                bar.arrive_and_wait();
            }
        });
    }
    for (auto& th : threads) th.join();
    return 0;
}

// 0 ok, 1 no such kernel, 2 empty grid or block, 3 argument size differs.
extern "C" int LUX_EMU_LAUNCH(const char* name, unsigned grid, unsigned block, unsigned shared_bytes,
                              const void* args, unsigned args_bytes) {
#define LUX_FIND(k, A) \
    if (std::strcmp(name, #k) == 0) return lux_emu_run<A>(k, args, args_bytes, grid, block, shared_bytes);
    LUX_KERNEL_LIST(LUX_FIND)
#undef LUX_FIND
    return 1;
}
