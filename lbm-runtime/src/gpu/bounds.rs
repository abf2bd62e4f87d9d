//! The proof that a composed shader ([`super::shader`]) indexes every binding in range, so
//! that its module may be created without runtime bounds checks
//! (`wgpu::Device::create_shader_module_trusted` with `ShaderRuntimeChecks::unchecked()`):
//! naga then emits no clamp or select around each of the thousands of loads and stores of a
//! D2Q37 step.
//!
//! The proof has two halves.
//!
//! **By construction of the composed code** (shader.rs), each index is one of:
//! - a population index `idx(i, line, y)` reached through `src_ld/src_st/dst_ld/dst_st`, with
//!   `i < Q` (unrolled, or a `for` over `0..Q`), `y < LY` (`site_of` of a guarded thread, or
//!   `y_plus/y_minus`, which wrap modulo `LY` for shifts `≤ LY`), `z < LZ` likewise, and the
//!   storage line `ln(col, z)` of a column `col < LX + 2H`: a site kernel's thread is guarded
//!   by `t < NSITES` (or its window's count), so `x < LX`, and it reaches `x + H − c_x`, inside
//!   `[0, LX + 2H)` when `H ≥ |c_x|`; a bounced link's interpolation (`boundary::link`) reads
//!   the column `x + H + c_x` likewise, and the column `(x + 2c_x) mod LX + H` (u32
//!   arithmetic: below `LX + H` whatever the sum wraps to); halo and fold threads (`t < 2H·PLANE`) reach the columns
//!   `H + j`, `H + LX + j`, `H − 1 − jj`, `H + LX − 1 − jj` with `j, jj < H`;
//! - a word of `tables` or a value of `consts` at an offset the tables hold (bit set, line
//!   starts, the records' fields), or at `P`, `fields + j·NSITES + s` with `s < NSITES`;
//! - `mout[(p·PLANE + s)·NM + j]` with `p < ctl.y`, and the host never asks for more than
//!   the `mout` columns it allocated (`GpuLattice::moment_columns`);
//! - the pre-collision passes' `tables[RECS + (ctl.x + t)·REC + k]` and `mout[t·Q + i]` with
//!   `t < ctl.y`, and the host never asks for records beyond `NBC` nor for more than `mout`
//!   holds (`GpuLattice::exchanged`); the record's site is then one of the tables' proven
//!   sites;
//! - in place, a held population `mout[HELD + h]`: `h` a record's held start plus a link
//!   `i < Q`, or the first word of a hold entry `tables[HOLDS + e·HOLD]` with `e < 2·NHOLD`,
//!   each proven inside the held values past the moments; an entry's other words are a
//!   population, storage column, line and row, proven in range like the records' sites.
//!
//! **Checked on the host for each lattice** ([`prove`]): that the affine layout's largest
//! index over `i < Q`, `line < (LX + 2H)·LZ`, `y < LY` lies inside one copy and that the
//! bindings cover the copy; that the halo is as wide as the longest velocity in x and no
//! shift exceeds `LY`/`LZ`; that every offset and count in the boundary tables points inside
//! `tables` and `consts`; and that everything fits the shader's 32-bit arithmetic. Any
//! failure keeps the runtime checks, with the reason ([`super::GpuLattice::bounds_checks`]).
//!
//! The other checks `unchecked()` drops are safe for the same code: every loop is a `for` over
//! `0..Q` or the boundary lookup's bisection, whose interval `[lo, hi)` shrinks each turn; every
//! integer division is by a constant that is not zero (`PLANE`, `LY`, `LZ`, `VL`, `NK`,
//! `CHUNK`).

use super::bc::{self, BcTables, Field, Record, HOLD, NONE, REC};
use super::layout::AffineLayout;
use super::shader::ShaderSpec;
use crate::boundary::program::Kind;
use crate::boundary::TERMS_LEN;
use crate::Model;

