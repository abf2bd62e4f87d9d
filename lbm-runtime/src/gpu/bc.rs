//! The compiled boundary conditions ([`Boundaries`], built by the CPU runtime) packed into the
//! two small tables the shaders read.
//!
//! `tables` (u32): a bit per site (`line·LY + y`, the line `x·LZ + z`; `x·LY + y` in 2-D)
//! marking boundary sites, then `LX·LZ + 1` line starts, then one [`REC`]-word record per
//! boundary site, sorted by `(line, y)`, its words the [`Field`]s `[line, y, mask_lo,
//! mask_hi, corr, rule, links, value, interp, held]` — one table that the packing writes, the
//! shaders read (as the constants [`Field::wgsl_constants`] declares: `tables[b + REC_CORR]`)
//! and the bounds prover checks, by name — then the [`HOLD`]-word entries of the populations
//! the in-place scheme holds before each half-step, those of the even state, then those of
//! the odd one, each state's in halo columns last (see [`pack`]). `consts` (real): the model parameters, then the moving-wall corrections
//! `2 w_i ρ_w (c_i·u_w)/cs²` (`Q` per site that has any; `corr` is their offset, [`NONE`]
//! otherwise), the rules' values (`value` is their offset) and the interpolations of curved
//! walls' links (the `TERMS_LEN` weights of `boundary::link::TERMS` for each of the `Q` links
//! of a site that has one; `interp` is their offset). `rule` is
//! the code of the site's rule (`boundary::program::Kind::code`, 0 for none) and `links` its
//! link set (the Dirichlet wall's).

use crate::boundary::program::Kind;
use crate::boundary::{Boundaries, Rule, TERMS_LEN};
use crate::layout::Dims;
use crate::{Model, Real};

/// A word of a boundary site's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The site's storage line, `x·LZ + z`.
    Line,
    /// Its row `y` in the line.
    Y,
    /// The links bounced back, bits 0–31 (the next field holds bits 32–63).
    MaskLo,
    /// The links bounced back, bits 32–63.
    MaskHi,
    /// The offset of the moving wall's `Q` corrections in `consts`, or [`NONE`].
    Corr,
    /// The code of the site's rule (`boundary::program::Kind::code`, 0 for none).
    Rule,
    /// The rule's link set (the Dirichlet wall's).
    Links,
    /// The offset of the rule's values in `consts`, or [`NONE`].
    Value,
    /// The offset of the curved links' interpolation weights in `consts`, or [`NONE`].
    Interp,
    /// Where the site's held populations start among the held values (in place: what its
    /// curved and outflow links read beyond its own slots, term `k` of link `i` at
    /// `held + TERMS_LEN·i + k`), or [`NONE`].
    Held,
}

impl Field {
    /// Every field, in the record's order.
    pub const ALL: [Field; 10] = [
        Field::Line,
        Field::Y,
        Field::MaskLo,
        Field::MaskHi,
        Field::Corr,
        Field::Rule,
        Field::Links,
        Field::Value,
        Field::Interp,
        Field::Held,
    ];

    /// Its word in the record.
    pub const fn at(self) -> usize {
        self as usize
    }

    /// Its name in the shaders.
    fn wgsl(self) -> &'static str {
        match self {
            Field::Line => "REC_LINE",
            Field::Y => "REC_Y",
            Field::MaskLo => "REC_MASK_LO",
            Field::MaskHi => "REC_MASK_HI",
            Field::Corr => "REC_CORR",
            Field::Rule => "REC_RULE",
            Field::Links => "REC_LINKS",
            Field::Value => "REC_VALUE",
            Field::Interp => "REC_INTERP",
            Field::Held => "REC_HELD",
        }
    }

    /// The WGSL constants that name every field's word and the record's length (`REC`).
    pub fn wgsl_constants() -> String {
        let fields: String = (Self::ALL.iter())
            .map(|f| format!("const {}: u32 = {}u;\n", f.wgsl(), f.at()))
            .collect();
        format!("{fields}const REC: u32 = {REC}u;\n")
    }
}

/// Words per boundary-site record.
pub const REC: usize = Field::ALL.len();

/// A boundary site's record, its words read and written by [`Field`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Record(pub [u32; REC]);

impl Record {
    /// The record in the words `words` (at least [`REC`] of them).
    pub fn read(words: &[u32]) -> Self {
        Self(std::array::from_fn(|k| words[k]))
    }
}

impl std::ops::Index<Field> for Record {
    type Output = u32;
    fn index(&self, f: Field) -> &u32 {
        &self.0[f.at()]
    }
}

impl std::ops::IndexMut<Field> for Record {
    fn index_mut(&mut self, f: Field) -> &mut u32 {
        &mut self.0[f.at()]
    }
}
/// "No entry" in a record.
pub const NONE: u32 = u32::MAX;

/// Words of an entry of the held populations: the held value's index, then the population
/// `p`, storage column, line `z` and row `y` of the slot that holds it (`idx`'s arguments).
pub const HOLD: usize = 5;

/// Which boundary code a shader needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BcShape {
    /// Number of boundary sites (0: a fully periodic lattice, no boundary code at all).
    pub sites: usize,
    /// The site rules present: bit `k` for the rule of code `k`.
    pub rules: u32,
    /// Curved walls' interpolated links.
    pub curved: bool,
    /// Populations held before each in-place half-step (the entries of each state).
    pub holds: usize,
    /// Of those, the last ones of the even and of the odd state, whose slots lie in a halo
    /// column: a slab holds them again once its halos arrived.
    pub halo_holds: [usize; 2],
}

