use super::*;

/// The bug this check fixes: `len · 8` wrapped to a small size, the allocation was tiny
/// and the zeroing wrote past it. Now it panics before allocating.
#[test]
#[should_panic(expected = "does not fit in memory")]
fn zeroed_rejects_a_length_whose_size_overflows() {
    let _ = AlignedBuf::<f64>::zeroed(usize::MAX / 4);
}

/// A size that fits `usize` but not `isize` (the most an allocation may have) panics too.
#[test]
#[should_panic(expected = "population array of 1152921504606846976 elements")]
#[cfg(target_pointer_width = "64")]
fn zeroed_rejects_a_size_beyond_isize() {
    let _ = AlignedBuf::<f64>::zeroed(isize::MAX as usize / 8 + 1);
}

#[test]
fn try_zeroed_returns_none_where_zeroed_panics_or_aborts() {
    assert!(AlignedBuf::<f64>::try_zeroed(usize::MAX / 4).is_none());
    assert!(AlignedBuf::<u16>::try_zeroed(usize::MAX).is_none());
    assert!(AlignedBuf::<f64>::try_zeroed(isize::MAX as usize / 8 + 1).is_none());
    // A valid layout no allocator can serve (more than the address space): `None`, not
    // an abort. (Miri stops at such a request instead of returning a null pointer.)
    #[cfg(all(target_pointer_width = "64", not(miri)))]
    assert!(AlignedBuf::<u8>::try_zeroed(isize::MAX as usize - 2 * HUGE_PAGE).is_none());
}

#[test]
fn a_buffer_is_zeroed_and_aligned() {
    // Under Miri a buffer of a huge page (2 MiB zeroed and read back element by element)
    // takes the interpreter many minutes: the sizes below one take the same code paths
    // except the huge page's alignment, checked outside Miri.
    let sizes: &[usize] = if cfg!(miri) {
        &[0, 1, 7, 1000]
    } else {
        &[0, 1, 7, 1000, HUGE_PAGE / 8 + 3]
    };
    for &len in sizes {
        let mut b = AlignedBuf::<f64>::try_zeroed(len).expect("fits");
        assert_eq!(b.len(), len);
        assert!(b.iter().all(|&x| x == 0.0), "len {len}");
        if len > 0 {
            let align = if 8 * len >= HUGE_PAGE {
                HUGE_PAGE
            } else {
                ALIGN
            };
            assert_eq!(b.as_ptr() as usize % align, 0, "len {len}");
            b[len - 1] = 1.5;
            assert_eq!(b[len - 1], 1.5);
        }
    }
    let b = AlignedBuf::<u16>::zeroed(33);
    assert!(b.iter().all(|&x| x == 0));
}

/// Zero-sized elements allocate nothing (an allocation of size zero is undefined
/// behaviour) and are still `len` of them.
#[test]
fn zero_sized_elements_allocate_nothing() {
    let b = AlignedBuf::<()>::zeroed(usize::MAX);
    assert_eq!(b.len(), usize::MAX);
    assert!(AlignedBuf::<()>::try_zeroed(5).is_some());
}

/// Every accessor of the raw view, and the non-temporal stores of whole lines (f64 ×8)
/// and half lines (f32 ×8, binary16 ×16), reads back what was written.
#[test]
fn the_raw_view_reads_back_its_writes() {
    let mut b = AlignedBuf::<f64>::zeroed(64);
    let raw = b.raw();
    raw.set(3, 2.5);
    assert_eq!(raw.get(3), 2.5);
    let v: [f64; 8] = std::array::from_fn(|l| l as f64);
    raw.store::<8>(8, v);
    assert_eq!(raw.load::<8>(8), v);
    raw.stream::<8>(16, v.map(|x| -x));
    raw.prefetch(0, 1 << 40);
    raw.prefetch_write(24, -3);
    store_fence();
    assert_eq!(raw.load::<8>(16), v.map(|x| -x));
    assert_eq!(b[17], -1.0);

    let mut h = AlignedBuf::<u16>::zeroed(48);
    let raw = h.raw();
    let w: [u16; 16] = std::array::from_fn(|l| l as u16 + 1);
    raw.stream::<16>(16, w);
    store_fence();
    assert_eq!(raw.load::<16>(16), w);

    let mut f = AlignedBuf::<f32>::zeroed(24);
    let raw = f.raw();
    raw.stream::<8>(8, [0.5; 8]);
    store_fence();
    assert_eq!(&f[8..16], &[0.5; 8]);
    assert_eq!(f[7], 0.0);
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "element 4 outside an array of 4")]
fn the_raw_view_checks_bounds_in_debug_builds() {
    let mut b = AlignedBuf::<f32>::zeroed(4);
    let _ = b.raw().get(4);
}
