//! The model's kernels as expression graphs: moments, equilibrium, relaxation rates and
//! collide (with and without the body force), built from the exact polynomials of the analysis.
//!
//! The equilibrium is emitted per pair of opposite velocities (i, ī): with `P_i` the
//! equilibrium divided by the factor common to all populations (ρ),
//! `E = (P_i + P_ī)/2` and `O = (P_i − P_ī)/2` are sums over the monomials of (u, T), and
//! `f_eq_i = ρ (E + O)`, `f_eq_ī = ρ (E − O)`: the monomials are computed once per site and each
//! pair costs two short dot products, which is what makes D2Q37's collide need far fewer flops
//! than the ≈ 6600 of Calore et al.'s hand-written code (Calore et al. 2018 §3, 2016 §3).

use std::collections::{BTreeMap, HashMap};

use proc_macro2::Span;
use syn::{Error, Ident};

use crate::algebra::{eval, Algebra, Value};
use crate::analysis::{Analysis, Collision, PolyCtx, Rate, TrtMinus};
use crate::expr::Arg;
use crate::ir::{Id, Ir};
use crate::poly::{q, qf, Mono, Poly, Q};

/// A program: its graph and its outputs.
pub struct Program {
    pub ir: Ir,
    pub outputs: Vec<Id>,
}

/// Values of the model's variables as graph nodes (`None`: not yet computed).
type Vars = Vec<Option<Id>>;

/// Builds monomials of the variables, sharing products.
struct Monomials<'a> {
    vars: &'a Vars,
    memo: HashMap<Mono, Id>,
}

impl<'a> Monomials<'a> {
    fn new(vars: &'a Vars) -> Self {
        Monomials {
            vars,
            memo: HashMap::new(),
        }
    }

    fn get(&mut self, ir: &mut Ir, m: &Mono, names: &[String], span: Span) -> syn::Result<Id> {
        if let Some(&id) = self.memo.get(m) {
            return Ok(id);
        }
        let Some(v) = m.iter().rposition(|&e| e > 0) else {
            return Ok(ir.constant(q(1)));
        };
        let var = self.vars[v].ok_or_else(|| Error::new(span, format!("`{}` is used before it is defined: define the moments in order (rho, u, then T)", names[v])))?;
        let mut rest = m.clone();
        rest[v] -= 1;
        let lower = self.get(ir, &rest, names, span)?;
        let id = ir.mul(lower, var);
        self.memo.insert(m.clone(), id);
        Ok(id)
    }

    /// `Σ coef · monomial`, terms in a canonical order so equal sums share nodes.
    fn sum(&mut self, ir: &mut Ir, p: &Poly, names: &[String], span: Span) -> syn::Result<Id> {
        let mut acc = ir.constant(q(0));
        for (m, c) in &p.terms {
            let mono = self.get(ir, m, names, span)?;
            let k = ir.constant(c.clone());
            let t = ir.mul(k, mono);
            acc = ir.add(acc, t);
        }
        Ok(acc)
    }
}

/// `Σ_i a_i x_i` over the populations, in index order.
fn linear(ir: &mut Ir, xs: &[Id], coefs: &[Q]) -> Id {
    let mut acc = ir.constant(q(0));
    for (&x, a) in xs.iter().zip(coefs) {
        let k = ir.constant(a.clone());
        let t = ir.mul(k, x);
        acc = ir.add(acc, t);
    }
    acc
}

/// Evaluation of moment definitions into the graph: `sum(φ)` becomes
/// `Σ_m monomial_m(u, …) · Σ_i coef_{i,m} f_i`, with φ expanded exactly per population.
struct IrCtx<'a> {
    an: &'a Analysis,
    ir: &'a mut Ir,
    f: &'a [Id],
    vars: &'a Vars,
    names: HashMap<String, Value<Poly>>,
    /// One `f` variable stands for every population inside a summand.
    fpolys: Vec<Poly>,
    /// In a relaxation rate: the site's `f_i − f_eq_i` for `neq(…)`, or `None` at rest (the
    /// state `validate` checks, where the non-equilibrium part vanishes).
    rate: Option<Option<Vec<Id>>>,
}