impl BcShape {
    /// Every kind of boundary code (for validating shaders without a lattice): solid sites,
    /// with `zou_he` Zou–He and free-slip sides of a 2-D lattice (of a 3-D one when `d3`),
    /// with `thermal` thermal walls.
    pub fn all(zou_he: bool, d3: bool, thermal: bool) -> Self {
        let rules = Kind::all()
            .filter(|k| match k {
                Kind::Solid => true,
                Kind::ZouHeVelocity(n) | Kind::ZouHeDensity(n) | Kind::FreeSlip(n) => {
                    zou_he && (d3 || *n < 4)
                }
                Kind::Thermal => thermal,
                Kind::Dirichlet => false,
            })
            .fold(0, |m, k| m | 1 << k.code());
        Self {
            sites: 1,
            rules,
            curved: true,
            holds: 1,
            halo_holds: [1, 1],
        }
    }

    /// With the Dirichlet wall of a transported scalar.
    pub fn with_dirichlet(self) -> Self {
        Self {
            rules: self.rules | 1 << Kind::Dirichlet.code(),
            ..self
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
    /// Values the held populations take ([`Field::Held`]).
    pub held: usize,
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
///
/// The in-place scheme holds, before each half-step, the populations that interpolated links
/// read beyond their sites' own slots (`Boundaries::held_terms`, which the CPU holds too):
/// another site's thread may overwrite their slots before the links read them. An entry names
/// the held value (at the CPU's index) and the slot that holds the population in the even
/// state or in the odd one ([`crate::boundary::aa_source`]).
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
    let holds = bc.held_terms::<M>(d);
    let held = if holds.is_empty() {
        0
    } else {
        bc.interp.len() * TERMS_LEN
    };
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
            let (rule, links, value) = rule_words(&s.rule, &mut consts, &mut shape);
            let interp = s.interp.map_or(NONE, |o| {
                shape.curved = true;
                let at = consts.len() as u32;
                consts.extend(bc.interp[o..o + M::Q].iter().flat_map(|w| w.w));
                at
            });
            // The held values mirror the interpolations: a link's terms at its weights' index.
            let held_at = match s.interp {
                Some(o) if held > 0 => (o * TERMS_LEN) as u32,
                _ => NONE,
            };
            let mut r = Record::default();
            for (f, word) in [
                (Field::Line, line as u32),
                (Field::Y, d.yz(s.y).0 as u32),
                (Field::MaskLo, s.mask as u32),
                (Field::MaskHi, (s.mask >> 32) as u32),
                (Field::Corr, corr),
                (Field::Rule, rule),
                (Field::Links, links),
                (Field::Value, value),
                (Field::Interp, interp),
                (Field::Held, held_at),
            ] {
                r[f] = word;
            }
            records.extend_from_slice(&r.0);
            shape.sites += 1;
        }
    }
    starts.push((records.len() / REC) as u32);
    tables.extend(starts);
    tables.extend(records);
    shape.holds = holds.len();
    for odd in [false, true] {
        let mut entries: Vec<(bool, [u32; HOLD])> = (holds.iter())
            .map(|h| {
                let (p, x, at) = h.source::<M>(d, odd, bc.x_periodic());
                let (y, z) = d.yz(at);
                let col = (x + d.halo as isize) as u32;
                let halo = !(0..d.lx as isize).contains(&x);
                (halo, [h.at as u32, p as u32, col, z as u32, y as u32])
            })
            .collect();
        entries.sort_by_key(|&(halo, _)| halo);
        shape.halo_holds[usize::from(odd)] = entries.iter().filter(|e| e.0).count();
        tables.extend(entries.iter().flat_map(|e| e.1));
    }
    BcTables {
        tables,
        consts,
        held,
        shape,
    }
}

/// The index of the record [`pack`] writes for the site `[x, y, z]` of `bc` (records by line,
/// then by `y`); `None` for a site that is not a boundary site.
pub fn record<T: Real>(bc: &Boundaries<T>, d: &Dims, [x, y, z]: [usize; 3]) -> Option<usize> {
    let s = d.plane_site(y, z);
    let line = bc.line(x, z);
    let before = line.iter().filter(|t| t.y < s).count();
    line.iter()
        .any(|t| t.y == s)
        .then(|| bc.col_start[x * d.lz + z] + before)
}

/// The record words `(rule, links, value offset)` of a rule, its values appended to `consts`.
fn rule_words<T: Real>(rule: &Rule, consts: &mut Vec<T>, shape: &mut BcShape) -> (u32, u32, u32) {
    let Some((kind, values, links)) = rule.parts() else {
        return (0, 0, NONE);
    };
    shape.rules |= 1 << kind.code();
    let at = match kind.values() {
        0 => NONE,
        n => {
            let at = consts.len() as u32;
            consts.extend(values[..n].iter().map(|&v| T::from_f64(v)));
            at
        }
    };
    // Only transport models have link sets, and their Q ≤ 27 < 32 fits the record's word.
    (kind.code(), links as u32, at)
}