/// The lengths (in values) of what a lattice binds, beside its [`ShaderSpec`].
#[derive(Debug, Clone, Copy)]
pub struct Bound {
    /// Values of each population binding but the last (the shader's `CHUNK`).
    pub chunk: u64,
    /// Values of one copy of the populations, over all its bindings.
    pub copy: u64,
    /// Values of the moments output `mout`.
    pub mout: u64,
    /// Columns of moments one pass may write (`ctl.y ≤ mout_cols`).
    pub mout_cols: u64,
    /// Values past `mout` in its binding, for the populations held in place (0 with two
    /// copies, whose shader holds none).
    pub held: u64,
}

/// Proves that the shader composed for `spec` reads and writes only inside the bindings of
/// `lens` when run on layout `lay` with boundary tables `tables`; the reason otherwise.
pub fn prove<M: Model, T>(
    spec: &ShaderSpec,
    lay: &AffineLayout,
    tables: &BcTables<T>,
    lens: &Bound,
) -> Result<(), String> {
    let d = &spec.dims;
    let q = M::Q as u64;
    let reach = |a: usize| M::VELOCITIES.iter().map(|c| c[a].unsigned_abs()).max();
    let (cx, cy, cz) = (reach(0), reach(1), reach(2));
    if cx.unwrap_or(0) as usize > d.halo {
        return Err(format!(
            "the halo ({}) is narrower than the longest velocity in x",
            d.halo
        ));
    }
    if cy.unwrap_or(0) as usize > d.ly || cz.unwrap_or(0) as usize > d.lz {
        return Err("a velocity shifts by more than the lattice's extent in y or z".into());
    }
    if spec.slab && d.lx < d.halo {
        return Err(format!(
            "a slab of {} columns is narrower than its halo {}",
            d.lx, d.halo
        ));
    }
    // Populations: the affine index is monotone in each argument (strides are unsigned), so
    // its largest value is at the largest arguments.
    let nk = (d.ly as u64) / lay.vl;
    let max = (q - 1) as u128 * lay.si as u128
        + (d.nlines() as u128 - 1) * lay.sc as u128
        + (nk.max(1) - 1) as u128 * lay.sk as u128
        + (lay.vl - 1) as u128;
    let len = d.len() as u128;
    if max >= len || lens.copy as u128 != len {
        return Err(format!(
            "the layout's largest index {max} is not inside one copy of {len} values"
        ));
    }
    if lens.chunk == 0 || lens.chunk * (spec.chunks as u64) < lens.copy || spec.chunk != lens.chunk
    {
        return Err(format!(
            "{} bindings of {} values do not cover a copy of {len}",
            spec.chunks, lens.chunk
        ));
    }
    let words = tables.tables.len() as u128;
    let nm = M::MOMENT_NAMES.len() as u128;
    let mout_need = lens.mout_cols as u128 * d.plane() as u128 * nm;
    if mout_need > lens.mout as u128 || lens.mout_cols > d.lx as u64 {
        return Err(format!(
            "{} columns of moments do not fit the output of {} values",
            lens.mout_cols, lens.mout
        ));
    }
    let holds = spec.scheme == crate::Scheme::InPlace;
    if holds && (spec.held_at as u64 != lens.mout || lens.held < tables.held as u64) {
        return Err(format!(
            "the {} held populations from {} do not fit past the {} values of mout",
            tables.held, spec.held_at, lens.mout
        ));
    }
    let limit = u32::MAX as u128;
    let mout_all = lens.mout as u128 + lens.held as u128;
    if len > limit || words > limit || tables.consts.len() as u128 > limit || mout_all > limit {
        return Err("a binding exceeds the shader's 32-bit indices".into());
    }
    prove_consts::<M, T>(spec, tables)?;
    prove_tables::<M, T>(spec, tables)
}