impl Algebra for IrCtx<'_> {
    crate::algebra::ir_arithmetic!();
    fn div(&mut self, a: &Id, b: &Id, _span: Span) -> syn::Result<Id> {
        Ok(self.ir.div(*a, *b))
    }
    fn ident(&mut self, name: &str, span: Span) -> syn::Result<Value<Id>> {
        match self.names.get(name) {
            Some(v) => {
                let node = |p: &Poly| -> syn::Result<Id> {
                    let (m, _) = p.terms.iter().next().expect("a variable");
                    let v = m.iter().position(|&e| e == 1).expect("a variable");
                    self.vars[v].ok_or_else(|| Error::new(span, format!("`{name}` is used before it is defined: define the moments in order (rho, u, then T)")))
                };
                Ok(match v {
                    Value::Scalar(p) => Value::Scalar(node(p)?),
                    Value::Vector(ps) => {
                        Value::Vector(ps.iter().map(node).collect::<syn::Result<_>>()?)
                    }
                })
            }
            None => {
                let mut poly = self.poly_ctx(None);
                match poly.ident(name, span)? {
                    Value::Scalar(p) => Ok(Value::Scalar(
                        self.ir.constant(p.as_constant().expect("a constant")),
                    )),
                    Value::Vector(_) => unreachable!("per-velocity names need a population"),
                }
            }
        }
    }
    fn call(&mut self, name: &Ident, args: &[Arg], span: Span) -> syn::Result<Value<Id>> {
        if self.rate.is_some() {
            return self.rate_call(name, args, span);
        }
        if name != "sum" {
            return Err(Error::new(
                name.span(),
                format!("`{name}` cannot be used in a moment definition"),
            ));
        }
        let [arg] = args else {
            return Err(Error::new(name.span(), "`sum(…)` takes one argument"));
        };
        let nq = self.an.lattice.c.len();
        let mut per_pop = Vec::with_capacity(nq);
        for i in 0..nq {
            per_pop.push(match eval(&mut self.poly_ctx(Some(i)), &arg.value)? {
                Value::Scalar(p) => vec![p],
                Value::Vector(v) => v,
            });
        }
        let ncomp = per_pop[0].len();
        let fv = self.an.f_var();
        let mut comps = Vec::with_capacity(ncomp);
        for k in 0..ncomp {
            // Group by monomial of the other variables: coefficient of f_i for each population.
            let mut groups: BTreeMap<Mono, Vec<Q>> = BTreeMap::new();
            for (i, p) in per_pop.iter().enumerate() {
                for (m, c) in &p[k].terms {
                    if m[fv] != 1 {
                        return Err(arg
                            .value
                            .error("the summand of sum(…) must be linear in f, e.g. sum(f * c)"));
                    }
                    let mut rest = m.clone();
                    rest[fv] = 0;
                    groups.entry(rest).or_insert_with(|| vec![q(0); nq])[i] += c.clone();
                }
            }
            let mut mono = Monomials::new(self.vars);
            let mut acc = self.ir.constant(q(0));
            for (m, coefs) in &groups {
                let l = linear(self.ir, self.f, coefs);
                let mn = mono.get(self.ir, m, &self.an.var_names, span)?;
                let t = self.ir.mul(mn, l);
                acc = self.ir.add(acc, t);
            }
            comps.push(acc);
        }
        Ok(if ncomp == 1 {
            Value::Scalar(comps[0])
        } else {
            Value::Vector(comps)
        })
    }
}

