//! The few operations on points and directions of 3-space the shapes need.

/// A point or a direction, `[x, y, z]` in lattice units.
pub type V3 = [f64; 3];

pub fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub fn scale(a: V3, s: f64) -> V3 {
    a.map(|v| v * s)
}

pub fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub fn norm(a: V3) -> f64 {
    dot(a, a).sqrt()
}

/// A 3 × 3 matrix, by rows.
pub type M3 = [[f64; 3]; 3];

pub const IDENTITY: M3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// `m · a`.
pub fn apply(m: &M3, a: V3) -> V3 {
    m.map(|row| dot(row, a))
}

/// `mᵀ · a` (for a rotation, its inverse).
pub fn apply_transposed(m: &M3, a: V3) -> V3 {
    std::array::from_fn(|j| m[0][j] * a[0] + m[1][j] * a[1] + m[2][j] * a[2])
}

/// `a · b`.
pub fn product(a: &M3, b: &M3) -> M3 {
    std::array::from_fn(|i| std::array::from_fn(|j| (0..3).map(|k| a[i][k] * b[k][j]).sum()))
}

/// The rotation by `degrees` about `axis` (right-handed; Rodrigues' formula
/// `R = cos θ I + sin θ [k]ₓ + (1 − cos θ) k kᵀ`), or `None` for a zero axis.
pub fn rotation(axis: V3, degrees: f64) -> Option<M3> {
    let n = norm(axis);
    if n == 0.0 || !n.is_finite() || !degrees.is_finite() {
        return None;
    }
    let k = scale(axis, 1.0 / n);
    let (s, c) = degrees.to_radians().sin_cos();
    Some(std::array::from_fn(|i| {
        std::array::from_fn(|j| {
            let skew = match (i, j) {
                (0, 1) => -k[2],
                (0, 2) => k[1],
                (1, 0) => k[2],
                (1, 2) => -k[0],
                (2, 0) => -k[1],
                (2, 1) => k[0],
                _ => 0.0,
            };
            let delta = if i == j { 1.0 } else { 0.0 };
            c * delta + s * skew + (1.0 - c) * k[i] * k[j]
        })
    }))
}

/// The rotation taking the z axis to the direction `to` (the shortest one).
pub fn z_to(to: V3) -> Option<M3> {
    let n = norm(to);
    if n == 0.0 || !n.is_finite() {
        return None;
    }
    let t = scale(to, 1.0 / n);
    let axis = cross([0.0, 0.0, 1.0], t);
    let s = norm(axis);
    if s < 1e-12 {
        return Some(if t[2] > 0.0 {
            IDENTITY
        } else {
            [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]]
        });
    }
    rotation(axis, s.atan2(t[2]).to_degrees())
}
