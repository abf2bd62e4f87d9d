//! [`F16s`]: populations stored as IEEE binary16, computed in `f32` (FluidX3D's FP16S storage,
//! Lehmann et al., "Accuracy and performance of the lattice Boltzmann method with 64-bit,
//! 32-bit, and customized 16-bit number formats", Phys. Rev. E 106, 015308, 2022).
//!
//! A step loads each population, widens it to `f32` (exact), collides in `f32` and rounds the
//! result to binary16 (nearest, ties to even) as it stores it: half the bytes of `f32` per
//! sweep, the arithmetic unchanged. The lattice keeps `f_i − w_i` rather than `f_i`
//! ([`super::Real::COMPACT`]): binary16 has an 11-bit significand, so `f_i ≈ w_i ≈ 0.4` would be
//! resolved to `2⁻¹²` only, while the deviation from rest (of the order of the density and
//! velocity perturbations) is resolved relative to its own size, down to `2⁻²⁴` in the
//! subnormal range.
//!
//! On x86-64 a cluster converts with one `vcvtph2ps` / `vcvtps2ph` per 16 lanes with AVX-512F,
//! per 8 lanes with F16C (`target-cpu=native` on every AVX2 machine); elsewhere the `half`
//! crate converts lane by lane, with the same rounding. The conversions are on the critical
//! path of every population a kernel moves: with 8-lane conversions the D2Q9 in-place step ran
//! at 720–900 MLUPS against 1290–1390 in f32 (4096², two Zen 5 cores, `lbm bench`), bound by
//! the conversions' throughput rather than by memory.

use std::fmt::{Debug, Display};
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use half::f16;

use super::Real;

/// Binary16 storage, `f32` arithmetic: a value of the kernels' arithmetic (an `f32`), whose
/// populations the lattice stores as the binary16 bits of `f_i − w_i`.
#[derive(Clone, Copy, Default, PartialEq, PartialOrd, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct F16s(pub f32);

#[cfg(feature = "mpi")]
// SAFETY: `Equivalence` requires the datatype to describe the type's memory exactly: `F16s` is
// `repr(transparent)` over `f32` (same size, alignment and bits, no padding), so `f32`'s
// datatype (MPI_FLOAT) is `F16s`'s.
unsafe impl mpi::datatype::Equivalence for F16s {
    type Out = <f32 as mpi::datatype::Equivalence>::Out;
    fn equivalent_datatype() -> Self::Out {
        f32::equivalent_datatype()
    }
}

impl Debug for F16s {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Debug::fmt(&self.0, f)
    }
}

impl Display for F16s {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        Display::fmt(&self.0, f)
    }
}

macro_rules! binary_ops {
    ($($op:ident $fn:ident $op_assign:ident $fn_assign:ident),*) => {$(
        impl $op for F16s {
            type Output = F16s;
            #[inline(always)]
            fn $fn(self, rhs: F16s) -> F16s {
                F16s($op::$fn(self.0, rhs.0))
            }
        }
        impl $op_assign for F16s {
            #[inline(always)]
            fn $fn_assign(&mut self, rhs: F16s) {
                $op_assign::$fn_assign(&mut self.0, rhs.0)
            }
        }
    )*};
}

binary_ops!(
    Add add AddAssign add_assign,
    Sub sub SubAssign sub_assign,
    Mul mul MulAssign mul_assign,
    Div div DivAssign div_assign
);

impl Neg for F16s {
    type Output = F16s;
    #[inline(always)]
    fn neg(self) -> F16s {
        F16s(-self.0)
    }
}

/// Lanes per F16C conversion instruction (a 128-bit vector of binary16, 256 bits of `f32`).
#[cfg(all(target_arch = "x86_64", target_feature = "f16c"))]
const F16C_LANES: usize = 8;

/// Lanes per AVX-512F conversion instruction (256 bits of binary16, 512 bits of `f32`).
#[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
const AVX512_LANES: usize = 16;

impl Real for F16s {
    const NAME: &'static str = "f16s";
    const BYTES: usize = 2;
    /// The machine epsilon of the arithmetic (`f32`); a stored population is rounded to
    /// `2⁻¹¹` of its deviation from rest.
    const EPSILON: Self = F16s(f32::EPSILON);
    type Stored = u16;
    const COMPACT: bool = true;