impl IrCtx<'_> {
    /// The functions of a relaxation rate: `sqrt(x)`; `neq(φ)`, the non-equilibrium moment
    /// `Σ_i φ(c_i) (f_i − f_eq_i)`; and `smagorinsky(tau = τ₀, c = C)`, the relaxation time of
    /// Smagorinsky's eddy viscosity in the form of Hou et al. (1996, J. Comput. Phys. 118, 329),
    ///
    /// ```text
    /// τ = ½ (τ₀ + √(τ₀² + 2 C² |Q| / (ρ cs⁴))),   |Q| = √(2 Σ_αβ Π_αβ²),   Π_αβ = neq(c_α c_β),
    /// ```
    ///
    /// from `ν_t = (C Δ)² |S|` with the strain rate `|S| = |Q| / (2 ρ cs² τ)` read from the local
    /// non-equilibrium stress (no finite differences); for `cs² = 1/3` the factor is Hou's
    /// `18 C² √(2 Π:Π) / ρ`, with the lattice spacing Δ = 1.
    fn rate_call(&mut self, name: &Ident, args: &[Arg], span: Span) -> syn::Result<Value<Id>> {
        let scalar = |ctx: &mut Self, e: &crate::expr::Expr| -> syn::Result<Id> {
            eval(ctx, e)?.scalar(e.span, "an argument")
        };
        match (name.to_string().as_str(), args) {
            ("sqrt", [a]) if a.name.is_none() => {
                let x = scalar(self, &a.value)?;
                Ok(Value::Scalar(self.ir.sqrt(x)))
            }
            ("neq", [a]) if a.name.is_none() => Ok(Value::Scalar(self.neq(&a.value)?)),
            ("smagorinsky", [_, _]) if named_arg(args, "tau").zip(named_arg(args, "c")).is_some() => {
                let tau0 = scalar(self, named_arg(args, "tau").expect("matched"))?;
                let c = scalar(self, named_arg(args, "c").expect("matched"))?;
                self.smagorinsky(tau0, c, span)
            }
            ("sqrt" | "neq", _) => Err(Error::new(name.span(), format!("`{name}` takes one argument: {name}(…)"))),
            ("smagorinsky", _) => Err(Error::new(name.span(), "smagorinsky takes smagorinsky(tau = <τ₀>, c = <Smagorinsky constant>)")),
            _ => Err(Error::new(name.span(), format!("unknown function `{name}` in a relaxation rate: rates may use sqrt(x), neq(φ) (the non-equilibrium moment Σ φ (f − f_eq)) and smagorinsky(tau = …, c = …)"))),
        }
    }

    /// `neq(φ)`: `Σ_i φ(c_i) (f_i − f_eq_i)`, zero at rest.
    fn neq(&mut self, phi: &crate::expr::Expr) -> syn::Result<Id> {
        let nq = self.an.lattice.c.len();
        let mut coefs = Vec::with_capacity(nq);
        for i in 0..nq {
            let p = eval(&mut self.poly_ctx(Some(i)), phi)?.scalar(phi.span, "neq(…)")?;
            coefs.push(p.as_constant().ok_or_else(|| {
                phi.error("neq(φ) takes a polynomial in the velocity c (cx, cy, cz) only")
            })?);
        }
        Ok(self.neq_of(&coefs))
    }

    /// `Σ_i coefs_i (f_i − f_eq_i)` at the site, zero at rest.
    fn neq_of(&mut self, coefs: &[Q]) -> Id {
        match self.rate.as_ref().and_then(Option::as_ref) {
            Some(dneq) => {
                let dneq = dneq.clone();
                linear(self.ir, &dneq, coefs)
            }
            None => self.ir.constant(q(0)),
        }
    }

    fn smagorinsky(&mut self, tau0: Id, c: Id, span: Span) -> syn::Result<Value<Id>> {
        let an = self.an;
        let rho = an.moment(crate::analysis::Role::Density).ok_or_else(|| {
            Error::new(span, "smagorinsky(…) divides the stress by the density: the model needs a density moment (`rho = sum(f);`)")
        })?;
        let rho = self.vars[rho.vars[0]].expect("moments computed before the rates");
        let dim = an.lattice.dim;
        let mut pi2 = self.ir.constant(q(0));
        for a in 0..dim {
            for b in a..dim {
                let coefs: Vec<Q> = an
                    .lattice
                    .c
                    .iter()
                    .map(|c| q((c[a] * c[b]).into()))
                    .collect();
                let p = self.neq_of(&coefs);
                let sq = self.ir.mul(p, p);
                let w = self.ir.constant(q(if a == b { 1 } else { 2 }));
                let t = self.ir.mul(w, sq);
                pi2 = self.ir.add(pi2, t);
            }
        }
        // |Q| = √(2 Π:Π); τ = ½(τ₀ + √(τ₀² + 2C²|Q|/(ρ cs⁴)))
        let two = self.ir.constant(q(2));
        let two_pi2 = self.ir.mul(two, pi2);
        let qn = self.ir.sqrt(two_pi2);
        let cs4 = an.lattice.cs2.clone() * an.lattice.cs2.clone();
        let k = self.ir.constant(q(2) / cs4);
        let c2 = self.ir.mul(c, c);
        let kc2 = self.ir.mul(k, c2);
        let num = self.ir.mul(kc2, qn);
        let frac = self.ir.div(num, rho);
        let t2 = self.ir.mul(tau0, tau0);
        let inner = self.ir.add(t2, frac);
        let root = self.ir.sqrt(inner);
        let sum = self.ir.add(tau0, root);
        let half = self.ir.constant(qf(1, 2));
        Ok(Value::Scalar(self.ir.mul(half, sum)))
    }

    fn poly_ctx(&self, pop: Option<usize>) -> PolyCtx<'_> {
        PolyCtx {
            lattice: &self.an.lattice,
            nvars: self.an.nvars(),
            names: self.names.clone(),
            pop,
            sum_f: Some(&self.fpolys),
            roles: &self.an.roles,
            shift: None,
        }
    }
}

