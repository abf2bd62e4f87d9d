//! The grid that runs a finite-difference scheme on the CPU: one array per unknown (structure
//! of arrays), padded by the scheme's reach in ghost layers, and a second register for the
//! integrator.

use std::marker::PhantomData;

use super::walls::{apply, wrap, Rule, Side};
use super::{FdError, FdScheme, Integrator};
use crate::memory::{self, Need};
use crate::parallel;
use crate::Real;

/// Nodes whose rates are computed together (one 64-byte vector of f64).
const LANES: usize = 8;

/// A node-centred grid of `n_x × n_y (× n_z)` nodes of spacing `h` carrying the unknowns of
/// the scheme `S` in precision `T`.
pub struct FdGrid<S: FdScheme, T: Real> {
    n: [usize; 3],
    /// Ghost layers along each axis (0 along z in 2-D).
    g: [usize; 3],
    /// Padded extents and strides.
    p: [usize; 3],
    stride: [usize; 3],
    h: f64,
    params: S::Params,
    prm: Vec<T>,
    sides: Vec<Side>,
    phi: Vec<Vec<T>>,
    reg: Vec<Vec<T>>,
    /// `LOADS[k]`'s offset from the node, in the padded arrays.
    offsets: Vec<isize>,
    steps: u64,
    time: f64,
    _scheme: PhantomData<S>,
}

fn setup(msg: String) -> FdError {
    FdError::Setup(msg)
}

impl<S: FdScheme, T: Real> FdGrid<S, T> {
    /// A grid of `n` nodes per axis (`n[2]` is 1 in 2-D) at spacing `h`, its sides in the order
    /// x−, x+, y−, y+ (, z−, z+), the unknowns zero. Refuses, before allocating, sizes the
    /// stencils do not fit in, walls with a rule per unknown missing, non-finite values, and a
    /// grid larger than the memory.
    pub fn new(
        n: [usize; 3],
        h: f64,
        params: S::Params,
        sides: Vec<Side>,
    ) -> Result<Self, FdError> {
        let dim = S::DIM;
        let name = S::NAME;
        let halo = S::REACH.max(1);
        if dim == 2 && n[2] != 1 {
            return Err(setup(format!(
                "{name} is a 2-D scheme: give n_z = 1 (got {})",
                n[2]
            )));
        }
        for a in 0..dim {
            let least = (2 * halo + 1).max(3);
            if n[a] < least {
                return Err(setup(format!(
                    "{name}: {} nodes along {} are too few: its stencils reach {halo} node(s), so it needs at least {least}",
                    n[a],
                    ["x", "y", "z"][a]
                )));
            }
        }
        if !(h.is_finite() && h > 0.0) {
            return Err(setup(format!(
                "{name}: the grid spacing h must be positive and finite (got {h})"
            )));
        }
        let values = S::param_values(&params);
        for (v, p) in values.iter().zip(S::PARAMS) {
            if !v.is_finite() {
                return Err(setup(format!(
                    "{name}: parameter `{p}` is not finite ({v})"
                )));
            }
        }
        if sides.len() != 2 * dim {
            return Err(setup(format!(
                "{name}: give {} sides (x−, x+, y−, y+{}), got {}",
                2 * dim,
                if dim == 3 { ", z−, z+" } else { "" },
                sides.len()
            )));
        }
        for a in 0..dim {
            let (lo, hi) = (&sides[2 * a], &sides[2 * a + 1]);
            if (*lo == Side::Periodic) != (*hi == Side::Periodic) {
                return Err(setup(format!(
                    "{name}: along {} one side is periodic and the other is not: make both periodic, or both walls",
                    ["x", "y", "z"][a]
                )));
            }
        }
        for (k, side) in sides.iter().enumerate() {
            if let Side::Wall(rules) = side {
                let which = ["x−", "x+", "y−", "y+", "z−", "z+"][k];
                if rules.len() != S::UNKNOWNS.len() {
                    return Err(setup(format!(
                        "{name}: the {which} wall gives {} rule(s), but the scheme has {} unknowns ({}): one rule each",
                        rules.len(),
                        S::UNKNOWNS.len(),
                        S::UNKNOWNS.join(", ")
                    )));
                }
                for (r, u) in rules.iter().zip(S::UNKNOWNS) {
                    if let Rule::Value(v) = r {
                        if !v.is_finite() {
                            return Err(setup(format!(
                                "{name}: the {which} wall's value of {u} is not finite ({v})"
                            )));
                        }
                    }
                }
            }
        }
        let mut g = [0; 3];
        let mut p = [1; 3];
        for a in 0..dim {
            g[a] = halo;
            p[a] = n[a] + 2 * halo;
        }
        let bytes = memory::product(&[p[0], p[1], p[2], 2 * S::UNKNOWNS.len(), T::BYTES]);
        memory::check(
            &Need::new().with("finite-difference grid", bytes),
            1,
            memory::available(),
        )
        .map_err(|e| {
            let e = e.with_remedy("give fewer nodes, or single precision");
            setup(format!("{name}: {e}"))
        })?;
        let stride = [1, p[0], p[0] * p[1]];
        let len = p[0] * p[1] * p[2];
        let offsets = S::LOADS
            .iter()
            .map(|(_, o)| (0..3).map(|a| o[a] as isize * stride[a] as isize).sum())
            .collect();
        let mut prm = vec![T::from_f64(h)];
        prm.extend(values.iter().map(|&v| T::from_f64(v)));
        Ok(Self {
            n,
            g,
            p,
            stride,
            h,
            params,
            prm,
            sides,
            phi: vec![vec![T::default(); len]; S::UNKNOWNS.len()],
            reg: vec![vec![T::default(); len]; S::UNKNOWNS.len()],
            offsets,
            steps: 0,
            time: 0.0,
            _scheme: PhantomData,
        })
    }

