//! The element types a [`Csr`](super::Csr) may hold.

use std::fmt::{Debug, Display};
use std::ops::{Add, AddAssign, Div, Mul, Neg, Sub};

mod sealed {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for f32 {}
}

/// A floating-point element type: `f64` (the reference precision) or `f32`.
///
/// Sealed: the device side supports exactly these two, and every conversion
/// below is defined by IEEE 754 (round to nearest even), so results do not
/// depend on the platform.
pub trait Scalar:
    Copy
    + Debug
    + Display
    + Default
    + PartialEq
    + PartialOrd
    + Send
    + Sync
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + sealed::Sealed
{
    /// Additive identity.
    const ZERO: Self;
    /// Multiplicative identity.
    const ONE: Self;
    /// The type's name in C and CUDA C++ (`"double"`, `"float"`).
    const C_NAME: &'static str;
    /// `v` rounded to the nearest value of this type (may overflow to ±∞).
    fn from_f64(v: f64) -> Self;
    /// This value as an `f64` (exact for both types).
    fn to_f64(self) -> f64;
    /// Neither NaN nor ±∞.
    fn is_finite(self) -> bool;
    /// Absolute value.
    fn abs(self) -> Self;
}

impl Scalar for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const C_NAME: &'static str = "double";
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
    fn abs(self) -> Self {
        f64::abs(self)
    }
}

impl Scalar for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const C_NAME: &'static str = "float";
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    fn abs(self) -> Self {
        f32::abs(self)
    }
}