fn ir_ctx<'a>(
    an: &'a Analysis,
    ir: &'a mut Ir,
    f: &'a [Id],
    vars: &'a Vars,
    names: HashMap<String, Value<Poly>>,
) -> IrCtx<'a> {
    let fpolys = vec![Poly::var(an.nvars(), an.f_var()); an.lattice.c.len()];
    IrCtx {
        an,
        ir,
        f,
        vars,
        names,
        fpolys,
        rate: None,
    }
}

/// The argument called `key`, if any.
fn named_arg<'a>(args: &'a [Arg], key: &str) -> Option<&'a crate::expr::Expr> {
    args.iter()
        .find(|a| a.name.as_ref().is_some_and(|n| n == key))
        .map(|a| &a.value)
}

/// The polynomial value of every name, for evaluating formulas.
pub fn names(an: &Analysis) -> HashMap<String, Value<Poly>> {
    crate::analysis::names_of(&an.moments, &an.var_names, &an.params)
}

/// Variables of the graph: parameters as parameter nodes, moments not yet computed.
fn param_vars(an: &Analysis, ir: &mut Ir) -> Vars {
    let mut vars = vec![None; an.nvars()];
    for k in 0..an.params.len() {
        vars[an.param_var(k)] = Some(ir.param(k));
    }
    vars
}

/// Computes the moments from the populations `f` into `vars`, in declaration order.
fn moments(an: &Analysis, ir: &mut Ir, f: &[Id], vars: &mut Vars) -> syn::Result<()> {
    for m in &an.moments {
        let snapshot = vars.clone();
        let mut ctx = ir_ctx(an, ir, f, &snapshot, names(an));
        let v = eval(&mut ctx, &m.def)?;
        let ids = match v {
            Value::Scalar(s) => vec![s],
            Value::Vector(v) => v,
        };
        for (&k, id) in m.vars.iter().zip(ids) {
            vars[k] = Some(id);
        }
    }
    Ok(())
}

/// Evaluates an expression of the parameters as a (uniform) node.
fn uniform(an: &Analysis, ir: &mut Ir, e: &crate::expr::Expr) -> syn::Result<Id> {
    let allowed = |n: &str| an.params.iter().any(|p| p == n) || ["cs2", "dim", "D"].contains(&n);
    if let Some(bad) = crate::analysis::find_ident(e, &|n| !allowed(n)) {
        let what = if an.moments.iter().any(|m| {
            bad_name(bad) == m.name || m.vars.iter().any(|&k| an.var_names[k] == bad_name(bad))
        }) {
            "a moment"
        } else {
            "not defined"
        };
        return Err(bad.error(format!(
            "`{}` is {what}: a force may use only the parameters declared in `params {{ … }}` (and numbers, cs2, dim)",
            bad_name(bad)
        )));
    }
    let vars = param_vars(an, ir);
    let mut names = names(an);
    names.retain(|k, _| an.params.contains(k));
    let mut ctx = ir_ctx(an, ir, &[], &vars, names);
    eval(&mut ctx, e)?.scalar(e.span, "a rate or force component")
}

/// Where a relaxation rate is evaluated: at a site (its moments, populations and equilibrium),
/// or at rest (ρ = 1, u = 0, T = 1, every scalar 1, no non-equilibrium part) for `validate`.
enum RateAt<'a> {
    Rest,
    Site {
        vars: &'a Vars,
        f: &'a [Id],
        feq: &'a [Id],
    },
}

