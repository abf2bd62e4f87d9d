//! 64-byte aligned population storage, the raw view the parallel kernels write through, and
//! [`Pops`], that view seen as values of a precision.
//!
//! Clusters of `VL` values are the unit of the CSoA and CAoSoA layouts (Calore et al. 2019 §4);
//! with the base address aligned to 64 bytes (one cache line, one AVX-512 register) and `LY` a
//! multiple of `VL`, every cluster starts on a `VL·size_of::<E>()` boundary, so cluster loads and
//! stores are aligned vector moves.

use std::alloc::{alloc, dealloc, Layout as AllocLayout};
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use rayon::prelude::*;

use crate::Real;

/// Alignment of every population array, in bytes (at least; arrays of 2 MiB or more are
/// aligned to a huge page).
pub const ALIGN: usize = 64;

/// Arrays of at least this many bytes are aligned to it and asked to be backed by huge pages
/// (Linux `madvise(MADV_HUGEPAGE)`): a streaming sweep over a lattice of gigabytes otherwise
/// walks a new 4 KiB page every few dozen sites.
pub const HUGE_PAGE: usize = 2 << 20;

/// An element of a population or field array: a value that can be copied as bytes.
pub(crate) trait Element: bytemuck::Pod + Send + Sync {}
impl<E: bytemuck::Pod + Send + Sync> Element for E {}

/// A zero-initialised, 64-byte aligned, fixed-length array of `T`.
///
/// Invariants (established by [`AlignedBuf::try_zeroed`], relied on by every `unsafe` block
/// below): `len` never changes; if `Self::allocates(len)`, `ptr` is the start of a live
/// allocation of `Self::layout(len)` (which exists) made by the global allocator, owned by
/// this value alone, and all `len` elements are initialised (all-zero bits, valid for a
/// [`bytemuck::Pod`] `T`); otherwise (`len == 0` or zero-sized `T`) `ptr` is dangling and
/// aligned for `T` and nothing is allocated.
pub struct AlignedBuf<T: Element> {
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: the buffer owns its allocation exclusively (type invariants), like a `Vec<T>`, so
// moving it to another thread moves the only access to its elements; `T: Element` is `Send`.
unsafe impl<T: Element> Send for AlignedBuf<T> {}
// SAFETY: `&AlignedBuf<T>` gives only `&[T]` (no interior mutability; writes need
// `&mut self`, through `DerefMut` or `raw`), and `T: Element` is `Sync`.
unsafe impl<T: Element> Sync for AlignedBuf<T> {}

impl<T: Element> AlignedBuf<T> {
    /// Allocates `len` zeros (all-zero bits are `0.0` in every precision; in a compact one,
    /// [`Real::COMPACT`], a population at rest). The memory is first touched by the rayon
    /// workers, after the huge-page advice.
    ///
    /// # Panics
    /// If `len · size_of::<T>()` overflows `usize` or its layout exceeds `isize::MAX` bytes
    /// ("population array of … elements does not fit in memory"), before anything is
    /// allocated or written. Aborts ([`std::alloc::handle_alloc_error`]) if the allocator
    /// fails (out of memory); [`AlignedBuf::try_zeroed`] returns `None` instead of both.
    pub fn zeroed(len: usize) -> Self {
        let layout = Self::layout(len)
            .unwrap_or_else(|| panic!("population array of {len} elements does not fit in memory"));
        Self::try_zeroed(len).unwrap_or_else(|| std::alloc::handle_alloc_error(layout))
    }

