//! The velocity set and its weights: expansion of shells and the lattice checks of DESIGN.md
//! ("Checked at compile time"): dimensions, duplicates, closure under negation, weights
//! (count, sign, sum, symmetry), `cs²`, and the isotropy order of the tensor moments.

use num_traits::{Signed, ToPrimitive, Zero};
use syn::Error;

use crate::expr::{eval_const, Expr, ExprKind};
use crate::parse::{ModelDecl, VelocitiesDecl};
use crate::poly::{close, fmt_q, q, to_f64, Q};

/// Tolerance of the weight-sum check for decimal weights (the 1e-15).
const WEIGHT_SUM_TOL: f64 = 1e-15;
/// Tolerance of the `cs²` and isotropy checks, relative to the Gaussian moment.
const MOMENT_TOL: f64 = 1e-13;
/// Highest isotropy order examined.
const MAX_ISOTROPY: u32 = 12;

/// A checked velocity set.
pub struct Lattice {
    /// Velocities `c_i`, 2-D.
    pub c: Vec<[i32; 2]>,
    /// Exact weights.
    pub w: Vec<Q>,
    /// Exact `cs²`.
    pub cs2: Q,
    /// Index of `−c_i`.
    pub opposite: Vec<usize>,
    /// Largest `|c_iα|`.
    pub halo: usize,
    /// Highest order through which all tensor moments are isotropic.
    pub isotropy: u32,
}

fn missing(decl: &ModelDecl, what: &str, example: &str) -> Error {
    Error::new(
        decl.name.span(),
        format!(
            "model `{}` does not declare `{what}`: add `{example}`",
            decl.name
        ),
    )
}

/// Builds and checks the lattice of a declaration.
pub fn build(decl: &ModelDecl) -> syn::Result<Lattice> {
    let dim_expr = decl
        .dim
        .as_ref()
        .ok_or_else(|| missing(decl, "dim", "dim = 2;"))?;
    let dim = eval_const(dim_expr)?;
    if dim != q(2) {
        return Err(dim_expr.error(format!("dim = {dim}: the runtime's lattices are two-dimensional, so only `dim = 2` is supported"),
        ));
    }
    let vel = decl
        .velocities
        .as_ref()
        .ok_or_else(|| missing(decl, "velocities", "velocities = [(0, 0), (1, 0), …];"))?;
    let (c, shell_of, spans) = expand(vel)?;
    let opposite = opposites(&c, &spans)?;
    let w_expr = decl
        .weights
        .as_ref()
        .ok_or_else(|| missing(decl, "weights", "weights = [4/9, 1/9, …];"))?;
    let w = weights(w_expr, &c, &shell_of, vel.vectors.len(), &opposite)?;
    let cs2_expr = decl
        .cs2
        .as_ref()
        .ok_or_else(|| missing(decl, "cs2", "cs2 = 1/3;"))?;
    let cs2 = eval_const(cs2_expr)?;
    check_cs2(&c, &w, &cs2, cs2_expr)?;
    let isotropy = isotropy_order(&c, &w, &cs2);
    let halo = c
        .iter()
        .flat_map(|v| v.iter().map(|x| x.unsigned_abs() as usize))
        .max()
        .unwrap_or(0);
    Ok(Lattice {
        c,
        w,
        cs2,
        opposite,
        halo,
        isotropy,
    })
}

fn integer_vector(e: &Expr) -> syn::Result<[i32; 2]> {
    let ExprKind::Tuple(items) = &e.kind else {
        return Err(e.error("expected a velocity `(cx, cy)` with dim = 2 components"));
    };
    if items.len() != 2 {
        return Err(e.error(format!(
            "this velocity has {} components but dim = 2: every velocity needs exactly 2",
            items.len()
        )));
    }
    let mut v = [0i32; 2];
    for (slot, item) in v.iter_mut().zip(items) {
        let x = eval_const(item)?;
        *slot = x
            .is_integer()
            .then(|| x.to_integer().to_i32())
            .flatten()
            .filter(|x| x.abs() <= 16)
            .ok_or_else(|| {
                item.error("velocity components are whole numbers of lattice sites (|c| ≤ 16)")
            })?;
    }
    Ok(v)
}

/// Signed permutations of a 2-D shell vector: its four rotations by 90°, then those of its mirror
/// image, without repeats (so (1,0) gives the D2Q9 order (1,0), (0,1), (−1,0), (0,−1)).
fn shell(v: [i32; 2]) -> Vec<[i32; 2]> {
    let mut out: Vec<[i32; 2]> = Vec::new();
    for start in [v, [v[1], v[0]]] {
        let mut r = start;
        for _ in 0..4 {
            if !out.contains(&r) {
                out.push(r);
            }
            r = [-r[1], r[0]];
        }
    }
    out
}

type Expanded<'a> = (Vec<[i32; 2]>, Vec<usize>, Vec<&'a Expr>);

/// The velocity list with, for each velocity, its shell index and the span of its declaration.
fn expand(vel: &VelocitiesDecl) -> syn::Result<Expanded<'_>> {
    let (mut c, mut shell_of, mut spans) = (Vec::new(), Vec::new(), Vec::new());
    for (s, e) in vel.vectors.iter().enumerate() {
        let v = integer_vector(e)?;
        let members = if vel.shells { shell(v) } else { vec![v] };
        for m in members {
            if let Some(k) = c.iter().position(|x| *x == m) {
                let msg = if vel.shells {
                    let earlier = integer_vector(&vel.vectors[shell_of[k]])?;
                    format!(
                        "shell ({}, {}) repeats velocity ({}, {}) of the earlier shell ({}, {}): shells expand to all signed permutations, so list each shell once",
                        v[0], v[1], m[0], m[1], earlier[0], earlier[1]
                    )
                } else {
                    format!(
                        "velocity ({}, {}) appears twice (it is already entry {} of the list): velocities must be distinct",
                        m[0], m[1], k + 1
                    )
                };
                return Err(e.error(msg));
            }
            c.push(m);
            shell_of.push(s);
            spans.push(e);
        }
    }
    if c.is_empty() {
        return Err(Error::new(vel.span, "the velocity set is empty"));
    }
    Ok((c, shell_of, spans))
}