/// A rate expression: the parameters, the moments, `sqrt`, `neq(φ)` and `smagorinsky(…)` (an
/// unknown name is refused by the evaluation, which lists what is defined).
fn rate_expr(an: &Analysis, ir: &mut Ir, e: &crate::expr::Expr, at: &RateAt) -> syn::Result<Id> {
    let (vars, f, dneq) = match at {
        RateAt::Site { vars, f, feq } => {
            let dneq = f.iter().zip(*feq).map(|(&a, &b)| ir.sub(a, b)).collect();
            ((*vars).clone(), f.to_vec(), Some(dneq))
        }
        RateAt::Rest => {
            let mut vars = param_vars(an, ir);
            for m in &an.moments {
                use crate::analysis::Role;
                let rest = match m.role {
                    Role::Velocity | Role::Vector => q(0),
                    Role::Density | Role::Temperature | Role::Scalar => q(1),
                };
                for &v in &m.vars {
                    vars[v] = Some(ir.constant(rest.clone()));
                }
            }
            (vars, Vec::new(), None)
        }
    };
    let mut ctx = ir_ctx(an, ir, &f, &vars, names(an));
    ctx.rate = Some(dneq);
    eval(&mut ctx, e)?.scalar(e.span, "a relaxation rate")
}

/// The relaxation rate ω of a [`Rate`] (ω = 1/τ for a relaxation time).
fn rate(an: &Analysis, ir: &mut Ir, r: &Rate, at: &RateAt) -> syn::Result<Id> {
    let x = rate_expr(an, ir, &r.expr, at)?;
    Ok(if r.is_time {
        let one = ir.constant(q(1));
        ir.div(one, x)
    } else {
        x
    })
}

/// TRT's odd rate from the magic parameter: 1/ω⁻ = Λ/(1/ω⁺ − ½) + ½ (Ginzburg et al. 2008).
fn trt_minus(
    an: &Analysis,
    ir: &mut Ir,
    plus: Id,
    minus: &TrtMinus,
    at: &RateAt,
) -> syn::Result<Id> {
    match minus {
        TrtMinus::Rate(r) => rate(an, ir, r, at),
        TrtMinus::Magic(e) => {
            let lambda = rate_expr(an, ir, e, at)?;
            let (one, half) = (ir.constant(q(1)), ir.constant(qf(1, 2)));
            let tau_p = ir.div(one, plus);
            let d = ir.sub(tau_p, half);
            let r = ir.div(lambda, d);
            let tau_m = ir.add(r, half);
            Ok(ir.div(one, tau_m))
        }
    }
}

/// All relaxation rates that must lie in (0, 2), with their labels, for `validate`.
pub fn rates(an: &Analysis) -> syn::Result<(Program, Vec<String>)> {
    let mut ir = Ir::new(&an.fields);
    let mut outputs = Vec::new();
    let mut labels = Vec::new();
    let mut push = |id: Id, label: String| {
        outputs.push(id);
        labels.push(label);
    };
    match &an.collision {
        Collision::Bgk { omega } => push(rate(an, &mut ir, omega, &RateAt::Rest)?, describe(omega)),
        Collision::Trt { plus, minus } => {
            let p = rate(an, &mut ir, plus, &RateAt::Rest)?;
            push(p, describe(plus));
            let m = trt_minus(an, &mut ir, p, minus, &RateAt::Rest)?;
            push(
                m,
                match minus {
                    TrtMinus::Rate(r) => describe(r),
                    TrtMinus::Magic(e) => format!("ω⁻ from magic = {}", crate::expr::show(e)),
                },
            );
        }
        Collision::Mrt { rates, .. } => {
            for (k, r) in rates.iter().enumerate() {
                if let Some(r) = r {
                    push(
                        rate(an, &mut ir, r, &RateAt::Rest)?,
                        format!("MRT rate {k} = {}", crate::expr::show(&r.expr)),
                    );
                }
            }
        }
        Collision::Regularized { omega } => {
            push(rate(an, &mut ir, omega, &RateAt::Rest)?, describe(omega))
        }
    }
    Ok((Program { ir, outputs }, labels))
}

fn describe(r: &Rate) -> String {
    let e = crate::expr::show(&r.expr);
    if r.is_time {
        format!("ω = 1/τ with τ = {e}")
    } else {
        format!("{} = {e}", r.label)
    }
}

