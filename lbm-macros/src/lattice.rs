//! The velocity set and its weights: expansion of shells and the lattice checks that `lbm_model!`
//! documents under "What is checked at compile time": dimensions, duplicates, closure under
//! negation, weights (count, sign, sum, symmetry), `cs²`, and the isotropy order of the tensor
//! moments, in two or three dimensions. Velocities are stored with three components (`c_z = 0` in
//! 2-D), the form the runtime's `Model::VELOCITIES` takes.

use num_traits::{Signed, ToPrimitive, Zero};
use syn::Error;

use crate::expr::{eval_const, Expr, ExprKind};
use crate::parse::{ModelDecl, VelocitiesDecl};
use crate::poly::{close, fmt_q, q, to_f64, Q};

/// Tolerance of the weight-sum check for decimal weights: 25-digit weights such as D2Q37's
/// sum to 1 within it, a mistyped digit does not.
const WEIGHT_SUM_TOL: f64 = 1e-15;
/// Tolerance of the `cs²` and isotropy checks, relative to the Gaussian moment.
const MOMENT_TOL: f64 = 1e-13;
/// Highest isotropy order examined.
const MAX_ISOTROPY: u32 = 12;

/// A checked velocity set.
pub struct Lattice {
    /// Spatial dimension, 2 or 3.
    pub dim: usize,
    /// Velocities `c_i`, three components (the third is zero in 2-D).
    pub c: Vec<[i32; 3]>,
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
    let dim = match eval_const(dim_expr)? {
        d if d == q(2) => 2,
        d if d == q(3) => 3,
        d => {
            return Err(dim_expr.error(format!(
                "dim = {d}: the runtime's lattices are two- or three-dimensional, so `dim = 2` or `dim = 3`"
            )))
        }
    };
    let vel = decl
        .velocities
        .as_ref()
        .ok_or_else(|| missing(decl, "velocities", "velocities = [(0, 0), (1, 0), …];"))?;
    let (c, shell_of, spans) = expand(vel, dim)?;
    let opposite = opposites(&c, dim, &spans)?;
    let w_expr = decl
        .weights
        .as_ref()
        .ok_or_else(|| missing(decl, "weights", "weights = [4/9, 1/9, …];"))?;
    let w = weights(w_expr, &c, dim, &shell_of, vel.vectors.len(), &opposite)?;
    let cs2_expr = decl
        .cs2
        .as_ref()
        .ok_or_else(|| missing(decl, "cs2", "cs2 = 1/3;"))?;
    let cs2 = eval_const(cs2_expr)?;
    check_cs2(&c, &w, &cs2, dim, cs2_expr)?;
    let isotropy = isotropy_order(&c, &w, &cs2, dim);
    let halo = c
        .iter()
        .flat_map(|v| v.iter().map(|x| x.unsigned_abs() as usize))
        .max()
        .unwrap_or(0);
    Ok(Lattice {
        dim,
        c,
        w,
        cs2,
        opposite,
        halo,
        isotropy,
    })
}

/// A velocity written as its components, `(1, 0)` or `(1, 0, 0)`.
pub fn fmt_vector(v: &[i32; 3], dim: usize) -> String {
    let parts: Vec<String> = v[..dim].iter().map(i32::to_string).collect();
    format!("({})", parts.join(", "))
}

fn integer_vector(e: &Expr, dim: usize) -> syn::Result<[i32; 3]> {
    let ExprKind::Tuple(items) = &e.kind else {
        let example = if dim == 2 { "(cx, cy)" } else { "(cx, cy, cz)" };
        return Err(e.error(format!(
            "expected a velocity `{example}` with dim = {dim} components"
        )));
    };
    if items.len() != dim {
        return Err(e.error(format!(
            "this velocity has {} components but dim = {dim}: every velocity needs exactly {dim}",
            items.len()
        )));
    }
    let mut v = [0i32; 3];
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

/// Signed permutations of a shell vector, without repeats. In 2-D: its four rotations by 90°,
/// then those of its mirror image (so (1,0) gives the D2Q9 order (1,0), (0,1), (−1,0), (0,−1)).
/// In 3-D: the cyclic permutations of the components (moving the first to y, then to z),
/// each with every sign pattern (positive before negative, the sign of x varying slowest), then
/// the odd permutations likewise, so (1,0,0) gives (1,0,0), (−1,0,0), (0,1,0), (0,−1,0),
/// (0,0,1), (0,0,−1).
fn shell(v: [i32; 3], dim: usize) -> Vec<[i32; 3]> {
    let mut out: Vec<[i32; 3]> = Vec::new();
    let mut add = |r: [i32; 3]| {
        if !out.contains(&r) {
            out.push(r);
        }
    };
    if dim == 2 {
        for start in [v, [v[1], v[0], 0]] {
            let mut r = start;
            for _ in 0..4 {
                add(r);
                r = [-r[1], r[0], 0];
            }
        }
    } else {
        let perms = [
            [0, 1, 2],
            [2, 0, 1],
            [1, 2, 0],
            [1, 0, 2],
            [0, 2, 1],
            [2, 1, 0],
        ];
        for p in perms {
            let r = [v[p[0]], v[p[1]], v[p[2]]];
            for signs in 0..8 {
                let s = |a: usize| if signs >> (2 - a) & 1 == 1 { -1 } else { 1 };
                add([s(0) * r[0], s(1) * r[1], s(2) * r[2]]);
            }
        }
    }
    out
}

type Expanded<'a> = (Vec<[i32; 3]>, Vec<usize>, Vec<&'a Expr>);