    /// As [`AlignedBuf::zeroed`], but `None` where that panics or aborts: when `len` elements
    /// do not fit the address space or the allocator fails.
    pub fn try_zeroed(len: usize) -> Option<Self> {
        let layout = Self::layout(len)?;
        if !Self::allocates(len) {
            return Some(Self {
                ptr: NonNull::dangling(),
                len,
            });
        }
        // SAFETY: `layout` has a non-zero size: `allocates(len)` (`len > 0`, `T` not
        // zero-sized) and `layout.size() == len · size_of::<T>()` (`Self::layout`).
        let ptr = NonNull::new(unsafe { alloc(layout) })?;
        // SAFETY: `alloc` returned `ptr` valid for reads and writes of `layout.size()` bytes,
        // which nothing else references yet; `MaybeUninit<u8>` needs no initialisation and has
        // alignment 1. The slice lives only until the zeroing ends, within this function.
        let bytes: &mut [MaybeUninit<u8>] =
            unsafe { std::slice::from_raw_parts_mut(ptr.as_ptr().cast(), layout.size()) };
        advise_huge_pages(bytes);
        // Disjoint chunks (`par_chunks_mut`), one huge page each: the worker that zeroes a
        // page is the first to touch it.
        bytes
            .par_chunks_mut(HUGE_PAGE)
            .for_each(|c| c.fill(MaybeUninit::new(0)));
        Some(Self {
            ptr: ptr.cast(),
            len,
        })
    }

    /// Whether `len` elements take memory (else the buffer is a dangling pointer).
    fn allocates(len: usize) -> bool {
        len > 0 && size_of::<T>() > 0
    }

    /// The allocation of `len` elements: `len · size_of::<T>()` bytes, aligned to [`ALIGN`]
    /// (or `T`'s alignment, if larger), or to [`HUGE_PAGE`] from that size on; `None` when
    /// the size overflows `usize` or the layout exceeds `isize::MAX` bytes. A function of
    /// `len` alone, so that `Drop` frees with the layout `try_zeroed` allocated with.
    fn layout(len: usize) -> Option<AllocLayout> {
        let bytes = len.checked_mul(size_of::<T>())?;
        let align = if bytes >= HUGE_PAGE { HUGE_PAGE } else { ALIGN };
        AllocLayout::from_size_align(bytes, align.max(align_of::<T>())).ok()
    }

    /// A raw view for the kernels (see [`RawBuf`]); it borrows `self` mutably for its
    /// lifetime, so no `&[T]` of `deref` coexists with the writes through it.
    pub(crate) fn raw(&mut self) -> RawBuf<'_, T> {
        RawBuf {
            ptr: self.ptr.as_ptr(),
            len: self.len,
            _life: PhantomData,
        }
    }
}