/// The equilibrium of every population as `factor · (even_i + odd_i)`.
struct EqParts {
    factor: Id,
    even: Vec<Id>,
    odd: Vec<Id>,
}

impl EqParts {
    fn feq(&self, ir: &mut Ir, i: usize) -> Id {
        let s = ir.add(self.even[i], self.odd[i]);
        ir.mul(self.factor, s)
    }
}

fn eq_parts(an: &Analysis, ir: &mut Ir, vars: &Vars, span: Span) -> syn::Result<EqParts> {
    let n = an.nvars();
    let common: Mono = (0..n)
        .map(|v| {
            an.feq
                .iter()
                .flat_map(|p| p.terms.keys())
                .map(|m| m[v])
                .min()
                .unwrap_or(0)
        })
        .collect();
    let divisor = Poly {
        nvars: n,
        terms: BTreeMap::from([(common.clone(), q(1))]),
    };
    let reduced: Vec<Poly> = an
        .feq
        .iter()
        .map(|p| p.div(&divisor).expect("common factor divides"))
        .collect();
    let mut mono = Monomials::new(vars);
    let factor = mono.get(ir, &common, &an.var_names, span)?;
    let nq = reduced.len();
    let zero = ir.constant(q(0));
    let (mut even, mut odd) = (vec![zero; nq], vec![zero; nq]);
    for i in 0..nq {
        let j = an.lattice.opposite[i];
        if j < i {
            continue;
        }
        let half = qf(1, 2);
        let e = reduced[i].add(&reduced[j]).scale(&half);
        let o = reduced[i].sub(&reduced[j]).scale(&half);
        even[i] = mono.sum(ir, &e, &an.var_names, span)?;
        even[j] = even[i];
        odd[i] = mono.sum(ir, &o, &an.var_names, span)?;
        odd[j] = ir.neg(odd[i]);
    }
    Ok(EqParts { factor, even, odd })
}

/// The `moments` program: inputs are the populations; with a force, the velocity returned is the
/// physical one, `u + a/2` (the exact-difference method's velocity at half step).
pub fn moments_program(an: &Analysis) -> syn::Result<Program> {
    let mut ir = Ir::new(&an.fields);
    let f: Vec<Id> = (0..an.lattice.c.len()).map(|i| ir.input(i)).collect();
    let mut vars = param_vars(an, &mut ir);
    moments(an, &mut ir, &f, &mut vars)?;
    if let Some(force) = &an.force {
        let u = an
            .moment(crate::analysis::Role::Velocity)
            .expect("checked")
            .vars
            .clone();
        for (k, e) in u.iter().zip(force) {
            let a = uniform(an, &mut ir, e)?;
            let half = ir.constant(qf(1, 2));
            let shift = ir.mul(a, half);
            vars[*k] = Some(ir.add(vars[*k].unwrap(), shift));
        }
    }
    let outputs = an
        .moments
        .iter()
        .flat_map(|m| m.vars.iter().map(|&k| vars[k].unwrap()))
        .collect();
    Ok(Program { ir, outputs })
}

/// The `equilibrium` program: inputs are the moments in declaration order (the equilibrium
/// may also use the parameters).
pub fn equilibrium_program(an: &Analysis, span: Span) -> syn::Result<Program> {
    let mut ir = Ir::new(&an.fields);
    let mut vars = param_vars(an, &mut ir);
    let mut k = 0;
    for m in &an.moments {
        for &v in &m.vars {
            vars[v] = Some(ir.input(k));
            k += 1;
        }
    }
    let parts = eq_parts(an, &mut ir, &vars, span)?;
    let outputs = (0..an.lattice.c.len())
        .map(|i| parts.feq(&mut ir, i))
        .collect();
    Ok(Program { ir, outputs })
}