/// The velocity list with, for each velocity, its shell index and the span of its declaration.
fn expand(vel: &VelocitiesDecl, dim: usize) -> syn::Result<Expanded<'_>> {
    let (mut c, mut shell_of, mut spans) = (Vec::new(), Vec::new(), Vec::new());
    let f = |v: &[i32; 3]| fmt_vector(v, dim);
    for (s, e) in vel.vectors.iter().enumerate() {
        let v = integer_vector(e, dim)?;
        let members = if vel.shells { shell(v, dim) } else { vec![v] };
        for m in members {
            if let Some(k) = c.iter().position(|x| *x == m) {
                let msg = if vel.shells {
                    let earlier = integer_vector(&vel.vectors[shell_of[k]], dim)?;
                    format!(
                        "shell {} repeats velocity {} of the earlier shell {}: shells expand to all signed permutations, so list each shell once",
                        f(&v), f(&m), f(&earlier)
                    )
                } else {
                    format!(
                        "velocity {} appears twice (it is already entry {} of the list): velocities must be distinct",
                        f(&m), k + 1
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

fn opposites(c: &[[i32; 3]], dim: usize, declared: &[&Expr]) -> syn::Result<Vec<usize>> {
    c.iter()
        .enumerate()
        .map(|(i, v)| {
            let minus = v.map(|x| -x);
            c.iter().position(|x| *x == minus).ok_or_else(|| {
                declared[i].error(format!(
                        "velocity {} has no opposite {} in the set: the set must be closed under negation (every c needs −c)",
                        fmt_vector(v, dim), fmt_vector(&minus, dim)
                    ))
            })
        })
        .collect()
}

fn weights(
    e: &Expr,
    c: &[[i32; 3]],
    dim: usize,
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
                "w{} = {} but w{} = {}: weights must be symmetric, w(c) = w(−c)",
                fmt_vector(&c[i], dim),
                fmt_q(&w[i]),
                fmt_vector(&c[j], dim),
                fmt_q(&w[j])
            )));
        }
    }
    Ok(w)
}

/// `Σ_i w_i c_ix^a c_iy^b c_iz^e` for the exponents `p = [a, b, e]`, exactly.
pub fn moment(c: &[[i32; 3]], w: &[Q], p: [u32; 3]) -> Q {
    c.iter()
        .zip(w)
        .map(|(v, wi)| {
            (0..3).fold(wi.clone(), |acc, a| {
                acc * num_traits::pow(q(v[a].into()), p[a] as usize)
            })
        })
        .sum()
}

/// The moment of a Gaussian of variance `cs²`: `cs^{|p|} Π (p_α − 1)!!` when every exponent is
/// even, else 0.
fn gaussian(cs2: &Q, p: [u32; 3]) -> Q {
    if p.iter().any(|a| a % 2 == 1) {
        return Q::zero();
    }
    let dfact = |n: u32| (1..n).step_by(2).fold(q(1), |acc, k| acc * q(k.into()));
    let total: u32 = p.iter().sum();
    p.iter().fold(
        num_traits::pow(cs2.clone(), (total / 2) as usize),
        |acc, &a| acc * dfact(a),
    )
}

/// The exponent vectors `p` with `|p| = k` in `dim` dimensions (`p_z = 0` in 2-D).
fn exponents(k: u32, dim: usize) -> Vec<[u32; 3]> {
    let mut out = Vec::new();
    for a in 0..=k {
        if dim == 2 {
            out.push([a, k - a, 0]);
        } else {
            out.extend((0..=k - a).map(|b| [a, b, k - a - b]));
        }
    }
    out
}

/// The name of a moment `Σ w c_x^a c_y^b c_z^e`, e.g. `Σ w c_x c_y`.
fn moment_name(p: [u32; 3]) -> String {
    let mut s = String::from("Σ w");
    for (a, axis) in ["x", "y", "z"].iter().enumerate() {
        match p[a] {
            0 => {}
            1 => s += &format!(" c_{axis}"),
            2 => s += &format!(" c_{axis}²"),
            n => s += &format!(" c_{axis}^{n}"),
        }
    }
    s
}

fn check_cs2(c: &[[i32; 3]], w: &[Q], cs2: &Q, dim: usize, expr: &Expr) -> syn::Result<()> {
    let mut order = exponents(2, dim);
    // The diagonal first (c_x², c_y², c_z²), then the off-diagonal products.
    order.sort_by_key(|p| (p.contains(&1), std::cmp::Reverse(*p)));
    for p in order {
        let m = moment(c, w, p);
        let want = gaussian(cs2, p);
        if !close(&m, &want, MOMENT_TOL) {
            return Err(expr.error(
                format!(
                    "cs2 = {} does not match the lattice: {} = {} but Σ w c c must equal cs2·I (cs2 = {} for these weights)",
                    fmt_q(cs2),
                    moment_name(p),
                    fmt_q(&m),
                    fmt_q(&moment(c, w, [2, 0, 0]))
                ),
            ));
        }
    }
    Ok(())
}

/// The highest `n` such that every tensor moment of order `k ≤ n` equals the Gaussian's.
fn isotropy_order(c: &[[i32; 3]], w: &[Q], cs2: &Q, dim: usize) -> u32 {
    for k in 1..=MAX_ISOTROPY {
        let ok = exponents(k, dim).into_iter().all(|p| {
            let want = gaussian(cs2, p);
            let scale = num_traits::pow(cs2.clone(), (k / 2) as usize)
                * gaussian(&q(1), [k - k % 2, 0, 0]).max(q(1));
            let got = moment(c, w, p);
            to_f64(&(got - want)).abs() <= MOMENT_TOL * to_f64(&scale)
        });
        if !ok {
            return k - 1;
        }
    }
    MAX_ISOTROPY
}
