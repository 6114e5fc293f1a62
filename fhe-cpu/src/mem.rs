//! Memory and the CPU: buffers aligned to a cache line (and backed by huge pages where
//! the kernel allows), prefetches, the [`Ahead`] stream of prefetches that the NTTs and
//! the GINX kernels spread over their loops, and which compiled copy of the kernels
//! this CPU runs ([`Isa`]).

/// A zeroed buffer whose first word starts a cache line. The SIMD kernels load and
/// store 64 bytes at a time from the start of their rows; on a buffer from the allocator
/// (16-byte aligned, and 16 bytes past a page for the large ones) most of those accesses
/// straddle two lines, which slowed a GINX step (`docs/perf/2026-12-05.md`, "Lab notes moved from
/// the code").
/// It is a `Vec` with one line of slack and the offset of its first aligned word: it never
/// grows, so its storage, and the alignment, never move.
pub struct Aligned<T> {
    words: Vec<T>,
    at: usize,
    len: usize,
}

impl<T: Copy + Default> Aligned<T> {
    /// `len` zeroed words, the first on a 64-byte boundary.
    pub fn zeroed(len: usize) -> Self {
        Self::new(len, false)
    }

    /// [`Aligned::zeroed`], backed where the kernel allows by transparent huge pages
    /// (Linux, where THP is `madvise`): the bootstrap key is streamed once per blind
    /// rotation, and with 4 KiB pages the hardware prefetcher stops at every page boundary
    /// (`docs/perf/2026-12-05.md`, "Lab notes moved from the code").
    pub fn zeroed_huge(len: usize) -> Self {
        Self::new(len, true)
    }

    fn new(len: usize, huge: bool) -> Self {
        const LINE: usize = 64;
        let size = std::mem::size_of::<T>();
        assert!(size > 0 && LINE.is_multiple_of(size), "Aligned holds words that tile a cache line");
        let mut words: Vec<T> = Vec::with_capacity(len + LINE / size);
        let start = words.as_ptr() as usize;
        // `start` is a multiple of `size` (a `Vec<T>` is aligned for `T`), so the distance
        // to the next line is a whole number of words.
        let at = (LINE - start % LINE) % LINE / size;
        #[cfg(target_os = "linux")]
        if huge {
            const HUGE: usize = 2 << 20;
            let (lo, hi) = (start.div_ceil(HUGE) * HUGE, (start + (len + LINE / size) * size) / HUGE * HUGE);
            if hi > lo {
                // SAFETY: `[lo, hi)` lies inside the allocation just made; `madvise` changes
                // paging advice only and never reads or writes the (uninitialized) contents.
                // It is advice: an error just leaves 4 KiB pages, so the result is ignored.
                let _ = unsafe { libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE) };
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = huge;
        // Within the capacity: no reallocation, the storage stays where `at` was computed.
        words.resize(len + LINE / size, T::default());
        debug_assert_eq!(words.as_ptr() as usize, start);
        Aligned { words, at, len }
    }
}

impl<T> Default for Aligned<T> {
    fn default() -> Self {
        Aligned { words: Vec::new(), at: 0, len: 0 }
    }
}

impl<T> std::ops::Deref for Aligned<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.words[self.at..self.at + self.len]
    }
}

impl<T> std::ops::DerefMut for Aligned<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.words[self.at..self.at + self.len]
    }
}