/// The `collide` program, with the body force applied by the exact-difference method
/// (Kupershtokh 2004): `f_i ← Ω_i(f) + f_eq_i(ρ, u + a) − f_eq_i(ρ, u)`, which changes the
/// momentum by exactly ρa per step whatever the collision operator.
pub fn collide_program(an: &Analysis, forced: bool, span: Span) -> syn::Result<Program> {
    let mut ir = Ir::new(&an.fields);
    let nq = an.lattice.c.len();
    let f: Vec<Id> = (0..nq).map(|i| ir.input(i)).collect();
    let mut vars = param_vars(an, &mut ir);
    moments(an, &mut ir, &f, &mut vars)?;
    let eq = eq_parts(an, &mut ir, &vars, span)?;
    let mut out = relax(an, &mut ir, &f, &eq, &vars, span)?;
    if forced {
        let force = an.force.as_ref().expect("forced only with a force");
        let mut shifted = vars.clone();
        let u = &an
            .moment(crate::analysis::Role::Velocity)
            .expect("checked")
            .vars;
        for (k, e) in u.iter().zip(force) {
            let a = uniform(an, &mut ir, e)?;
            shifted[*k] = Some(ir.add(vars[*k].unwrap(), a));
        }
        let eq2 = eq_parts(an, &mut ir, &shifted, span)?;
        for (i, o) in out.iter_mut().enumerate() {
            let (new, old) = (eq2.feq(&mut ir, i), eq.feq(&mut ir, i));
            let d = ir.sub(new, old);
            *o = ir.add(*o, d);
        }
    }
    Ok(Program { ir, outputs: out })
}

/// The collision operator applied to `f` with the equilibrium `eq`.
fn relax(
    an: &Analysis,
    ir: &mut Ir,
    f: &[Id],
    eq: &EqParts,
    vars: &Vars,
    span: Span,
) -> syn::Result<Vec<Id>> {
    let nq = f.len();
    let feq: Vec<Id> = (0..nq).map(|i| eq.feq(ir, i)).collect();
    let at = RateAt::Site { vars, f, feq: &feq };
    match &an.collision {
        // f_i + ω (f_eq_i − f_i)   (Calore et al. 2019, eq. 1)
        Collision::Bgk { omega } => {
            let w = rate(an, ir, omega, &at)?;
            Ok((0..nq)
                .map(|i| {
                    let feq = eq.feq(ir, i);
                    let d = ir.sub(feq, f[i]);
                    let t = ir.mul(w, d);
                    ir.add(f[i], t)
                })
                .collect())
        }
        // f_i − ω⁺ (f⁺ − f_eq⁺) − ω⁻ (f⁻ − f_eq⁻), f^± = (f_i ± f_ī)/2
        Collision::Trt { plus, minus } => {
            let wp = rate(an, ir, plus, &at)?;
            let wm = trt_minus(an, ir, wp, minus, &at)?;
            let half = ir.constant(qf(1, 2));
            let mut out = vec![f[0]; nq];
            for i in 0..nq {
                let j = an.lattice.opposite[i];
                let s = ir.add(f[i], f[j]);
                let fp = ir.mul(half, s);
                let eqp = ir.mul(eq.factor, eq.even[i]);
                let dp0 = ir.sub(fp, eqp);
                let dp = ir.mul(wp, dp0);
                let a = ir.sub(f[i], f[j]);
                let fm = ir.mul(half, a);
                let eqm = ir.mul(eq.factor, eq.odd[i]);
                let dm0 = ir.sub(fm, eqm);
                let dm = ir.mul(wm, dm0);
                let t = ir.sub(f[i], dp);
                out[i] = ir.sub(t, dm);
            }
            Ok(out)
        }
        // f − M⁻¹ S (M f − m_eq)   (Lallemand & Luo 2000), or with central moments
        // f − M⁻¹ N(−u) S (N(u) M f − N(u) m_eq)   (Geier, Greiner & Korvink 2006)
        Collision::Mrt {
            m,
            minv,
            rates,
            shift,
        } => {
            let mut mono = Monomials::new(vars);
            let raw: Vec<Id> = m.iter().map(|row| linear(ir, f, row)).collect();
            let raw_eq: Vec<Poly> = m
                .iter()
                .map(|row| {
                    row.iter()
                        .zip(&an.feq)
                        .fold(Poly::zero(an.nvars()), |acc, (a, p)| acc.add(&p.scale(a)))
                })
                .collect();
            let (moment, equilibrium) = match shift {
                None => (raw, raw_eq),
                Some(s) => {
                    let mut kappa = Vec::with_capacity(nq);
                    for row in &s.to {
                        kappa.push(poly_linear(ir, &mut mono, row, &raw, an, span)?);
                    }
                    let kappa_eq =
                        s.to.iter()
                            .map(|row| {
                                row.iter()
                                    .zip(&raw_eq)
                                    .fold(Poly::zero(an.nvars()), |acc, (n, p)| acc.add(&n.mul(p)))
                            })
                            .collect();
                    (kappa, kappa_eq)
                }
            };
            let mut dm = Vec::with_capacity(nq);
            for ((mk, eq_poly), r) in moment.iter().zip(&equilibrium).zip(rates) {
                let Some(r) = r else {
                    dm.push(ir.constant(q(0)));
                    continue;
                };
                let meq = mono.sum(ir, eq_poly, &an.var_names, span)?;
                let s = rate(an, ir, r, &at)?;
                let d = ir.sub(*mk, meq);
                dm.push(ir.mul(s, d));
            }
            if let Some(s) = shift {
                let mut raw_dm = Vec::with_capacity(nq);
                for row in &s.back {
                    raw_dm.push(poly_linear(ir, &mut mono, row, &dm, an, span)?);
                }
                dm = raw_dm;
            }
            Ok((0..nq)
                .map(|i| {
                    let back = linear(ir, &dm, &minv[i]);
                    ir.sub(f[i], back)
                })
                .collect())
        }
        // f_eq + (1 − ω) w_i/(2 cs⁴) (c_iα c_iβ − cs² δ_αβ) Π⁽¹⁾_αβ   (Latt & Chopard 2006)
        Collision::Regularized { omega } => {
            let w = rate(an, ir, omega, &at)?;
            let l = &an.lattice;
            let neq: Vec<Id> = (0..nq).map(|i| ir.sub(f[i], feq[i])).collect();
            let pairs: Vec<(usize, usize)> = (0..l.dim)
                .flat_map(|a| (a..l.dim).map(move |b| (a, b)))
                .collect();
            let pi: Vec<Id> = pairs
                .iter()
                .map(|&(a, b)| {
                    let coefs: Vec<Q> = l.c.iter().map(|c| q((c[a] * c[b]).into())).collect();
                    linear(ir, &neq, &coefs)
                })
                .collect();
            let one = ir.constant(q(1));
            let keep = ir.sub(one, w);
            Ok((0..nq)
                .map(|i| {
                    // Off-diagonal pairs count twice in the double contraction.
                    let coefs: Vec<Q> = pairs
                        .iter()
                        .map(|&(a, b)| {
                            let h = q((l.c[i][a] * l.c[i][b]).into())
                                - if a == b { l.cs2.clone() } else { q(0) };
                            let twice = if a == b { q(1) } else { q(2) };
                            h * twice * l.w[i].clone() / (q(2) * l.cs2.clone() * l.cs2.clone())
                        })
                        .collect();
                    let f1 = linear(ir, &pi, &coefs);
                    let t = ir.mul(keep, f1);
                    ir.add(feq[i], t)
                })
                .collect())
        }
    }
}

