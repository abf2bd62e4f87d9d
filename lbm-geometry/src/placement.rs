//! Where a body lies: its shape's own coordinates scaled, rotated and moved into the lattice's,
//! `p = offset + R (s · local)`.

use crate::vec3::{self, M3, V3};

/// A similarity transform from a shape's coordinates to the lattice's.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placement {
    scale: f64,
    rotation: M3,
    offset: V3,
}

impl Default for Placement {
    fn default() -> Self {
        Self {
            scale: 1.0,
            rotation: vec3::IDENTITY,
            offset: [0.0; 3],
        }
    }
}

impl Placement {
    /// The scale factor `s`.
    pub(crate) fn scale(&self) -> f64 {
        self.scale
    }

    /// The point `p` of the lattice in the shape's coordinates.
    pub(crate) fn to_local(&self, p: V3) -> V3 {
        vec3::scale(
            vec3::apply_transposed(&self.rotation, vec3::sub(p, self.offset)),
            1.0 / self.scale,
        )
    }

    /// The point `local` of the shape in the lattice's coordinates.
    pub(crate) fn to_lattice(&self, local: V3) -> V3 {
        vec3::add(
            self.offset,
            vec3::apply(&self.rotation, vec3::scale(local, self.scale)),
        )
    }

    /// The direction `d` of the lattice in the shape's coordinates (a segment's parameter
    /// `t` is the same in both).
    pub(crate) fn direction_to_local(&self, d: V3) -> V3 {
        vec3::scale(vec3::apply_transposed(&self.rotation, d), 1.0 / self.scale)
    }

    /// Scaled by `s` about the lattice's origin.
    pub(crate) fn scaled(self, s: f64) -> Self {
        Self {
            scale: self.scale * s,
            offset: vec3::scale(self.offset, s),
            ..self
        }
    }

    /// Rotated by `rotation` about the lattice's origin.
    pub(crate) fn rotated(self, rotation: &M3) -> Self {
        Self {
            rotation: vec3::product(rotation, &self.rotation),
            offset: vec3::apply(rotation, self.offset),
            ..self
        }
    }

    /// Moved by `by`.
    pub(crate) fn moved(self, by: V3) -> Self {
        Self {
            offset: vec3::add(self.offset, by),
            ..self
        }
    }
}
