//! Site rules as values: each rule is written once, as a [`Program`] — straight-line
//! arithmetic over the site's populations, its record's values and the model's equilibrium —
//! which the CPU evaluates ([`Program::run`]) and the GPU shader generator writes out as WGSL
//! (`gpu::rules`). This is lbmpy's split (a boundary is a symbolic rule, code is generated per
//! target) on the scale of this runtime: the rules are few and small, so a list of
//! instructions is enough of an IR, and it needs no macro, so that adding a rule does not
//! rebuild the models.
//!
//! A program reads the populations `g` as they enter the rule (after the links), and sets
//! some of them at its end ([`Program::out`]): every instruction sees the populations the
//! rule was given. The CPU evaluates the instructions in their order with the arithmetic of
//! the precision, so a rule gives the same bits as the closed form it replaces.

use super::zou_he::{dot, Closure};
use crate::{Model, Real, Role};

/// An instruction's result: instruction `r` of [`Program::ops`].
pub(crate) type Reg = u16;

/// One instruction: a value from the site or the rule's record, a constant, or arithmetic on
/// earlier results.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Op {
    /// Population `i` as it enters the rule.
    Pop(u16),
    /// Entry `k` of the values the site's record carries (a velocity, a density, a
    /// temperature; [`Kind::values`] of them).
    Value(u16),
    /// A constant.
    Const(f64),
    Add(Reg, Reg),
    Sub(Reg, Reg),
    Mul(Reg, Reg),
    Div(Reg, Reg),
    /// Population `i` of the model's equilibrium at the moments [`Program::moments`].
    Feq(u16),
    /// The first result where link `i` is in the site's link set, else the second.
    IfLink(u16, Reg, Reg),
}

/// A site rule: instructions, the moments of the one equilibrium it may take, and the
/// populations it sets.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Program {
    pub ops: Vec<Op>,
    /// The equilibrium's moments, in the order of the model's moments (empty: no
    /// equilibrium); they precede every [`Op::Feq`].
    pub moments: Vec<Reg>,
    /// `(i, r)`: population `i` leaves the rule with result `r`.
    pub out: Vec<(u16, Reg)>,
}

/// The inward normals of the sides, in the order of [`Kind::ZouHeVelocity`]'s index.
pub(crate) const NORMALS: [[i32; 3]; 6] = [
    [0, 1, 0],
    [0, -1, 0],
    [1, 0, 0],
    [-1, 0, 0],
    [0, 0, 1],
    [0, 0, -1],
];

/// The site rules, one program each (the values they take are the site's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A solid site, reset to rest: `g_i = w_i`.
    Solid,
    /// Zou–He at the side with inward normal `NORMALS[n]`, imposing the velocity (values
    /// `u_x, u_y, u_z`): module `zou_he`.
    ZouHeVelocity(usize),
    /// Zou–He at the side with inward normal `NORMALS[n]`, imposing the density (value `ρ`).
    ZouHeDensity(usize),
    /// The thermal wall of Calore et al. 2019 §5 (value `T_w`): the equilibrium at the site's
    /// density, zero velocity and `T_w`.
    Thermal,
    /// The Dirichlet wall of a transported scalar (value `φ_w`): anti-bounce-back of the
    /// site's link set, `g_i = f_eq_i(φ_w) + f_eq_ī(φ_w) − g_i`, the equilibrium at `φ_w`
    /// and zero other moments.
    Dirichlet,
    /// The symmetry plane (free slip) at the side with inward normal `NORMALS[n]`: each
    /// population entering through it takes the value of its mirror image, `g_i = g_m(i)`,
    /// `c_m(i) = c_i − 2 (c_i·n) n`.
    FreeSlip(usize),
}

impl Kind {
    /// Number of codes: [`Kind::code`] is below it.
    pub const CODES: usize = 22;

    /// Every kind, by code.
    #[cfg(any(feature = "gpu", test))]
    pub fn all() -> impl Iterator<Item = Kind> {
        (1..Self::CODES as u32).filter_map(Self::from_code)
    }