/// `Σ_j p_j(moments) · x_j`: a row of polynomials (a shift matrix's) applied to nodes.
fn poly_linear(
    ir: &mut Ir,
    mono: &mut Monomials,
    row: &[Poly],
    xs: &[Id],
    an: &Analysis,
    span: Span,
) -> syn::Result<Id> {
    let mut acc = ir.constant(q(0));
    for (p, &x) in row.iter().zip(xs) {
        if p.is_zero() {
            continue;
        }
        let a = mono.sum(ir, p, &an.var_names, span)?;
        let t = ir.mul(a, x);
        acc = ir.add(acc, t);
    }
    Ok(acc)
}

/// The force vector as uniform nodes (for the "is the force on" test).
pub fn force_program(an: &Analysis) -> syn::Result<Option<Program>> {
    let Some(force) = &an.force else {
        return Ok(None);
    };
    let mut ir = Ir::new(&an.fields);
    let outputs = force
        .iter()
        .map(|e| uniform(an, &mut ir, e))
        .collect::<syn::Result<_>>()?;
    Ok(Some(Program { ir, outputs }))
}

fn bad_name(e: &crate::expr::Expr) -> &str {
    match &e.kind {
        crate::expr::ExprKind::Ident(n) => n,
        _ => "",
    }
}
