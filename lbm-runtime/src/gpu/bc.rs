//! The compiled boundary conditions ([`Boundaries`], built by the CPU runtime) packed into the
//! two small tables the shaders read.
//!
//! `tables` (u32): a bit per site (`line·LY + y`, the line `x·LZ + z`; `x·LY + y` in 2-D)
//! marking boundary sites, then `LX·LZ + 1` line starts, then one [`REC`]-word record per
//! boundary site, sorted by `(line, y)`: `[line, y, mask_lo, mask_hi, corr, kind, normal,
//! value]`. `consts` (real): the model
//! parameters, then the moving-wall corrections `2 w_i ρ_w (c_i·u_w)/cs²` (`Q` per site that
//! has any; `corr` is their offset, [`NONE`] otherwise) and the rules' values (Zou–He
//! velocity `[u_x, u_y, u_z]` or `[ρ, 0, 0]`, thermal-wall temperature; `value` is their
//! offset).

use crate::boundary::{Boundaries, Rule, ZouHeTarget};
use crate::layout::Dims;
use crate::{Model, Real};

/// Words per boundary-site record.
pub const REC: usize = 8;
/// "No entry" in a record.
pub const NONE: u32 = u32::MAX;
/// The inward normals of Zou–He sites, in the order of the shader's `zou_he_*` functions.
pub const NORMALS: [[i32; 3]; 6] = [
    [0, 1, 0],
    [0, -1, 0],
    [1, 0, 0],
    [-1, 0, 0],
    [0, 0, 1],
    [0, 0, -1],
];

/// Rule kinds, as stored in a record.
pub mod kind {
    /// Links only.
    pub const NONE: u32 = 0;
    /// Solid site, reset to rest.
    pub const SOLID: u32 = 1;
    /// Zou–He velocity.
    pub const ZH_VELOCITY: u32 = 2;
    /// Zou–He density.
    pub const ZH_DENSITY: u32 = 3;
    /// Thermal wall.
    pub const THERMAL: u32 = 4;
    /// Dirichlet wall of a transported scalar (anti-bounce-back); `normal` holds the links.
    pub const DIRICHLET: u32 = 5;
}

/// Which boundary code a shader needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BcShape {
    /// Number of boundary sites (0: a fully periodic lattice, no boundary code at all).
    pub sites: usize,
    /// Zou–He sites with each inward normal of `NORMALS`.
    pub zou_he: [bool; 6],
    /// Thermal-wall sites.
    pub thermal: bool,
    /// Dirichlet-wall sites.
    pub dirichlet: bool,
    /// Solid sites.
    pub solid: bool,
}

impl BcShape {
    /// Every kind of boundary code (for validating shaders without a lattice): with `zou_he`,
    /// Zou–He on the sides of a 2-D lattice, or of a 3-D one when `d3`.
    pub fn all(zou_he: bool, d3: bool, thermal: bool) -> Self {
        Self {
            sites: 1,
            zou_he: NORMALS.map(|n| zou_he && (d3 || n[2] == 0)),
            thermal,
            dirichlet: false,
            solid: true,
        }
    }
}

/// The packed tables of one lattice.
#[derive(Debug, Clone, PartialEq)]
pub struct BcTables<T> {
    /// Bits, column starts, records.
    pub tables: Vec<u32>,
    /// Parameters, corrections, rule values.
    pub consts: Vec<T>,
    /// The boundary code the shader needs.
    pub shape: BcShape,
}

/// Words of the site bit set.
pub fn bit_words(d: &Dims) -> usize {
    d.sites().div_ceil(32)
}

/// Padded parameter count `P = max(1, number of parameters)`.
pub fn param_count<M: Model>(params: &M::Params) -> usize {
    M::param_values(params).len().max(1)
}

/// Packs `bc` for a lattice of shape `d` with parameters `params`.
pub fn pack<M: Model, T: Real>(d: &Dims, bc: &Boundaries<T>, params: &M::Params) -> BcTables<T> {
    let mut consts: Vec<T> = M::param_values(params)
        .iter()
        .map(|(_, v)| T::from_f64(*v))
        .collect();
    consts.resize(param_count::<M>(params), T::default());
    let mut tables = vec![0u32; bit_words(d)];
    let lines = d.lx * d.lz;
    let mut starts = Vec::with_capacity(lines + 1);
    let mut records = Vec::new();
    let mut shape = BcShape::default();
    for line in 0..lines {
        starts.push((records.len() / REC) as u32);
        let mut sites: Vec<_> = bc.line(line / d.lz, line % d.lz).to_vec();
        sites.sort_by_key(|s| s.y);
        for s in sites {
            let bit = line * d.ly + d.yz(s.y).0;
            tables[bit / 32] |= 1 << (bit % 32);
            let corr = s.corr.map_or(NONE, |o| {
                let at = consts.len() as u32;
                consts.extend_from_slice(&bc.corr[o..o + M::Q]);
                at
            });
            let (kind, normal, value) = rule_words(&s.rule, &mut consts, &mut shape);
            records.extend_from_slice(&[
                line as u32,
                d.yz(s.y).0 as u32,
                s.mask as u32,
                (s.mask >> 32) as u32,
                corr,
                kind,
                normal,
                value,
            ]);
            shape.sites += 1;
        }
    }
    starts.push((records.len() / REC) as u32);
    tables.extend(starts);
    tables.extend(records);
    BcTables {
        tables,
        consts,
        shape,
    }
}

/// The record words `(kind, normal, value offset)` of a rule, its values appended to `consts`.
fn rule_words<T: Real>(rule: &Rule, consts: &mut Vec<T>, shape: &mut BcShape) -> (u32, u32, u32) {
    let at = consts.len() as u32;
    let mut push = |vals: &[f64]| consts.extend(vals.iter().map(|&v| T::from_f64(v)));
    match *rule {
        Rule::None => (kind::NONE, 0, NONE),
        Rule::Solid => {
            shape.solid = true;
            (kind::SOLID, 0, NONE)
        }
        Rule::ZouHe { normal, target } => {
            let n = NORMALS.iter().position(|&m| m == normal).unwrap_or(0);
            shape.zou_he[n] = true;
            let k = match target {
                ZouHeTarget::Velocity(u) => {
                    push(&u);
                    kind::ZH_VELOCITY
                }
                ZouHeTarget::Density(rho) => {
                    push(&[rho, 0.0, 0.0]);
                    kind::ZH_DENSITY
                }
            };
            (k, n as u32, at)
        }
        Rule::Thermal { temperature } => {
            shape.thermal = true;
            push(&[temperature]);
            (kind::THERMAL, 0, at)
        }
        Rule::Dirichlet { value, links } => {
            shape.dirichlet = true;
            push(&[value]);
            // Transport models have Q ≤ 27 < 32: the links fit the record's `normal` word.
            (kind::DIRICHLET, links as u32, at)
        }
    }
}