fn opposites(c: &[[i32; 2]], declared: &[&Expr]) -> syn::Result<Vec<usize>> {
    c.iter()
        .enumerate()
        .map(|(i, v)| {
            c.iter().position(|x| x[0] == -v[0] && x[1] == -v[1]).ok_or_else(|| {
                declared[i].error(format!(
                        "velocity ({}, {}) has no opposite ({}, {}) in the set: the set must be closed under negation (every c needs −c)",
                        v[0], v[1], -v[0], -v[1]
                    ))
            })
        })
        .collect()
}

fn weights(
    e: &Expr,
    c: &[[i32; 2]],
    shell_of: &[usize],
    nshells: usize,
    opp: &[usize],
) -> syn::Result<Vec<Q>> {
    let ExprKind::List(items) = &e.kind else {
        return Err(e.error("expected a list of weights `[w0, w1, …]`"));
    };
    let per_shell = nshells != c.len() && items.len() == nshells;
    if items.len() != c.len() && !per_shell {
        let shells = if nshells != c.len() {
            format!(" (or one per shell: {nshells})")
        } else {
            String::new()
        };
        return Err(e.error(format!(
            "{} weights for {} velocities: give one weight per velocity{shells}",
            items.len(),
            c.len()
        )));
    }
    let mut given = Vec::with_capacity(items.len());
    for item in items {
        let w = eval_const(item)?;
        if !w.is_positive() {
            return Err(item.error(format!(
                "weight {} is not positive: every weight must be > 0",
                fmt_q(&w)
            )));
        }
        given.push(w);
    }
    let w: Vec<Q> = (0..c.len())
        .map(|i| given[if per_shell { shell_of[i] } else { i }].clone())
        .collect();
    let sum: Q = w.iter().sum();
    if !close(&sum, &q(1), WEIGHT_SUM_TOL) {
        return Err(e.error(format!(
            "the weights sum to {:.17} (off by {:.3e}): they must sum to 1",
            to_f64(&sum),
            to_f64(&(sum.clone() - q(1)))
        )));
    }
    for (i, &j) in opp.iter().enumerate() {
        if w[i] != w[j] {
            let k = if per_shell { shell_of[i] } else { i };
            return Err(items[k].error(format!(
                "w({}, {}) = {} but w({}, {}) = {}: weights must be symmetric, w(c) = w(−c)",
                c[i][0],
                c[i][1],
                fmt_q(&w[i]),
                c[j][0],
                c[j][1],
                fmt_q(&w[j])
            )));
        }
    }
    Ok(w)
}

/// `Σ_i w_i c_ix^a c_iy^b`, exactly.
pub fn moment(c: &[[i32; 2]], w: &[Q], a: u32, b: u32) -> Q {
    c.iter()
        .zip(w)
        .map(|(v, wi)| {
            wi * num_traits::pow(q(v[0].into()), a as usize)
                * num_traits::pow(q(v[1].into()), b as usize)
        })
        .sum()
}

/// The moment of a Gaussian of variance `cs²`: `cs^{a+b} (a−1)!! (b−1)!!` for even a, b, else 0.
fn gaussian(cs2: &Q, a: u32, b: u32) -> Q {
    if a % 2 == 1 || b % 2 == 1 {
        return Q::zero();
    }
    let dfact = |n: u32| (1..n).step_by(2).fold(q(1), |acc, k| acc * q(k.into()));
    num_traits::pow(cs2.clone(), ((a + b) / 2) as usize) * dfact(a) * dfact(b)
}

fn check_cs2(c: &[[i32; 2]], w: &[Q], cs2: &Q, expr: &Expr) -> syn::Result<()> {
    for (a, b, name) in [
        (2, 0, "Σ w c_x²"),
        (0, 2, "Σ w c_y²"),
        (1, 1, "Σ w c_x c_y"),
    ] {
        let m = moment(c, w, a, b);
        let want = gaussian(cs2, a, b);
        if !close(&m, &want, MOMENT_TOL) {
            return Err(expr.error(
                format!(
                    "cs2 = {} does not match the lattice: {name} = {} but Σ w c c must equal cs2·I (cs2 = {} for these weights)",
                    fmt_q(cs2),
                    fmt_q(&m),
                    fmt_q(&moment(c, w, 2, 0))
                ),
            ));
        }
    }
    Ok(())
}

/// The highest `n` such that every tensor moment of order `k ≤ n` equals the Gaussian's.
fn isotropy_order(c: &[[i32; 2]], w: &[Q], cs2: &Q) -> u32 {
    for k in 1..=MAX_ISOTROPY {
        let ok = (0..=k).all(|a| {
            let want = gaussian(cs2, a, k - a);
            let scale = num_traits::pow(cs2.clone(), (k / 2) as usize)
                * gaussian(&q(1), k - k % 2, 0).max(q(1));
            let got = moment(c, w, a, k - a);
            to_f64(&(got - want)).abs() <= MOMENT_TOL * to_f64(&scale)
        });
        if !ok {
            return k - 1;
        }
    }
    MAX_ISOTROPY
}