/// Asks Linux to back `bytes` with transparent huge pages; a hint, ignored elsewhere or when
/// it fails (THP disabled), and skipped under Miri (which cannot call `madvise`).
fn advise_huge_pages(bytes: &mut [MaybeUninit<u8>]) {
    #[cfg(all(target_os = "linux", not(miri)))]
    if bytes.len() >= HUGE_PAGE {
        // SAFETY: the range is the memory of `bytes`, mapped and ours (`&mut`);
        // `MADV_HUGEPAGE` only changes how the kernel backs it, never its contents or its
        // mapping, and its failures (EINVAL where THP is off) are ignored. The start is
        // page-aligned: arrays from `HUGE_PAGE` bytes on are aligned to `HUGE_PAGE`.
        unsafe {
            libc::madvise(bytes.as_mut_ptr().cast(), bytes.len(), libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(any(not(target_os = "linux"), miri))]
    let _ = bytes;
}

impl<T: Element> Drop for AlignedBuf<T> {
    fn drop(&mut self) {
        if Self::allocates(self.len) {
            let layout = Self::layout(self.len).expect("the layout was valid at allocation");
            // SAFETY: type invariants: `ptr` was allocated by `alloc` with `layout(len)`, the
            // very layout computed here (`len` never changes), and is freed only here, once.
            unsafe { dealloc(self.ptr.as_ptr().cast(), layout) }
        }
    }
}

impl<T: Element> Deref for AlignedBuf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: type invariants: `ptr` is non-null, aligned for `T` and valid for `len`
        // initialised elements (or dangling with nothing to read: `len == 0` or zero-sized
        // `T`); `len · size_of::<T>() ≤ isize::MAX` (checked by `layout` at allocation). The
        // slice borrows `self`, so it cannot outlive the allocation, and no `RawBuf` (which
        // borrows `self` mutably) writes while it lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Element> DerefMut for AlignedBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` makes the slice the only access for its
        // lifetime.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

/// A shared raw view of a population array, handed to the rayon workers of one kernel.
///
/// The kernels split work by lattice column, but one column's writes can land in other
/// columns' memory (population-major layouts; the push half of the in-place AA step). Every
/// kernel therefore documents which elements each site reads and writes, and these sets are
/// disjoint between sites (the argument is given at each kernel); under that invariant the
/// concurrent accesses through this view never touch the same element.
///
/// # Contract of the accessors
/// A view is made only by [`AlignedBuf::raw`], so `ptr` is aligned to [`ALIGN`] (at least
/// `T`'s alignment) and valid for `len` initialised elements for `'a`, while the `AlignedBuf`
/// is mutably borrowed (nothing else reads or writes it). The accessors are safe to call for
/// the kernels' speed, but it is their callers (this crate's kernels, halo and fold code) who
/// guarantee, for every access, what the `unsafe` blocks below rely on; a violation is
/// undefined behaviour, and only `debug_assert!`s check it (in the hot loops a check per
/// element would cost):
/// 1. **bounds**: `i < len` (`get`, `set`), `i + VL <= len` (`load`, `store`, `stream`): the
///    indices come from the layouts' index functions ([`crate::layout`]), which map the
///    lattice's sites and populations into `0..d.len()`, the length the arrays are allocated
///    with;
/// 2. **disjointness**: during one parallel kernel, no element written by one worker is read
///    or written by another (the per-kernel argument above);
/// 3. **alignment** (`stream` of a whole or half cache line only): `i` is a multiple of `VL`,
///    as every cluster start of the clustered layouts is (`LY` a multiple of `VL`), so that
///    `ptr + i` is aligned to `VL · size_of::<T>()` bytes.
#[derive(Clone, Copy)]
pub(crate) struct RawBuf<'a, T> {
    ptr: *mut T,
    len: usize,
    _life: PhantomData<&'a mut [T]>,
}

// SAFETY: a view is a `&'a mut [T]` shared by the workers of one kernel; sending it sends
// access to `T`s, hence `T: Send`. Concurrent accesses are to disjoint elements (contract 2 of
// the type), so they are no data race.
unsafe impl<T: Send> Send for RawBuf<'_, T> {}
// SAFETY: `&RawBuf` reads `T`s (`T: Sync`) and writes `T`s moved in from the calling thread
// (`T: Send`, as for `Mutex<T>: Sync`), on disjoint elements (contract 2 of the type).
unsafe impl<T: Send + Sync> Sync for RawBuf<'_, T> {}

impl<T: Element> RawBuf<'_, T> {
    /// Reads element `i`.
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> T {
        debug_assert!(i < self.len, "element {i} outside an array of {}", self.len);
        // SAFETY: `i < len` (contract 1 of the type), so `ptr + i` lies inside the
        // allocation, aligned for `T`, and holds an initialised `T`; no other worker writes it
        // during the kernel (contract 2), so the read is no data race.
        unsafe { self.ptr.add(i).read() }
    }

    /// Writes element `i`.
    #[inline(always)]
    pub(crate) fn set(&self, i: usize, v: T) {
        debug_assert!(i < self.len, "element {i} outside an array of {}", self.len);
        // SAFETY: as in `get`: in bounds and aligned (contract 1), and no other worker reads
        // or writes the element during the kernel (contract 2); `T: Pod` has no drop glue, so
        // overwriting without dropping the old value is right.
        unsafe { self.ptr.add(i).write(v) }
    }

    /// Reads `VL` consecutive elements starting at `i`.
    #[inline(always)]
    pub(crate) fn load<const VL: usize>(&self, i: usize) -> [T; VL] {
        debug_assert!(
            i + VL <= self.len,
            "elements {i}..{} outside an array of {}",
            i + VL,
            self.len
        );
        // SAFETY: `i + VL <= len` (contract 1), so the `VL` elements from `ptr + i` lie inside
        // the allocation and are initialised; `[T; VL]` has `T`'s alignment, which `ptr + i`
        // has; no other worker writes them during the kernel (contract 2).
        unsafe { (self.ptr.add(i) as *const [T; VL]).read() }
    }

    /// Asks the CPU to bring the cache line of element `base + i` into L2 ahead of use (the
    /// kernels interleave compute with streaming, and two cores alone do not keep enough
    /// misses in flight without it). L2, not L1 (`prefetcht1`, not `prefetcht0`): a miss into
    /// L1 holds one of the core's few L1 miss buffers until the line arrives,
    /// fewer than a stream at this bandwidth needs in flight, while L2 tracks more; the
    /// hardware brings the line on from L2 when the load comes. On two Zen 4 cores, D2Q9 f64
    /// CAoSoA⟨8⟩ 4096², each at its best distance (see [`crate::prefetch`]), MLUPS L1 → L2:
    /// AA pull half-step 317 → 515, fused two-copy 353 → 511; D3Q19 192³ pull 84 → 112;
    /// D2Q37 1024×2048 pull 30 → 33, two-copy 26 → 30. A hint: it never faults, and
    /// `base + i` may lie outside the array (the address is formed with wrapping arithmetic
    /// and never dereferenced).
    #[inline(always)]
    pub(crate) fn prefetch(&self, base: usize, i: isize) {
        self.hint::<false>(base, i)
    }

    /// Asks the CPU to fetch the cache line of element `base + i` for writing (`prefetchw`,
    /// where the target has it; else a read prefetch): the line is read and owned before the
    /// store comes, so that an ordinary store into an array that is not in the caches does
    /// not wait for its write-allocate read (see [`crate::kernels::Stores`]). A hint, like
    /// [`RawBuf::prefetch`].
    #[inline(always)]
    pub(crate) fn prefetch_write(&self, base: usize, i: isize) {
        self.hint::<true>(base, i)
    }

    /// The prefetch of [`RawBuf::prefetch`] (`WRITE` false) or [`RawBuf::prefetch_write`].
    #[inline(always)]
    fn hint<const WRITE: bool>(&self, base: usize, i: isize) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `_mm_prefetch` needs SSE, part of the x86-64 baseline; a prefetch is a hint
        // that never faults and accesses no memory architecturally, so `p` may be any address
        // (it is formed with wrapping arithmetic, which has no in-bounds requirement either).
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_ET1, _MM_HINT_T1};
            let p = self.ptr.wrapping_add(base).wrapping_offset(i) as *const i8;
            if WRITE {
                _mm_prefetch::<_MM_HINT_ET1>(p);
            } else {
                _mm_prefetch::<_MM_HINT_T1>(p);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (base, i);
    }

    /// Writes `VL` consecutive elements starting at `i`.
    #[inline(always)]
    pub(crate) fn store<const VL: usize>(&self, i: usize, v: [T; VL]) {
        debug_assert!(
            i + VL <= self.len,
            "elements {i}..{} outside an array of {}",
            i + VL,
            self.len
        );
        // SAFETY: as in `load`, for writing: in bounds and aligned (contract 1), and the
        // elements are this worker's alone during the kernel (contract 2).
        unsafe { (self.ptr.add(i) as *mut [T; VL]).write(v) }
    }

    /// Writes `VL` consecutive elements starting at `i` (aligned to their size), with a
    /// non-temporal store where the target has one of their size (a whole cache line of 64
    /// bytes with AVX-512; half of one, 32 bytes, with AVX: the clusters of f16s, whose two
    /// halves are written one after the other and combine in the CPU's write-combining
    /// buffers), else an ordinary store. The line goes to memory without first being
    /// read into the cache (the "write-allocate" read of an ordinary store, a third of the
    /// traffic of a copy between two arrays). For arrays far larger than the caches, written
    /// once per sweep and read back only at the next one; the writer must call
    /// [`store_fence`] before others read them.
    #[inline(always)]
    pub(crate) fn stream<const VL: usize>(&self, i: usize, v: [T; VL]) {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
        if VL * std::mem::size_of::<T>() == ALIGN {
            use std::arch::x86_64::{__m512i, _mm512_loadu_si512, _mm512_stream_si512};
            debug_assert!(
                i + VL <= self.len,
                "elements {i}..{} outside an array of {}",
                i + VL,
                self.len
            );
            debug_assert_eq!(
                self.ptr.wrapping_add(i) as usize % ALIGN,
                0,
                "unaligned stream"
            );
            // SAFETY: AVX-512F is enabled at compile time (cfg above), which both intrinsics
            // need. The load reads the 64 bytes of `v` (`VL · size_of::<T>() == 64`; unaligned
            // load). The non-temporal store needs `ptr + i` 64-byte aligned, or it faults: the
            // base is (`AlignedBuf`) and `i` is a multiple of `VL` (contract 3), so `i · size`
            // is a multiple of 64; its 64 bytes are the elements `i..i + VL`, inside the
            // allocation (contract 1) and this worker's alone (contract 2).
            unsafe {
                let x = _mm512_loadu_si512(v.as_ptr().cast::<__m512i>());
                _mm512_stream_si512(self.ptr.add(i).cast::<__m512i>(), x);
            }
            return;
        }
        #[cfg(all(target_arch = "x86_64", target_feature = "avx"))]
        if VL * std::mem::size_of::<T>() == ALIGN / 2 {
            use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_stream_si256};
            debug_assert!(
                i + VL <= self.len,
                "elements {i}..{} outside an array of {}",
                i + VL,
                self.len
            );
            debug_assert_eq!(
                self.ptr.wrapping_add(i) as usize % (ALIGN / 2),
                0,
                "unaligned stream"
            );
            // SAFETY: as above, with AVX (cfg above), 32 bytes of `v` and a 32-byte aligned
            // half line `i..i + VL` (contracts 1 to 3).
            unsafe {
                let x = _mm256_loadu_si256(v.as_ptr().cast::<__m256i>());
                _mm256_stream_si256(self.ptr.add(i).cast::<__m256i>(), x);
            }
            return;
        }
        self.store::<VL>(i, v)
    }
}

