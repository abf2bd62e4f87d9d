//! 64-byte aligned population storage, and the raw view the parallel kernels write through.
//!
//! Clusters of `VL` values are the unit of the CSoA and CAoSoA layouts (seed 000 §4); with the
//! base address aligned to 64 bytes (one cache line, one AVX-512 register) and `LY` a multiple
//! of `VL`, every cluster starts on a `VL·size_of::<T>()` boundary, so cluster loads and stores
//! are aligned vector moves.

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

/// A zero-initialised, 64-byte aligned, fixed-length array of `T`.
pub struct AlignedBuf<T: Real> {
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: the buffer owns its memory exclusively, like a `Vec<T>`; `T: Real` is `Send + Sync`.
unsafe impl<T: Real> Send for AlignedBuf<T> {}
// SAFETY: as above; shared references only read.
unsafe impl<T: Real> Sync for AlignedBuf<T> {}

impl<T: Real> AlignedBuf<T> {
    /// Allocates `len` zeros (all-zero bits are `0.0` for both precisions). The memory is
    /// first touched by the rayon workers, after the huge-page advice.
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

impl<T: Real> Drop for AlignedBuf<T> {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: allocated in `zeroed` with this very layout.
            unsafe { dealloc(self.ptr.as_ptr() as *mut u8, Self::alloc_layout(self.len)) }
        }
    }
}

impl<T: Real> Deref for AlignedBuf<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` is valid for `len` initialised values (zeroed at allocation).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Real> DerefMut for AlignedBuf<T> {
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

impl<T: Real> RawBuf<'_, T> {
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

    /// Asks the CPU to bring the cache line of element `base + i` into L1 ahead of use (the
    /// kernels interleave compute with streaming, and two cores alone do not keep enough
    /// misses in flight without it). A hint: it never faults, and `base + i` may lie outside
    /// the array (the address is formed with wrapping arithmetic and never dereferenced).
    #[inline(always)]
    pub(crate) fn prefetch(&self, base: usize, i: isize) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `_mm_prefetch` only needs SSE (baseline on x86-64) and does not access memory
        // architecturally.
        unsafe {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let p = self.ptr.wrapping_add(base).wrapping_offset(i);
            _mm_prefetch::<_MM_HINT_T0>(p as *const i8);
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
}