    /// The kind's code, `1..CODES` (0 is "no rule"): what a GPU record stores.
    pub fn code(self) -> u32 {
        match self {
            Kind::Solid => 1,
            Kind::ZouHeVelocity(n) => 2 + n as u32,
            Kind::ZouHeDensity(n) => 8 + n as u32,
            Kind::Thermal => 14,
            Kind::Dirichlet => 15,
            Kind::FreeSlip(n) => 16 + n as u32,
        }
    }

    /// The kind of a code.
    #[cfg(any(feature = "gpu", test))]
    pub fn from_code(code: u32) -> Option<Kind> {
        Some(match code {
            1 => Kind::Solid,
            2..=7 => Kind::ZouHeVelocity(code as usize - 2),
            8..=13 => Kind::ZouHeDensity(code as usize - 8),
            14 => Kind::Thermal,
            15 => Kind::Dirichlet,
            16..=21 => Kind::FreeSlip(code as usize - 16),
            _ => return None,
        })
    }

    /// How many values a site of this kind carries.
    #[cfg(feature = "gpu")]
    pub fn values(self) -> usize {
        match self {
            Kind::Solid | Kind::FreeSlip(_) => 0,
            Kind::ZouHeVelocity(_) => 3,
            Kind::ZouHeDensity(_) | Kind::Thermal | Kind::Dirichlet => 1,
        }
    }

    /// The kind's program for model `M` (a model the boundaries were checked for).
    pub fn program<M: Model>(self) -> Program {
        let mut b = Builder::default();
        match self {
            Kind::Solid => {
                for (i, &w) in M::WEIGHTS.iter().enumerate() {
                    let r = b.lit(w);
                    b.set(i, r);
                }
            }
            Kind::ZouHeVelocity(n) => zou_he::<M>(&mut b, NORMALS[n], true),
            Kind::ZouHeDensity(n) => zou_he::<M>(&mut b, NORMALS[n], false),
            Kind::Thermal => thermal::<M>(&mut b),
            Kind::Dirichlet => dirichlet::<M>(&mut b),
            Kind::FreeSlip(n) => free_slip::<M>(&mut b, NORMALS[n]),
        }
        b.program.pruned()
    }
}

/// Writes a program, one instruction at a time.
#[derive(Default)]
struct Builder {
    program: Program,
}

impl Builder {
    fn op(&mut self, op: Op) -> Reg {
        self.program.ops.push(op);
        (self.program.ops.len() - 1) as Reg
    }
    /// Whether result `r` is the constant `v`.
    fn is(&self, r: Reg, v: f64) -> bool {
        self.program.ops[r as usize] == Op::Const(v)
    }
    fn pop(&mut self, i: usize) -> Reg {
        self.op(Op::Pop(i as u16))
    }
    fn value(&mut self, k: usize) -> Reg {
        self.op(Op::Value(k as u16))
    }
    fn lit(&mut self, v: f64) -> Reg {
        self.op(Op::Const(v))
    }
    /// `a + b`; `a` or `b` where the other is the constant 0 (exact, but for the sign of a
    /// zero): the rules' sums start at 0 and weigh by the velocities' components, most of
    /// them 0 or 1, and folded they run in a third of the instructions.
    fn add(&mut self, a: Reg, b: Reg) -> Reg {
        match (self.is(a, 0.0), self.is(b, 0.0)) {
            (true, _) => b,
            (_, true) => a,
            _ => self.op(Op::Add(a, b)),
        }
    }
    /// `a − b`; `a` where `b` is the constant 0.
    fn sub(&mut self, a: Reg, b: Reg) -> Reg {
        match self.is(b, 0.0) {
            true => a,
            false => self.op(Op::Sub(a, b)),
        }
    }
    /// `a b`; the other where one is the constant 1, the constant 0 where one is 0 (the
    /// operands are finite populations and coefficients).
    fn mul(&mut self, a: Reg, b: Reg) -> Reg {
        match (
            self.is(a, 1.0),
            self.is(b, 1.0),
            self.is(a, 0.0) || self.is(b, 0.0),
        ) {
            (true, _, _) => b,
            (_, true, _) => a,
            (_, _, true) => self.lit(0.0),
            _ => self.op(Op::Mul(a, b)),
        }
    }
    fn div(&mut self, a: Reg, b: Reg) -> Reg {
        self.op(Op::Div(a, b))
    }
    /// `((0 + a) + b) + …`, a sum in the order given.
    fn sum(&mut self, terms: impl IntoIterator<Item = Reg>) -> Reg {
        let zero = self.lit(0.0);
        terms.into_iter().fold(zero, |s, t| self.add(s, t))
    }
    /// `(a_0 b_0 + a_1 b_1) + a_2 b_2`, a dot product of three.
    fn dot3(&mut self, a: [Reg; 3], b: [Reg; 3]) -> Reg {
        let p = [0, 1, 2].map(|k| self.mul(a[k], b[k]));
        let s = self.add(p[0], p[1]);
        self.add(s, p[2])
    }
    /// Takes the equilibrium at `moments` (one per model moment); [`Builder::feq`] reads it.
    fn equilibrium(&mut self, moments: Vec<Reg>) {
        self.program.moments = moments;
    }
    fn feq(&mut self, i: usize) -> Reg {
        self.op(Op::Feq(i as u16))
    }
    fn set(&mut self, i: usize, r: Reg) {
        self.program.out.push((i as u16, r));
    }
}