/// Orders this thread's non-temporal stores ([`RawBuf::stream`]) before its later stores, so
/// that the threads that synchronise with it afterwards (the end of a parallel sweep) see them.
#[inline(always)]
pub(crate) fn store_fence() {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx"))]
    // SAFETY: `_mm_sfence` needs SSE, part of the x86-64 baseline; it has no operands and only
    // orders this thread's stores.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    }
}

/// A population array seen as values of `T`: its raw stored elements ([`Real::Stored`]) and,
/// for a compact precision ([`Real::COMPACT`]), the rest values `w_i` they are kept relative
/// to: element `e` of population `i`'s slots holds `to_stored(f − w_i)`.
///
/// Every access names the population of the slot it touches (not of the value moving through
/// it: the AA scheme moves `h_i` into a slot of `ī`), so an element keeps one shift whatever
/// the state, and raw copies of elements (halos, folds) stay exact.
#[derive(Clone, Copy)]
pub(crate) struct Pops<'a, T: Real> {
    /// The stored elements.
    pub raw: RawBuf<'a, T::Stored>,
    /// `w_i` in `T` (read only when `T::COMPACT`).
    rest: &'a [T],
}

impl<'a, T: Real> Pops<'a, T> {
    pub(crate) fn new(raw: RawBuf<'a, T::Stored>, rest: &'a [T]) -> Self {
        Self { raw, rest }
    }