/// The parameters and the fields' per-site values lie inside `consts`.
fn prove_consts<M: Model, T>(spec: &ShaderSpec, tables: &BcTables<T>) -> Result<(), String> {
    let n = tables.consts.len();
    if spec.params > n {
        return Err(format!("{} parameters, but consts holds {n}", spec.params));
    }
    let nf = M::FIELDS.len();
    match spec.fields {
        Some(at) if at + nf * spec.dims.sites() > n => Err(format!(
            "{nf} fields from {at} of {} sites each overrun consts ({n})",
            spec.dims.sites()
        )),
        None if nf > 0 => Err("the model has fields but the shader has none".into()),
        _ => Ok(()),
    }
}

/// The boundary tables ([`bc`]): bit set, line starts and records, each offset inside
/// `tables` or `consts`.
fn prove_tables<M: Model, T>(spec: &ShaderSpec, t: &BcTables<T>) -> Result<(), String> {
    let d = &spec.dims;
    let lines = d.lx * d.lz;
    let cols = bc::bit_words(d);
    let recs = cols + lines + 1;
    let words = &t.tables;
    let (nrec, nhold) = (spec.bc.sites, spec.bc.holds);
    if spec.bc.halo_holds.iter().any(|&h| h > nhold) {
        return Err("more held populations in halos than held".into());
    }
    let holds = recs + nrec * REC;
    if words.len() != holds + 2 * nhold * HOLD || t.shape != spec.bc {
        return Err(format!(
            "the tables hold {} words, {} sites and {} held populations need {}",
            words.len(),
            nrec,
            nhold,
            holds + 2 * nhold * HOLD
        ));
    }
    // The held populations: each value inside the held region, its slot one of the lattice's.
    for e in words[holds..].chunks_exact(HOLD) {
        let [at, p, col, z, y] = [0, 1, 2, 3, 4].map(|k| e[k] as usize);
        if at >= t.held || p >= M::Q || col >= d.lx + 2 * d.halo || z >= d.lz || y >= d.ly {
            return Err(format!("a held population's entry {e:?} is out of range"));
        }
    }
    let starts = &words[cols..recs];
    if starts.windows(2).any(|w| w[0] > w[1]) || starts[lines] as usize != nrec {
        return Err("the boundary tables' line starts are not a partition of the records".into());
    }
    let nc = t.consts.len() as u64;
    let fits = |at: u32, n: u64, what: &str| {
        if at as u64 + n > nc {
            Err(format!("a {what} at {at} (+{n}) overruns consts ({nc})"))
        } else {
            Ok(())
        }
    };
    for line in 0..lines {
        for r in starts[line] as usize..starts[line + 1] as usize {
            let rec = Record::read(&words[recs + r * REC..][..REC]);
            let y = rec[Field::Y] as usize;
            if rec[Field::Line] as usize != line || y >= d.ly {
                return Err(format!(
                    "record {r} names line {} row {y}, outside line {line} of {} rows",
                    rec[Field::Line],
                    d.ly
                ));
            }
            let bit = line * d.ly + y;
            if (words[bit / 32] >> (bit % 32)) & 1 == 0 {
                return Err(format!("record {r}'s site is not in the bit set"));
            }
            if rec[Field::Corr] != NONE {
                fits(rec[Field::Corr], M::Q as u64, "wall correction")?;
            }
            if rec[Field::Interp] != NONE {
                fits(
                    rec[Field::Interp],
                    (TERMS_LEN * M::Q) as u64,
                    "curved wall's interpolation",
                )?;
            }
            if rec[Field::Held] != NONE && rec[Field::Held] as usize + TERMS_LEN * M::Q > t.held {
                return Err(format!(
                    "record {r}'s held populations at {} overrun the {} held",
                    rec[Field::Held],
                    t.held
                ));
            }
            match (rec[Field::Rule], Kind::from_code(rec[Field::Rule])) {
                (0, _) => {}
                (_, Some(k)) if k.values() > 0 => {
                    fits(rec[Field::Value], k.values() as u64, "rule's value")?
                }
                (_, Some(_)) => {}
                (k, None) => {
                    return Err(format!("record {r} has rule code {k}, which names no rule"))
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "bounds_tests.rs"]
mod tests;