/// Zou–He at the side with inward normal `n` (module `zou_he`): `ρ (1 − u·n) = S0 + 2 S−`,
/// `N_t = St / K_t + ρ (u·t)(2 W_t/cs² − 1)/K_t` and, for each unknown `c_j·n > 0`,
/// `f_j = f_ĵ + 2 w_j ρ (c_j·u)/cs² − Σ_t (c_j·t) N_t`. With `velocity`, `u` is the record's
/// and `ρ` follows; else `ρ` is the record's and `u = (1 − (S0 + 2 S−)/ρ) n`.
fn zou_he<M: Model>(b: &mut Builder, n: [i32; 3], velocity: bool) {
    let closure = Closure::new::<M>(n);
    let tangents = closure.tangents();
    let (mut s0, mut sm) = (b.lit(0.0), b.lit(0.0));
    let mut st = [0; 2].map(|_| b.lit(0.0));
    for (i, c) in M::VELOCITIES.iter().enumerate() {
        match dot(c, n) {
            0 => {
                let g = b.pop(i);
                s0 = b.add(s0, g);
                for (s, t) in st.iter_mut().zip(tangents) {
                    let ct = b.lit(f64::from(dot(c, *t)));
                    let term = b.mul(g, ct);
                    *s = b.add(*s, term);
                }
            }
            d if d < 0 => {
                let g = b.pop(i);
                sm = b.add(sm, g);
            }
            _ => {}
        }
    }
    let known = b.add(s0, sm);
    let known = b.add(known, sm);
    let one = b.lit(1.0);
    let nv = n.map(|v| b.lit(f64::from(v)));
    let (rho, u) = if velocity {
        let u = [0, 1, 2].map(|k| b.value(k));
        let un = b.dot3(u, nv);
        let den = b.sub(one, un);
        (b.div(known, den), u)
    } else {
        let rho = b.value(0);
        let q = b.div(known, rho);
        let un = b.sub(one, q);
        (rho, nv.map(|v| b.mul(un, v)))
    };
    let mut nt = [rho; 2];
    for (a, t) in tangents.iter().enumerate() {
        let tv = t.map(|v| b.lit(f64::from(v)));
        let ut = b.dot3(u, tv);
        let [inv_k, k] = closure.coef[a].map(|v| b.lit(v));
        let first = b.mul(inv_k, st[a]);
        let krho = b.mul(k, rho);
        let second = b.mul(krho, ut);
        nt[a] = b.add(first, second);
    }
    for (j, c) in M::VELOCITIES.iter().enumerate() {
        if dot(c, n) <= 0 {
            continue;
        }
        let zero = b.lit(0.0);
        let cu = (0..3).fold(zero, |s, k| {
            let ck = b.lit(f64::from(c[k]));
            let term = b.mul(ck, u[k]);
            b.add(s, term)
        });
        let w = b.lit(2.0 * M::WEIGHTS[j] / M::CS2);
        let wrho = b.mul(w, rho);
        let shift = b.mul(wrho, cu);
        let opposite = b.pop(M::OPPOSITE[j]);
        let mut v = b.add(opposite, shift);
        for (a, t) in tangents.iter().enumerate() {
            let ct = b.lit(f64::from(dot(c, *t)));
            let term = b.mul(ct, nt[a]);
            v = b.sub(v, term);
        }
        b.set(j, v);
    }
}

