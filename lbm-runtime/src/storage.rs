//! 64-byte aligned population storage, the raw view the parallel kernels write through, and
//! [`Pops`], that view seen as values of a precision.
//!
//! Clusters of `VL` values are the unit of the CSoA and CAoSoA layouts (Calore et al. 2019 §4);
//! with the base address aligned to 64 bytes (one cache line, one AVX-512 register) and `LY` a
//! multiple of `VL`, every cluster starts on a `VL·size_of::<E>()` boundary, so cluster loads and
//! stores are aligned vector moves.

use std::alloc::{alloc, dealloc, Layout as AllocLayout};
use std::marker::PhantomData;
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
pub struct AlignedBuf<T: Element> {
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: the buffer owns its memory exclusively, like a `Vec<T>`; `T: Element` is
// `Send + Sync`.
unsafe impl<T: Element> Send for AlignedBuf<T> {}
// SAFETY: as above; shared references only read.
unsafe impl<T: Element> Sync for AlignedBuf<T> {}

impl<T: Element> AlignedBuf<T> {
    /// Allocates `len` zeros (all-zero bits are `0.0` in every precision; in a compact one,
    /// [`Real::COMPACT`], a population at rest). The memory is first touched by the rayon
    /// workers, after the huge-page advice.
    ///
    /// # Panics
    /// If the size overflows `isize` or the allocator fails (out of memory).
    pub fn zeroed(len: usize) -> Self {
        if len == 0 {
            return Self {
                ptr: NonNull::dangling(),
                len,
            };
        }
        let layout = Self::alloc_layout(len);
        // SAFETY: the layout has non-zero size.
        let raw = unsafe { alloc(layout) } as *mut T;
        let ptr = NonNull::new(raw).unwrap_or_else(|| std::alloc::handle_alloc_error(layout));
        advise_huge_pages(raw as *mut u8, layout.size());
        let buf = Self { ptr, len };
        let chunk = (HUGE_PAGE / std::mem::size_of::<T>()).max(1);
        let base = buf.ptr.as_ptr() as usize;
        (0..len.div_ceil(chunk)).into_par_iter().for_each(|c| {
            let start = c * chunk;
            let n = chunk.min(len - start);
            // SAFETY: chunks are disjoint and inside the allocation; writing zeros initialises.
            unsafe { std::ptr::write_bytes((base as *mut T).add(start), 0, n) }
        });
        buf
    }

    fn alloc_layout(len: usize) -> AllocLayout {
        let bytes = len * std::mem::size_of::<T>();
        let align = if bytes >= HUGE_PAGE { HUGE_PAGE } else { ALIGN };
        AllocLayout::from_size_align(bytes, align)
            .expect("population array larger than the address space")
    }

    /// A raw view for the kernels (see [`RawBuf`]).
    pub(crate) fn raw(&mut self) -> RawBuf<'_, T> {
        RawBuf {
            ptr: self.ptr.as_ptr(),
            len: self.len,
            _life: PhantomData,
        }
    }
}

/// Asks Linux to back `[p, p + bytes)` with transparent huge pages; a hint, ignored elsewhere
/// or when it fails (THP disabled).
fn advise_huge_pages(p: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    if bytes >= HUGE_PAGE {
        // SAFETY: the range is one live allocation of ours; MADV_HUGEPAGE changes no contents.
        unsafe {
            libc::madvise(p as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, bytes);
}

impl<T: Element> Drop for AlignedBuf<T> {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: allocated in `zeroed` with this very layout.
            unsafe { dealloc(self.ptr.as_ptr() as *mut u8, Self::alloc_layout(self.len)) }
        }
    }
}

impl<T: Element> Deref for AlignedBuf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` is valid for `len` initialised values (zeroed at allocation).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Element> DerefMut for AlignedBuf<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`, and `&mut self` is exclusive.
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
#[derive(Clone, Copy)]
pub(crate) struct RawBuf<'a, T> {
    ptr: *mut T,
    len: usize,
    _life: PhantomData<&'a mut [T]>,
}

// SAFETY: see the type's documentation: the kernels access disjoint elements.
unsafe impl<T: Send> Send for RawBuf<'_, T> {}
// SAFETY: as above.
unsafe impl<T: Sync> Sync for RawBuf<'_, T> {}

impl<T: Element> RawBuf<'_, T> {
    /// Reads element `i`.
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> T {
        debug_assert!(i < self.len);
        // SAFETY: in bounds (the layouts' index functions stay inside the allocation) and no
        // other worker writes this element during the kernel (type documentation).
        unsafe { self.ptr.add(i).read() }
    }

    /// Writes element `i`.
    #[inline(always)]
    pub(crate) fn set(&self, i: usize, v: T) {
        debug_assert!(i < self.len);
        // SAFETY: as in `get`.
        unsafe { self.ptr.add(i).write(v) }
    }

    /// Reads `VL` consecutive elements starting at `i`.
    #[inline(always)]
    pub(crate) fn load<const VL: usize>(&self, i: usize) -> [T; VL] {
        debug_assert!(i + VL <= self.len);
        // SAFETY: as in `get`; `[T; VL]` has the alignment of `T`.
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
        // SAFETY: `_mm_prefetch` only needs SSE (baseline on x86-64) and does not access memory
        // architecturally.
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
        debug_assert!(i + VL <= self.len);
        // SAFETY: as in `get`.
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
            debug_assert!(i + VL <= self.len);
            debug_assert_eq!(self.ptr.wrapping_add(i) as usize % ALIGN, 0);
            // SAFETY: AVX-512F is enabled at compile time; `v` is 64 bytes, and element `i`
            // starts a 64-byte line inside the allocation (the clustered layouts' clusters
            // start on multiples of `VL` from a 64-byte aligned base); the line is this
            // worker's alone (type documentation).
            unsafe {
                let x = _mm512_loadu_si512(v.as_ptr().cast::<__m512i>());
                _mm512_stream_si512(self.ptr.add(i).cast::<__m512i>(), x);
            }
            return;
        }
        #[cfg(all(target_arch = "x86_64", target_feature = "avx"))]
        if VL * std::mem::size_of::<T>() == ALIGN / 2 {
            use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_stream_si256};
            debug_assert!(i + VL <= self.len);
            debug_assert_eq!(self.ptr.wrapping_add(i) as usize % (ALIGN / 2), 0);
            // SAFETY: as above, with AVX and a 32-byte aligned half line.
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
    // SAFETY: `sfence` has no operands and only orders stores.
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
