//! The streaming schemes: how a step moves the populations through memory (Calore et al.
//! 2019 §4; the AA pattern of Bailey et al. 2009), which every backend runs alike (see
//! [`crate::kernels`] for the two schemes' half-steps).

/// How the populations are streamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Two copies read and written alternately (A-B pattern, Calore et al. 2019 §4): pull
    /// streaming.
    TwoCopy,
    /// One copy updated in place (AA pattern): half the memory; same bytes moved per step
    /// without the write-allocate reads of the second array.
    InPlace,
}

impl Scheme {
    /// Name as printed in tables.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::TwoCopy => "two-copy",
            Scheme::InPlace => "in-place",
        }
    }

    /// Whether the step taken from this state pulls from the x-halos: every two-copy step
    /// and the AA pull half-step (even state); the AA local half-step (odd state) reads only
    /// its own sites.
    pub(crate) fn pulls(self, odd: bool) -> bool {
        self == Scheme::TwoCopy || !odd
    }

    /// Whether the state was reached by pushing into the x-halos (the odd AA state: the pull
    /// half-step wrote the populations that crossed an edge of the columns into the halos).
    pub(crate) fn pushed(self, odd: bool) -> bool {
        self == Scheme::InPlace && odd
    }
}