/// The thermal wall of Calore et al. 2019 §5: every population set to the equilibrium at the
/// site's density, zero velocity and the wall's temperature.
fn thermal<M: Model>(b: &mut Builder) {
    let g: Vec<Reg> = (0..M::Q).map(|i| b.pop(i)).collect();
    let rho = b.sum(g);
    let tw = b.value(0);
    let moments = M::MOMENT_ROLES
        .iter()
        .map(|role| match role {
            Role::Density => rho,
            Role::Temperature => tw,
            _ => b.lit(0.0),
        })
        .collect();
    b.equilibrium(moments);
    for i in 0..M::Q {
        let f = b.feq(i);
        b.set(i, f);
    }
}

/// Anti-bounce-back of the site's link set at a Dirichlet wall of a transported scalar:
/// `g_i = f_eq_i(φ_w) + f_eq_ī(φ_w) − g_i` on the links that cross it.
fn dirichlet<M: Model>(b: &mut Builder) {
    let j = super::dirichlet_moment::<M>();
    let phi = b.value(0);
    let moments = (0..M::MOMENT_ROLES.len())
        .map(|k| if Some(k) == j { phi } else { b.lit(0.0) })
        .collect();
    b.equilibrium(moments);
    let feq: Vec<Reg> = (0..M::Q).map(|i| b.feq(i)).collect();
    for i in 0..M::Q {
        let both = b.add(feq[i], feq[M::OPPOSITE[i]]);
        let g = b.pop(i);
        let bounced = b.sub(both, g);
        let v = b.op(Op::IfLink(i as u16, bounced, g));
        b.set(i, v);
    }
}

/// The symmetry plane with inward normal `n`: `g_i = g_m(i)` for `c_i·n > 0`, `m(i)` the
/// population whose velocity is `c_i` mirrored in the plane.
fn free_slip<M: Model>(b: &mut Builder, n: [i32; 3]) {
    for (i, c) in M::VELOCITIES.iter().enumerate() {
        let cn = dot(c, n);
        if cn > 0 {
            let mirror: [i32; 3] = std::array::from_fn(|a| c[a] - 2 * cn * n[a]);
            let m = M::VELOCITIES.iter().position(|v| *v == mirror);
            let g = b.pop(m.expect("a velocity set closed under reflection"));
            b.set(i, g);
        }
    }
}

/// `f` of the lanes of `a` and `b`, lane by lane.
#[inline(always)]
fn lanes<T: Copy, const VL: usize>(a: [T; VL], b: [T; VL], f: impl Fn(T, T) -> T) -> [T; VL] {
    std::array::from_fn(|l| f(a[l], b[l]))
}