    #[inline(always)]
    fn from_f64(x: f64) -> Self {
        F16s(x as f32)
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self.0 as f64
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        self.0.is_finite()
    }
    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        F16s(f32::mul_add(self.0, a.0, b.0))
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        F16s(self.0.sqrt())
    }
    #[inline(always)]
    fn abs(self) -> Self {
        F16s(self.0.abs())
    }
    #[inline(always)]
    fn max(self, other: Self) -> Self {
        F16s(self.0.max(other.0))
    }
    #[inline(always)]
    fn min(self, other: Self) -> Self {
        F16s(self.0.min(other.0))
    }
    #[inline(always)]
    fn to_stored(self) -> u16 {
        f16::from_f32(self.0).to_bits()
    }
    #[inline(always)]
    fn from_stored(s: u16) -> Self {
        F16s(f16::from_bits(s).to_f32())
    }

    #[inline(always)]
    fn from_stored_lanes<const VL: usize>(s: [u16; VL]) -> [Self; VL] {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
        if VL.is_multiple_of(AVX512_LANES) {
            use std::arch::x86_64::{_mm256_loadu_si256, _mm512_cvtph_ps, _mm512_storeu_ps};
            let mut out = [F16s(0.0); VL];
            // `VL` is a multiple of 16: the chunks cover both arrays, in step.
            let (outs, _) = out.as_chunks_mut::<AVX512_LANES>();
            for (o, h) in outs.iter_mut().zip(s.as_chunks::<AVX512_LANES>().0) {
                // SAFETY: AVX-512F, which the three intrinsics need (with AVX, which it
                // implies), is enabled at compile time (cfg above). The load reads the 32
                // bytes of `h: &[u16; 16]` and the store writes the 64 bytes of
                // `o: &mut [F16s; 16]` (`F16s` is a `repr(transparent)` `f32`): in bounds by
                // their types, and both moves are unaligned ones.
                unsafe {
                    let h = _mm256_loadu_si256(h.as_ptr().cast());
                    _mm512_storeu_ps(o.as_mut_ptr().cast(), _mm512_cvtph_ps(h));
                }
            }
            return out;
        }
        #[cfg(all(target_arch = "x86_64", target_feature = "f16c"))]
        if VL.is_multiple_of(F16C_LANES) {
            use std::arch::x86_64::_mm256_cvtph_ps;
            let mut out = [F16s(0.0); VL];
            // `VL` is a multiple of 8: the chunks cover both arrays, in step. The moves between
            // arrays and registers are `bytemuck` casts (same size, any bits valid): the same
            // unaligned loads and stores as the pointer intrinsics, without pointers.
            let (outs, _) = out.as_chunks_mut::<F16C_LANES>();
            for (o, h) in outs.iter_mut().zip(s.as_chunks::<F16C_LANES>().0) {
                // SAFETY: F16C, which `_mm256_cvtph_ps` needs, is enabled at compile time (cfg
                // above); the intrinsic touches no memory.
                *o = bytemuck::cast(unsafe { _mm256_cvtph_ps(bytemuck::cast(*h)) });
            }
            return out;
        }
        s.map(Self::from_stored)
    }

    #[inline(always)]
    fn to_stored_lanes<const VL: usize>(v: [Self; VL]) -> [u16; VL] {
        #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
        if VL.is_multiple_of(AVX512_LANES) {
            use std::arch::x86_64::{
                _mm256_storeu_si256, _mm512_cvtps_ph, _mm512_loadu_ps, _MM_FROUND_NO_EXC,
                _MM_FROUND_TO_NEAREST_INT,
            };
            let mut out = [0u16; VL];
            let (outs, _) = out.as_chunks_mut::<AVX512_LANES>();
            for (o, x) in outs.iter_mut().zip(v.as_chunks::<AVX512_LANES>().0) {
                // SAFETY: as in `from_stored_lanes`: AVX-512F enabled at compile time; the
                // load reads the 64 bytes of `x: &[F16s; 16]`, the store writes the 32 bytes
                // of `o: &mut [u16; 16]`, unaligned. Rounding to nearest, ties to even.
                unsafe {
                    let x = _mm512_loadu_ps(x.as_ptr().cast());
                    let h = _mm512_cvtps_ph::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(x);
                    _mm256_storeu_si256(o.as_mut_ptr().cast(), h);
                }
            }
            return out;
        }
        #[cfg(all(target_arch = "x86_64", target_feature = "f16c"))]
        if VL.is_multiple_of(F16C_LANES) {
            use std::arch::x86_64::{_mm256_cvtps_ph, _MM_FROUND_TO_NEAREST_INT};
            let mut out = [0u16; VL];
            // As in `from_stored_lanes`: chunks in step, moves by `bytemuck` casts.
            let (outs, _) = out.as_chunks_mut::<F16C_LANES>();
            for (o, x) in outs.iter_mut().zip(v.as_chunks::<F16C_LANES>().0) {
                // SAFETY: F16C, which `_mm256_cvtps_ph` needs, is enabled at compile time (cfg
                // above); the intrinsic touches no memory. The rounding is to nearest, ties to
                // even, as `half::f16::from_f32` rounds the scalar path.
                let h = unsafe { _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(bytemuck::cast(*x)) };
                *o = bytemuck::cast(h);
            }
            return out;
        }
        v.map(Self::to_stored)
    }
}

#[cfg(test)]
#[path = "f16s_tests.rs"]
mod tests;