    /// Another array of the same populations, stored relative to the same rest values.
    pub(crate) fn with_raw(self, raw: RawBuf<'a, T::Stored>) -> Self {
        Self { raw, ..self }
    }

    /// The value of population `i`'s element `e`.
    #[inline(always)]
    pub(crate) fn get(&self, e: usize, i: usize) -> T {
        value(self.raw.get(e), self.rest, i)
    }

    /// Writes `v` to population `i`'s element `e`.
    #[inline(always)]
    pub(crate) fn set(&self, e: usize, i: usize, v: T) {
        self.raw.set(e, stored(v, self.rest, i))
    }

    /// Reads `VL` consecutive elements of population `i` from `e` on.
    #[inline(always)]
    pub(crate) fn load<const VL: usize>(&self, e: usize, i: usize) -> [T; VL] {
        self.values(i, self.raw.load::<VL>(e))
    }

    /// Writes `VL` consecutive elements of population `i` from `e` on.
    #[inline(always)]
    pub(crate) fn store<const VL: usize>(&self, e: usize, i: usize, v: [T; VL]) {
        self.raw.store::<VL>(e, self.stored_lanes(i, v))
    }

    /// As [`Pops::store`], with [`RawBuf::stream`].
    #[inline(always)]
    pub(crate) fn stream<const VL: usize>(&self, e: usize, i: usize, v: [T; VL]) {
        self.raw.stream::<VL>(e, self.stored_lanes(i, v))
    }

