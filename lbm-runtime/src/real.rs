//! Floating-point precision of a lattice: `f32`, `f64`, or [`F16s`] (binary16 storage with
//! `f32` arithmetic).
//!
//! Generated kernels are generic over [`Real`], so one model declaration serves every precision
//! (Calore et al. 2019 §4 run the D2Q37 code in double precision; single precision halves the
//! memory traffic of the memory-bound kernels, and `F16s` halves it again). A precision is two
//! things: the type the kernels compute in (`Self`) and the form a population is kept in between
//! steps ([`Real::Stored`]); only the loads and stores of the populations see the second.

mod f16s;

pub use f16s::F16s;

use std::fmt::{Debug, Display};
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

/// Values that MPI can send: with the `mpi` feature, the types with an MPI datatype
/// (`f32` and `f64` are); without it, every type.
#[cfg(feature = "mpi")]
pub trait Transferable: mpi::datatype::Equivalence {}
#[cfg(feature = "mpi")]
impl<T: mpi::datatype::Equivalence> Transferable for T {}
/// Values that MPI can send: with the `mpi` feature, the types with an MPI datatype
/// (`f32` and `f64` are); without it, every type.
#[cfg(not(feature = "mpi"))]
pub trait Transferable {}
#[cfg(not(feature = "mpi"))]
impl<T> Transferable for T {}

/// A floating-point type the kernels can run in (and, with the `mpi` feature, send between
/// ranks).
pub trait Real:
    Copy
    + Transferable
    + Default
    + Debug
    + Display
    + PartialOrd
    + Send
    + Sync
    + 'static
    + bytemuck::Pod
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + SubAssign
    + MulAssign
    + DivAssign
{
    /// `"f32"`, `"f64"` or `"f16s"`, as printed in summaries and checkpoint headers.
    const NAME: &'static str;
    /// Size in bytes of one stored population (`Self::Stored`): what a sweep moves per value.
    const BYTES: usize;
    /// How a population is kept in memory: the value itself in `f32` and `f64`, the binary16
    /// bits of its deviation from rest in [`F16s`].
    type Stored: bytemuck::Pod + Default + Debug + Send + Sync;
    /// Whether the populations are stored narrower than they are computed, as their deviation
    /// `f_i − w_i` from the rest state (FluidX3D's FP16S, Lehmann et al. 2022: a population
    /// near `w_i ≈ 0.4` would keep only ~3 decimal digits in binary16, its deviation keeps them
    /// relative to the flow's own scale).
    const COMPACT: bool;
    /// The stored form of a value (rounded to nearest, ties to even, when narrower).
    fn to_stored(self) -> Self::Stored;
    /// The value of a stored form (exact).
    fn from_stored(s: Self::Stored) -> Self;
    /// [`Real::from_stored`] on `VL` lanes (vector conversion instructions where the target
    /// has them).
    #[inline(always)]
    fn from_stored_lanes<const VL: usize>(s: [Self::Stored; VL]) -> [Self; VL] {
        s.map(Self::from_stored)
    }
    /// [`Real::to_stored`] on `VL` lanes.
    #[inline(always)]
    fn to_stored_lanes<const VL: usize>(v: [Self; VL]) -> [Self::Stored; VL] {
        v.map(Self::to_stored)
    }
    /// Machine epsilon.
    const EPSILON: Self;
    /// Converts from `f64`, rounding to nearest (used for constants and parameters).
    fn from_f64(x: f64) -> Self;
    /// Widens to `f64`.
    fn to_f64(self) -> f64;
    /// Whether the value is neither NaN nor infinite.
    fn is_finite(self) -> bool;
    /// `self * a + b`: one fused multiply-add instruction (one rounding) where the target has
    /// FMA, else a multiply and an add. The generated kernels use it for every multiply that
    /// feeds an add, which halves their instruction count on FMA hardware.
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// The square root (state-dependent relaxation rates: Smagorinsky's model).
    fn sqrt(self) -> Self;
    /// The absolute value (finite-difference schemes: [`crate::fd`]).
    fn abs(self) -> Self;
    /// The larger of two values (IEEE `maxNum`: a NaN loses to a number).
    fn max(self, other: Self) -> Self;
    /// The smaller of two values.
    fn min(self, other: Self) -> Self;
}

macro_rules! impl_real {
    ($t:ty, $name:literal) => {
        impl Real for $t {
            const NAME: &'static str = $name;
            const BYTES: usize = std::mem::size_of::<$t>();
            const EPSILON: Self = <$t>::EPSILON;
            type Stored = $t;
            const COMPACT: bool = false;
            #[inline(always)]
            fn to_stored(self) -> $t {
                self
            }
            #[inline(always)]
            fn from_stored(s: $t) -> Self {
                s
            }
            #[inline(always)]
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                if cfg!(target_feature = "fma") {
                    <$t>::mul_add(self, a, b)
                } else {
                    self * a + b
                }
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn max(self, other: Self) -> Self {
                <$t>::max(self, other)
            }
            #[inline(always)]
            fn min(self, other: Self) -> Self {
                <$t>::min(self, other)
            }
        }
    };
}

impl_real!(f32, "f32");
impl_real!(f64, "f64");