    /// Nodes per axis.
    pub fn nodes(&self) -> [usize; 3] {
        self.n
    }
    /// The grid spacing.
    pub fn h(&self) -> f64 {
        self.h
    }
    pub fn params(&self) -> &S::Params {
        &self.params
    }
    /// Steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }
    /// The time reached, `Σ Δt`.
    pub fn time(&self) -> f64 {
        self.time
    }

    fn index(&self, [i, j, k]: [usize; 3]) -> usize {
        (i + self.g[0]) * self.stride[0]
            + (j + self.g[1]) * self.stride[1]
            + (k + self.g[2]) * self.stride[2]
    }

    /// The index of unknown `name`.
    pub fn unknown(&self, name: &str) -> Option<usize> {
        S::UNKNOWNS.iter().position(|u| *u == name)
    }

    /// Sets unknown `u` at every node to `f(x)`, `x = (i h, j h, k h)`, then applies the walls.
    pub fn set(&mut self, u: usize, f: impl Fn([f64; 3]) -> f64) {
        for k in 0..self.n[2] {
            for j in 0..self.n[1] {
                for i in 0..self.n[0] {
                    let x = [i as f64 * self.h, j as f64 * self.h, k as f64 * self.h];
                    let idx = self.index([i, j, k]);
                    self.phi[u][idx] = T::from_f64(f(x));
                }
            }
        }
        self.fill();
    }

    /// Unknown `u` at a node.
    pub fn value(&self, u: usize, node: [usize; 3]) -> f64 {
        self.phi[u][self.index(node)].to_f64()
    }