/// Asks for every cache line of `words` to be brought into cache.
#[inline(always)]
pub fn prefetch<T>(words: &[T]) {
    #[cfg(target_arch = "x86_64")]
    for at in (0..words.len()).step_by((64 / std::mem::size_of::<T>()).max(1)) {
        // SAFETY: `at < words.len()`: the address is inside the slice; a prefetch never
        // faults and does not change memory.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(words.as_ptr().add(at).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = words;
}

/// [`prefetch`] into the second-level cache only, for reads far enough ahead that the
/// first level (whose misses in flight are few) would hold them back: the key switch's
/// rows, random reads from a key of ~100 MiB, 16 rows ahead (faster than `T0` 4 rows
/// ahead: `docs/perf/2026-12-05.md`, "Lab notes moved from the code").
#[inline(always)]
pub fn prefetch_l2<T>(words: &[T]) {
    #[cfg(target_arch = "x86_64")]
    for at in (0..words.len()).step_by((64 / std::mem::size_of::<T>()).max(1)) {
        // SAFETY: `at < words.len()`: the address is inside the slice; a prefetch never
        // faults and does not change memory.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T1 }>(words.as_ptr().add(at).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = words;
}

/// Key words the steps will read (a pair's worth: the second half of the current pair
/// and the first half of the next, `bootstrap::prefetch_window`), prefetched a cache
/// line per [`Ahead::touch`]: the NTTs call it once per loop iteration, so a pair's
/// worth (2048 lines for `PN10QP27`, about as many as one step's NTTs have iterations)
/// comes in at the pace memory delivers it while they compute, and the GINX kernel
/// finds its pair in cache.
pub struct Ahead<'a> {
    /// The words' first byte; only ever passed to a prefetch, never read through.
    start: *const u8,
    /// Bytes of the words, and the offset of the next line to prefetch.
    len: usize,
    at: usize,
    /// The second run of words ([`Ahead::two`]), taken up when the first is done:
    /// its first byte and length (0 when there is none).
    then: *const u8,
    then_len: usize,
    words: std::marker::PhantomData<&'a [u8]>,
}

impl<'a> Ahead<'a> {
    pub fn new<T>(words: &'a [T]) -> Self {
        Ahead::two(words, &[])
    }

    /// `first`'s lines, then `second`'s.
    pub fn two<T>(first: &'a [T], second: &'a [T]) -> Self {
        Ahead {
            start: first.as_ptr().cast(),
            len: std::mem::size_of_val(first),
            at: 0,
            then: second.as_ptr().cast(),
            then_len: std::mem::size_of_val(second),
            words: std::marker::PhantomData,
        }
    }

    pub fn none() -> Ahead<'static> {
        Ahead::new::<u8>(&[])
    }

    /// Cache lines not yet prefetched.
    pub fn lines_left(&self) -> usize {
        // `at` may pass `len` by less than a line after the last touch.
        self.len.saturating_sub(self.at).div_ceil(64) + self.then_len.div_ceil(64)
    }

    /// [`Ahead::touch`] `lines` times.
    #[inline(always)]
    pub fn touch_lines(&mut self, lines: usize) {
        for _ in 0..lines {
            self.touch();
        }
    }

    /// Prefetches what is left at once (where a step's NTT iterations and GINX chunks
    /// touched fewer lines than the pair has; the rest arrives during the next step's
    /// decomposition and NTTs).
    pub fn rest(&mut self) {
        while self.lines_left() > 0 {
            self.touch();
        }
    }

    #[inline(always)]
    pub fn touch(&mut self) {
        if self.at >= self.len && self.then_len > 0 {
            (self.start, self.len, self.at) = (self.then, self.then_len, 0);
            self.then_len = 0;
        }
        if self.at < self.len {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `at < len`: the address is inside the borrowed words; a prefetch
            // never faults and does not change memory.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T1 }>(self.start.add(self.at).cast())
            };
            self.at += 64;
        }
    }
}

/// Which compiled copy of the kernels this CPU runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Isa {
    Portable,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Isa {
    pub fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx512f")
                && is_x86_feature_detected!("avx512dq")
                && is_x86_feature_detected!("avx512vl")
            {
                return Isa::Avx512;
            }
            if is_x86_feature_detected!("avx2") {
                return Isa::Avx2;
            }
        }
        Isa::Portable
    }

    /// Every copy of the kernels this CPU can run, the portable one first: what tests
    /// compare against each other.
    #[cfg(test)]
    pub(crate) fn available() -> Vec<Isa> {
        let mut isas = vec![Isa::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if is_x86_feature_detected!("avx2") {
                isas.push(Isa::Avx2);
            }
            if Isa::detect() == Isa::Avx512 {
                isas.push(Isa::Avx512);
            }
        }
        isas
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `Aligned` buffer starts on a cache line, has its length, is zeroed and
    /// keeps its words, for each word size it holds and lengths that do not fill a line;
    /// many allocations at once, so the allocator hands out differently aligned blocks.
    #[test]
    fn aligned_buffers_start_on_a_cache_line() {
        fn check<T: Copy + Default + PartialEq + std::fmt::Debug + From<u8>>() {
            let mut all = Vec::new();
            for len in [0, 1, 3, 16, 17, 1000, 1024, 4099] {
                for huge in [false, true] {
                    let mut v = if huge { Aligned::<T>::zeroed_huge(len) } else { Aligned::<T>::zeroed(len) };
                    assert_eq!(v.len(), len);
                    assert!(v.iter().all(|&x| x == T::default()));
                    if len > 0 {
                        assert_eq!(v.as_ptr() as usize % 64, 0, "{len} words of {} bytes", std::mem::size_of::<T>());
                        v[len - 1] = T::from(7);
                        assert_eq!(v[len - 1], T::from(7));
                    }
                    all.push(v);
                }
            }
            assert!(Aligned::<T>::default().is_empty());
        }
        check::<u16>();
        check::<u32>();
        check::<u64>();
    }
}