    /// The values of stored lanes of population `i`.
    #[inline(always)]
    pub(crate) fn values<const VL: usize>(&self, i: usize, s: [T::Stored; VL]) -> [T; VL] {
        let v = T::from_stored_lanes(s);
        if T::COMPACT {
            let w = self.rest[i];
            v.map(|x| x + w)
        } else {
            v
        }
    }

    /// The stored form of lanes of population `i`.
    #[inline(always)]
    pub(crate) fn stored_lanes<const VL: usize>(&self, i: usize, v: [T; VL]) -> [T::Stored; VL] {
        if T::COMPACT {
            let w = self.rest[i];
            T::to_stored_lanes(v.map(|x| x - w))
        } else {
            T::to_stored_lanes(v)
        }
    }

    /// See [`RawBuf::prefetch`].
    #[inline(always)]
    pub(crate) fn prefetch(&self, base: usize, i: isize) {
        self.raw.prefetch(base, i)
    }

    /// See [`RawBuf::prefetch_write`].
    #[inline(always)]
    pub(crate) fn prefetch_write(&self, base: usize, i: isize) {
        self.raw.prefetch_write(base, i)
    }
}

/// The value of a stored element of population `i` (`rest`: see [`Pops`]).
#[inline(always)]
pub(crate) fn value<T: Real>(s: T::Stored, rest: &[T], i: usize) -> T {
    let v = T::from_stored(s);
    if T::COMPACT {
        v + rest[i]
    } else {
        v
    }
}

/// The stored element of value `v` of population `i` (`rest`: see [`Pops`]).
#[inline(always)]
pub(crate) fn stored<T: Real>(v: T, rest: &[T], i: usize) -> T::Stored {
    if T::COMPACT {
        (v - rest[i]).to_stored()
    } else {
        v.to_stored()
    }
}

/// The rest populations `w_i` of a model in precision `T`: the shifts of [`Pops`].
pub(crate) fn rest_values<T: Real>(weights: &[f64]) -> Vec<T> {
    weights.iter().map(|&w| T::from_f64(w)).collect()
}

#[cfg(test)]
#[path = "storage_tests.rs"]
mod tests;
