//! Floating-point precision of a lattice: `f32` or `f64`.
//!
//! Generated kernels are generic over [`Real`], so one model declaration serves both precisions
//! (seed 000 §4 runs the D2Q37 code in double precision; single precision halves the memory
//! traffic of the memory-bound kernels).

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
    /// `"f32"` or `"f64"`, as printed in summaries and checkpoint headers.
    const NAME: &'static str;
    /// Size in bytes of one value.
    const BYTES: usize;
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
}

macro_rules! impl_real {
    ($t:ty, $name:literal) => {
        impl Real for $t {
            const NAME: &'static str = $name;
            const BYTES: usize = std::mem::size_of::<$t>();
            const EPSILON: Self = <$t>::EPSILON;
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
        }
    };
}

impl_real!(f32, "f32");
impl_real!(f64, "f64");