    /// Unknown `u` at every node, x fastest, then y, then z.
    pub fn field(&self, u: usize) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.n.iter().product());
        for k in 0..self.n[2] {
            for j in 0..self.n[1] {
                let start = self.index([0, j, k]);
                out.extend(
                    self.phi[u][start..start + self.n[0]]
                        .iter()
                        .map(|v| v.to_f64()),
                );
            }
        }
        out
    }

    /// The nodes the rates update along axis `a`: all on a periodic axis, all but the walls'
    /// otherwise (padded coordinates).
    fn updated(&self, a: usize) -> std::ops::Range<usize> {
        if a >= S::DIM {
            return 0..1;
        }
        match self.sides[2 * a] {
            Side::Periodic => self.g[a]..self.g[a] + self.n[a],
            Side::Wall(_) => self.g[a] + 1..self.g[a] + self.n[a] - 1,
        }
    }

    /// Applies the sides: walls' nodes and ghosts, periodic ghosts; axis by axis, each over the
    /// whole padded extent of the others.
    fn fill(&mut self) {
        for a in 0..S::DIM {
            let (b, c) = ((a + 1) % 3, (a + 2) % 3);
            let (g, n) = (self.g[a], self.n[a]);
            for tb in 0..self.p[b] {
                for tc in 0..self.p[c] {
                    let base = tb * self.stride[b] + tc * self.stride[c];
                    for (u, v) in self.phi.iter_mut().enumerate() {
                        for (high, side) in
                            [(false, &self.sides[2 * a]), (true, &self.sides[2 * a + 1])]
                        {
                            match side {
                                Side::Periodic if !high => wrap(v, (base, self.stride[a]), (g, n)),
                                Side::Periodic => {}
                                Side::Wall(rules) => {
                                    apply(v, (base, self.stride[a]), (g, n), high, rules[u])
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    /// One pass of the rates over the updated nodes: `reg ← a·reg + Δt R(φ)`, or for Euler
    /// (`a = None`) `reg ← φ + Δt R(φ)`.
    fn rates_pass(&mut self, a: Option<T>, dt: T) {
        let outer = S::DIM - 1;
        let plane = self.stride[outer];
        let nu = S::UNKNOWNS.len();
        let updated = self.updated(outer);
        let rows: Vec<[usize; 2]> = if S::DIM == 3 {
            self.updated(1).map(|j| [j, 0]).collect()
        } else {
            vec![[0, 0]]
        };
        let xs = self.updated(0);
        // One item per plane of the outermost axis: that plane's part of every register.
        let mut planes: Vec<Vec<&mut [T]>> =
            (0..self.p[outer]).map(|_| Vec::with_capacity(nu)).collect();
        for r in self.reg.iter_mut() {
            for (t, chunk) in r.chunks_mut(plane).enumerate() {
                planes[t].push(chunk);
            }
        }
        let (phi, prm, offsets, stride) = (&self.phi, &self.prm, &self.offsets, self.stride);
        let body = |t: usize, mut regs: Vec<&mut [T]>| {
            if !updated.contains(&t) {
                return;
            }
            let mut out = vec![T::default(); nu];
            let mut inp = vec![[T::default(); LANES]; S::LOADS.len()];
            let mut lanes = vec![[T::default(); LANES]; nu];
            for &[j, _] in &rows {
                let row = j * stride[1];
                // Groups of LANES nodes along x, then the rest one by one.
                let mut i = xs.start;
                while i + LANES <= xs.end {
                    let local = row + i;
                    let idx = t * plane + local;
                    for (k, v) in inp.iter_mut().enumerate() {
                        let start = (idx as isize + offsets[k]) as usize;
                        v.copy_from_slice(&phi[S::LOADS[k].0][start..start + LANES]);
                    }
                    S::rates_lanes(&inp, prm, &mut lanes);
                    for (u, r) in regs.iter_mut().enumerate() {
                        let r = &mut r[local..local + LANES];
                        let now = &phi[u][idx..idx + LANES];
                        for l in 0..LANES {
                            r[l] = match a {
                                None => now[l] + dt * lanes[u][l],
                                Some(a) => T::mul_add(a, r[l], dt * lanes[u][l]),
                            };
                        }
                    }
                    i += LANES;
                }
                for i in i..xs.end {
                    let local = row + i;
                    let idx = t * plane + local;
                    S::rates(
                        |k| {
                            let (u, _) = S::LOADS[k];
                            // The reads stay inside the padded array: `idx` is an updated
                            // node and the ghost layers are as deep as the stencils reach.
                            phi[u][(idx as isize + offsets[k]) as usize]
                        },
                        prm,
                        &mut out,
                    );
                    for (u, r) in regs.iter_mut().enumerate() {
                        r[local] = match a {
                            None => phi[u][idx] + dt * out[u],
                            Some(a) => T::mul_add(a, r[local], dt * out[u]),
                        };
                    }
                }
            }
        };
        parallel::for_each_owned(planes, &body);
    }

    /// `φ ← φ + b·reg` over the updated nodes.
    fn accumulate(&mut self, b: T) {
        let (xs, ys, zs) = (self.updated(0), self.updated(1), self.updated(2));
        for (phi, reg) in self.phi.iter_mut().zip(&self.reg) {
            for k in zs.clone() {
                for j in ys.clone() {
                    let row = j * self.stride[1] + k * self.stride[2];
                    for i in xs.clone() {
                        phi[row + i] = T::mul_add(b, reg[row + i], phi[row + i]);
                    }
                }
            }
        }
    }

    /// Advances `steps` steps of `dt` with the scheme's integrator; fails if an unknown is
    /// no longer finite at the end.
    pub fn advance(&mut self, steps: u64, dt: f64) -> Result<(), FdError> {
        if !(dt.is_finite() && dt > 0.0) {
            return Err(setup(format!(
                "{}: the time step must be positive and finite (got {dt})",
                S::NAME
            )));
        }
        let t = T::from_f64;
        for _ in 0..steps {
            match S::INTEGRATOR {
                Integrator::Euler => {
                    self.rates_pass(None, t(dt));
                    std::mem::swap(&mut self.phi, &mut self.reg);
                    self.fill();
                }
                rk => {
                    for &(a, b) in rk.stages() {
                        self.rates_pass(Some(t(a)), t(dt));
                        self.accumulate(t(b));
                        self.fill();
                    }
                }
            }
            self.steps += 1;
            self.time += dt;
        }
        self.check(dt)
    }

    fn check(&self, dt: f64) -> Result<(), FdError> {
        for (u, v) in self.phi.iter().enumerate() {
            for k in 0..self.n[2] {
                for j in 0..self.n[1] {
                    for i in 0..self.n[0] {
                        if !v[self.index([i, j, k])].is_finite() {
                            return Err(FdError::Diverged {
                                scheme: S::NAME,
                                step: self.steps,
                                unknown: S::UNKNOWNS[u],
                                node: [i, j, k],
                                dt,
                            });
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// `max |R_u|` over the updated nodes, per unknown: how far from a steady state.
    pub fn max_rates(&self) -> Vec<f64> {
        let nu = S::UNKNOWNS.len();
        let mut out = vec![T::default(); nu];
        let mut max = vec![0.0f64; nu];
        for k in self.updated(2) {
            for j in self.updated(1) {
                for i in self.updated(0) {
                    let idx = i + j * self.stride[1] + k * self.stride[2];
                    S::rates(
                        |l| self.phi[S::LOADS[l].0][(idx as isize + self.offsets[l]) as usize],
                        &self.prm,
                        &mut out,
                    );
                    for (m, r) in max.iter_mut().zip(&out) {
                        *m = m.max(r.to_f64().abs());
                    }
                }
            }
        }
        max
    }

    /// Bytes a step moves per node in the best case: each unknown read once and written once
    /// per pass (forward Euler: one pass; the three-stage scheme: three passes and three
    /// accumulations).
    pub fn bytes_per_node(&self) -> usize {
        let passes = match S::INTEGRATOR {
            Integrator::Euler => 2,
            Integrator::Rk3 => 3 * (3 + 3),
        };
        passes * S::UNKNOWNS.len() * T::BYTES
    }
}