impl Program {
    /// Runs the rule on the populations `g[i][l]` (`M::Q` of them) of `VL` sites at once
    /// (lane `l` a site: a whole cluster of an inflow plane, or one site with `VL = 1`), each
    /// lane the same operations as alone, with lane `l`'s record's `values[l]` and their
    /// common link set `links`; `regs` is scratch space, `params` the model's parameters.
    pub fn run<M: Model, T: Real, const VL: usize>(
        &self,
        g: &mut [[T; VL]],
        values: &[[f64; 3]; VL],
        links: u64,
        regs: &mut Vec<[T; VL]>,
        params: &M::Params,
    ) {
        regs.clear();
        let mut feq = [[T::default(); VL]; 64];
        let mut have_feq = false;
        for op in &self.ops {
            let r = |a: Reg| regs[a as usize];
            let v = match *op {
                Op::Pop(i) => g[i as usize],
                Op::Value(k) => std::array::from_fn(|l| T::from_f64(values[l][k as usize])),
                Op::Const(c) => [T::from_f64(c); VL],
                Op::Add(a, b) => lanes(r(a), r(b), |a, b| a + b),
                Op::Sub(a, b) => lanes(r(a), r(b), |a, b| a - b),
                Op::Mul(a, b) => lanes(r(a), r(b), |a, b| a * b),
                Op::Div(a, b) => lanes(r(a), r(b), |a, b| a / b),
                Op::Feq(i) => {
                    if !have_feq {
                        for l in 0..VL {
                            let mut m = [T::default(); 64];
                            for (m, &k) in m.iter_mut().zip(&self.moments) {
                                *m = regs[k as usize][l];
                            }
                            let mut f = [T::default(); 64];
                            M::equilibrium(&m[..self.moments.len()], params, &mut f[..M::Q]);
                            for (feq, f) in feq.iter_mut().zip(&f[..M::Q]) {
                                feq[l] = *f;
                            }
                        }
                        have_feq = true;
                    }
                    feq[i as usize]
                }
                Op::IfLink(i, a, b) => r(if links >> i & 1 == 1 { a } else { b }),
            };
            regs.push(v);
        }
        for &(i, r) in &self.out {
            g[i as usize] = regs[r as usize];
        }
    }

    /// The program without the instructions whose results reach no output (the constants
    /// the folding left behind), its registers renumbered.
    fn pruned(self) -> Self {
        let live = self.live();
        let mut new = vec![0 as Reg; self.ops.len()];
        let mut ops = Vec::new();
        for (r, op) in self.ops.iter().enumerate().filter(|&(r, _)| live[r]) {
            let n = |a: Reg| new[a as usize];
            let op = match *op {
                Op::Add(a, b) => Op::Add(n(a), n(b)),
                Op::Sub(a, b) => Op::Sub(n(a), n(b)),
                Op::Mul(a, b) => Op::Mul(n(a), n(b)),
                Op::Div(a, b) => Op::Div(n(a), n(b)),
                Op::IfLink(i, a, b) => Op::IfLink(i, n(a), n(b)),
                other => other,
            };
            new[r] = ops.len() as Reg;
            ops.push(op);
        }
        Self {
            ops,
            moments: self.moments.iter().map(|&m| new[m as usize]).collect(),
            out: self
                .out
                .iter()
                .map(|&(i, r)| (i, new[r as usize]))
                .collect(),
        }
    }

    /// Whether each instruction's result reaches an output (directly, through later
    /// instructions, or as a moment of the equilibrium).
    fn live(&self) -> Vec<bool> {
        let mut live = vec![false; self.ops.len()];
        for &(_, r) in &self.out {
            live[r as usize] = true;
        }
        for r in (0..self.ops.len()).rev() {
            if !live[r] {
                continue;
            }
            match self.ops[r] {
                Op::Add(a, b) | Op::Sub(a, b) | Op::Mul(a, b) | Op::Div(a, b) => {
                    live[a as usize] = true;
                    live[b as usize] = true;
                }
                Op::IfLink(_, a, b) => {
                    live[a as usize] = true;
                    live[b as usize] = true;
                }
                Op::Feq(_) => {
                    for &m in &self.moments {
                        live[m as usize] = true;
                    }
                }
                Op::Pop(_) | Op::Value(_) | Op::Const(_) => {}
            }
        }
        live
    }
}

#[cfg(test)]
#[path = "program_tests.rs"]
mod tests;
