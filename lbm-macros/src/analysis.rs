//! The symbolic model: variables, moments, the equilibrium as exact polynomials, the collision
//! and the force, with the physical checks: isotropy against the equilibrium's
//! order, and conservation of every moment declared conserved, proved symbolically.
//!
//! Moments carry the names the user gives them and a role (density, velocity, temperature,
//! scalar, vector): `rho`, `u` and `T` have theirs by default, any other name states it
//! (`phi: scalar = sum(f);`). The collision conserves the moments listed in
//! `conserved = [...]`, or all of them when the item is absent; the equilibrium may use the
//! moments and the parameters (a velocity given as a parameter carries a passive scalar).

use std::collections::HashMap;

use num_traits::Zero;
use proc_macro2::Span;
use syn::{Error, Ident};

use crate::algebra::{eval, Algebra, Value};
use crate::expr::{eval_const, Arg, Expr, ExprKind};
use crate::lattice::Lattice;
use crate::parse::ModelDecl;
use crate::poly::{q, qf, Poly, Q};

/// Tolerance of the symbolic conservation checks (decimal weights leave ~1e-21).
const CONSERVATION_TOL: f64 = 1e-12;

/// Names the DSL defines itself; parameters and moments may not take them.
pub const BUILTINS: &[&str] = &[
    "c",
    "cx",
    "cy",
    "cz",
    "w",
    "f",
    "cs2",
    "dim",
    "D",
    "dot",
    "norm2",
    "sum",
    "hermite",
    "bgk",
    "trt",
    "mrt",
    "central_mrt",
    "regularized",
];

/// What a moment means to the runtime.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Role {
    Density,
    Velocity,
    Temperature,
    /// A scalar the runtime attaches no physics to (a concentration carried by a flow).
    Scalar,
    /// A vector the runtime attaches no physics to (the flux of a scalar).
    Vector,
}

impl Role {
    /// The role written in a declaration (`phi: scalar = …`).
    fn parse(id: &Ident, moment: &str) -> syn::Result<Role> {
        Ok(match id.to_string().as_str() {
            "density" => Role::Density,
            "velocity" => Role::Velocity,
            "temperature" => Role::Temperature,
            "scalar" => Role::Scalar,
            "vector" => Role::Vector,
            other => return Err(Error::new(id.span(), format!("unknown role `{other}` of moment `{moment}`: a moment is a density, velocity, temperature, scalar or vector"))),
        })
    }

    /// The role a moment has without an annotation: `rho`, `u` and `T` by convention.
    fn by_name(name: &str) -> Option<Role> {
        match name {
            "rho" => Some(Role::Density),
            "u" => Some(Role::Velocity),
            "T" => Some(Role::Temperature),
            _ => None,
        }
    }

    /// Whether a moment of this role has D components.
    pub fn is_vector(self) -> bool {
        matches!(self, Role::Velocity | Role::Vector)
    }

    /// The runtime's name of this role (`::lbm::Role::…`) for component `axis`.
    pub fn runtime(self, axis: usize) -> proc_macro2::TokenStream {
        match self {
            Role::Density => quote::quote!(::lbm::Role::Density),
            Role::Velocity => quote::quote!(::lbm::Role::Velocity(#axis)),
            Role::Temperature => quote::quote!(::lbm::Role::Temperature),
            Role::Scalar => quote::quote!(::lbm::Role::Scalar),
            Role::Vector => quote::quote!(::lbm::Role::Vector(#axis)),
        }
    }

    /// What conserving a moment of this role means, for messages.
    fn quantity(self, name: &str) -> String {
        match self {
            Role::Density => "mass".into(),
            Role::Velocity => "momentum".into(),
            Role::Temperature => "energy".into(),
            Role::Scalar => format!("the scalar `{name}`"),
            Role::Vector => format!("the vector `{name}`"),
        }
    }
}

/// A declared moment.
pub struct Moment {
    pub name: String,
    pub role: Role,
    /// Its variables: one for a scalar, D for a vector.
    pub vars: Vec<usize>,
    pub def: Expr,
    /// Whether the collision conserves it (listed in `conserved`, or no such list).
    pub conserved: bool,
}

/// The names of the moments that the Hermite equilibrium is built from, by role.
#[derive(Clone, Default)]
pub struct Roles {
    pub density: Option<String>,
    pub velocity: Option<String>,
    pub temperature: Option<String>,
}

impl Roles {
    fn of(moments: &[Moment]) -> Roles {
        let find = |r: Role| moments.iter().find(|m| m.role == r).map(|m| m.name.clone());
        Roles {
            density: find(Role::Density),
            velocity: find(Role::Velocity),
            temperature: find(Role::Temperature),
        }
    }
}

/// The collision operator, with its rates as expressions of the parameters.
pub enum Collision {
    /// `f' = f + ω (f_eq − f)`.
    Bgk { omega: Rate },
    /// Two rates for the even and odd parts (Ginzburg's TRT).
    Trt { plus: Rate, minus: TrtMinus },
    /// `f' = f − M⁻¹ S (M f − m_eq)` (Lallemand & Luo 2000); with a `shift`, the moments are
    /// central: `f' = f − M⁻¹ N(−u) S (N(u) M f − N(u) m_eq)` (Geier, Greiner & Korvink 2006).
    Mrt {
        m: Vec<Vec<Q>>,
        minv: Vec<Vec<Q>>,
        rates: Vec<Option<Rate>>,
        shift: Option<Shift>,
    },
    /// Regularized BGK (Latt & Chopard 2006): `f' = f_eq + (1 − ω) f⁽¹⁾`, the non-equilibrium
    /// part projected on the second-order Hermite polynomials,
    /// `f⁽¹⁾_i = w_i/(2 cs⁴) (c_iα c_iβ − cs² δ_αβ) Π⁽¹⁾_αβ`, `Π⁽¹⁾ = Σ_i c_i c_i (f_i − f_eq_i)`.
    Regularized { omega: Rate },
}

/// The shift matrix of a central-moment basis `P_k`: `P_k(c − u) = Σ_j N_kj(u) P_j(c)`, so the
/// central moments are `κ = N(u) m` and the raw ones `m = N(−u) κ` (the basis spans a space
/// closed under shifts of `c`, checked when it is built).
pub struct Shift {
    /// `N(u)`, polynomials in the velocity.
    pub to: Vec<Vec<Poly>>,
    /// `N(−u)`, its inverse.
    pub back: Vec<Vec<Poly>>,
}

impl Collision {
    /// Whether a rate depends on the site's state: uses a moment or a function (`neq`,
    /// `smagorinsky`, `sqrt` of them).
    pub fn state_dependent(&self, moments: &[Moment], var_names: &[String]) -> bool {
        let is_moment = |n: &str| {
            moments
                .iter()
                .any(|m| m.name == n || m.vars.iter().any(|&k| var_names[k] == n))
        };
        let local = |e: &Expr| find_ident(e, &is_moment).is_some() || has_call(e);
        match self {
            Collision::Bgk { omega } => local(&omega.expr),
            Collision::Trt { plus, minus } => {
                local(&plus.expr)
                    || match minus {
                        TrtMinus::Rate(r) => local(&r.expr),
                        TrtMinus::Magic(e) => local(e),
                    }
            }
            Collision::Mrt { rates, .. } => rates.iter().flatten().any(|r| local(&r.expr)),
            Collision::Regularized { omega } => local(&omega.expr),
        }
    }
}

/// Whether `e` calls a function.
fn has_call(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call(..) => true,
        ExprKind::Num(_) | ExprKind::Ident(_) => false,
        ExprKind::Unary(a) => has_call(a),
        ExprKind::Binary(_, a, b) => has_call(a) || has_call(b),
        ExprKind::Tuple(v) | ExprKind::List(v) => v.iter().any(has_call),
    }
}

/// How TRT's odd rate is given.
pub enum TrtMinus {
    Rate(Rate),
    /// The magic parameter Λ = (1/ω⁺ − ½)(1/ω⁻ − ½).
    Magic(Expr),
}

/// A relaxation rate ω: given directly, or as a relaxation time τ with ω = 1/τ.
pub struct Rate {
    pub expr: Expr,
    pub is_time: bool,
    /// Source text, for messages.
    pub label: String,
}

/// The analysed model.
pub struct Analysis {
    pub lattice: Lattice,
    /// Names of all variables: the moments' components, the parameters, and `f`.
    pub var_names: Vec<String>,
    pub params: Vec<String>,
    /// `fields[k]`: parameter `k` is a `field`, whose value may differ from site to site.
    pub fields: Vec<bool>,
    pub moments: Vec<Moment>,
    pub roles: Roles,
    /// `f_eq_i` as polynomials in the variables.
    pub feq: Vec<Poly>,
    pub eq_order: u32,
    pub collision: Collision,
    pub force: Option<Vec<Expr>>,
}

impl Analysis {
    pub fn nvars(&self) -> usize {
        self.var_names.len()
    }
    pub fn f_var(&self) -> usize {
        self.var_names.len() - 1
    }
    pub fn param_var(&self, k: usize) -> usize {
        self.moments.iter().map(|m| m.vars.len()).sum::<usize>() + k
    }
    pub fn moment(&self, role: Role) -> Option<&Moment> {
        self.moments.iter().find(|m| m.role == role)
    }
}

/// Evaluation in exact polynomials. Names resolve to variables; `c`, `w`, `cx`, `cy`, `cz` to the
/// constants of population `pop`; `sum(φ)` to `Σ_i φ_i` with `f` replaced by `sum_f[i]`.
pub struct PolyCtx<'a> {
    pub lattice: &'a Lattice,
    pub nvars: usize,
    pub names: HashMap<String, Value<Poly>>,
    pub pop: Option<usize>,
    pub sum_f: Option<&'a [Poly]>,
    pub roles: &'a Roles,
    /// `Some(u)`: `c` is the peculiar velocity `c_i − u` (a central-moment basis row).
    pub shift: Option<&'a [Poly]>,
}

impl PolyCtx<'_> {
    fn k(&self, x: Q) -> Poly {
        Poly::constant(self.nvars, x)
    }
    /// Component `axis` of velocity `i`, less the shift's when there is one.
    fn velocity(&self, i: usize, axis: usize) -> Poly {
        let c = self.k(q(self.lattice.c[i][axis].into()));
        match self.shift {
            Some(u) => c.sub(&u[axis]),
            None => c,
        }
    }
    fn population(&self, name: &str, span: Span) -> syn::Result<usize> {
        self.pop.ok_or_else(|| Error::new(span, format!("`{name}` is a per-velocity quantity: use it inside sum(…), the equilibrium or the MRT basis")))
    }
}

impl Algebra for PolyCtx<'_> {
    type S = Poly;
    fn constant(&mut self, x: Q) -> Poly {
        self.k(x)
    }
    fn add(&mut self, a: &Poly, b: &Poly) -> Poly {
        a.add(b)
    }
    fn sub(&mut self, a: &Poly, b: &Poly) -> Poly {
        a.sub(b)
    }
    fn mul(&mut self, a: &Poly, b: &Poly) -> Poly {
        a.mul(b)
    }
    fn neg(&mut self, a: &Poly) -> Poly {
        a.neg()
    }
    fn div(&mut self, a: &Poly, b: &Poly, span: Span) -> syn::Result<Poly> {
        if b.is_zero() {
            return Err(Error::new(span, "division by zero"));
        }
        a.div(b).ok_or_else(|| {
            Error::new(span, "this division does not give a polynomial in the moments: the equilibrium must be a polynomial in u and T (divide only by constants or by factors that cancel)")
        })
    }
    fn ident(&mut self, name: &str, span: Span) -> syn::Result<Value<Poly>> {
        let l = self.lattice;
        match name {
            "c" => {
                let i = self.population(name, span)?;
                Ok(Value::Vector((0..l.dim).map(|a| self.velocity(i, a)).collect()))
            }
            "cx" | "cy" | "cz" => {
                let i = self.population(name, span)?;
                let axis = ["cx", "cy", "cz"].iter().position(|a| *a == name).unwrap_or(0);
                if axis >= l.dim {
                    return Err(Error::new(span, format!("`{name}` is the z component of the velocity, but dim = {}: use cx and cy", l.dim)));
                }
                Ok(Value::Scalar(self.velocity(i, axis)))
            }
            "w" => {
                let i = self.population(name, span)?;
                Ok(Value::Scalar(self.k(l.w[i].clone())))
            }
            "cs2" => Ok(Value::Scalar(self.k(l.cs2.clone()))),
            "dim" | "D" => Ok(Value::Scalar(self.k(q(l.dim as i64)))),
            "f" if self.pop.is_some() && self.sum_f.is_some() => Ok(Value::Scalar(self.sum_f.unwrap()[self.pop.unwrap()].clone())),
            "f" => Err(Error::new(span, "`f` (the populations) may only appear inside sum(…) in a moment definition")),
            _ => self.names.get(name).cloned().ok_or_else(|| Error::new(span, format!("`{name}` is not defined: declare it in `params {{ … }}` or `moments {{ … }}`, or use a built-in (c, w, cs2, dim)"))),
        }
    }
    fn call(&mut self, name: &Ident, args: &[Arg], span: Span) -> syn::Result<Value<Poly>> {
        match name.to_string().as_str() {
            "sum" => {
                let (Some(sum_f), None, [arg]) = (self.sum_f, self.pop, args) else {
                    return Err(Error::new(name.span(), "`sum(…)` takes one argument and may only be used in a moment definition"));
                };
                let mut total: Option<Value<Poly>> = None;
                for i in 0..self.lattice.c.len() {
                    let mut inner = PolyCtx { lattice: self.lattice, nvars: self.nvars, names: self.names.clone(), pop: Some(i), sum_f: Some(sum_f), roles: self.roles, shift: self.shift };
                    let v = eval(&mut inner, &arg.value)?;
                    total = Some(match (total, v) {
                        (None, v) => v,
                        (Some(Value::Scalar(a)), Value::Scalar(b)) => Value::Scalar(a.add(&b)),
                        (Some(Value::Vector(a)), Value::Vector(b)) => Value::Vector(a.iter().zip(&b).map(|(x, y)| x.add(y)).collect()),
                        _ => return Err(Error::new(span, "inconsistent summand")),
                    });
                }
                Ok(total.expect("a lattice has velocities"))
            }
            "hermite" => {
                let i = self.population("hermite", span)?;
                let order = hermite_order(name, args)?;
                Ok(Value::Scalar(self.hermite(i, order, span)?))
            }
            other => Err(Error::new(name.span(), format!("unknown function `{other}`: formulas may use dot(a, b), norm2(a), sum(…) in moments, and hermite(order = N) as the equilibrium"))),
        }
    }
}

fn hermite_order(name: &Ident, args: &[Arg]) -> syn::Result<u32> {
    let [Arg {
        name: Some(key),
        value,
    }] = args
    else {
        return Err(Error::new(
            name.span(),
            "`hermite` takes one argument: hermite(order = N) with N from 1 to 4",
        ));
    };
    if key != "order" {
        return Err(Error::new(
            key.span(),
            "`hermite` takes one argument: hermite(order = N) with N from 1 to 4",
        ));
    }
    let n = eval_const(value)?;
    (1..=4u32)
        .find(|k| n == q((*k).into()))
        .ok_or_else(|| value.error("the Hermite order must be 1, 2, 3 or 4"))
}

impl PolyCtx<'_> {
    fn var(&self, name: &Option<String>) -> Option<Value<Poly>> {
        name.as_ref().and_then(|n| self.names.get(n).cloned())
    }

    /// The Hermite equilibrium of order `n` (Shan, Yuan & Chen 2006; for D2Q37, Philippi et al.
    /// 2006 and Shan 2010) in scaled units ξ = c/cs, v = u/cs, θ = T − 1 (θ = 0 for isothermal
    /// models):
    /// `f_eq = w ρ [1 + ξ·v + ½((ξ·v)² − v² + θ(ξ² − D)) + (ξ·v)/6((ξ·v)² − 3v² + 3θ(ξ² − D − 2))
    ///  + 1/24((ξ·v)⁴ − 6(ξ·v)²v² + 3v⁴ + 6θ((ξ·v)²(ξ² − D − 4) + v²(D + 2 − ξ²))
    ///  + 3θ²(ξ⁴ − 2(D + 2)ξ² + D(D + 2)))]`.
    fn hermite(&self, i: usize, n: u32, span: Span) -> syn::Result<Poly> {
        let l = self.lattice;
        let k = |x: Q| self.k(x);
        let (Some(Value::Scalar(rho)), Some(Value::Vector(u))) = (
            self.var(&self.roles.density),
            self.var(&self.roles.velocity),
        ) else {
            return Err(Error::new(span, "hermite(…) is the equilibrium of a density and a velocity: declare `rho = sum(f);` and `u = sum(f * c) / rho;` (or write the equilibrium as a formula of your moments)"));
        };
        let theta = match self.var(&self.roles.temperature) {
            Some(Value::Scalar(t)) => t.sub(&k(q(1))),
            _ => k(q(0)),
        };
        let inv_cs2 = q(1) / l.cs2.clone();
        let c = &l.c[i][..l.dim];
        let xv = c
            .iter()
            .zip(&u)
            .fold(k(q(0)), |acc, (ca, ua)| {
                acc.add(&ua.scale(&q((*ca).into())))
            })
            .scale(&inv_cs2);
        let v2 = u
            .iter()
            .fold(k(q(0)), |acc, ua| acc.add(&ua.mul(ua)))
            .scale(&inv_cs2);
        let x2 = q(c.iter().map(|ca| ca * ca).sum::<i32>().into()) * inv_cs2;
        let d = q(l.dim as i64);
        let mut s = k(q(1));
        if n >= 1 {
            s = s.add(&xv);
        }
        if n >= 2 {
            let t = xv
                .pow(2)
                .sub(&v2)
                .add(&theta.scale(&(x2.clone() - d.clone())));
            s = s.add(&t.scale(&qf(1, 2)));
        }
        if n >= 3 {
            let t = xv
                .pow(2)
                .sub(&v2.scale(&q(3)))
                .add(&theta.scale(&(q(3) * (x2.clone() - d.clone() - q(2)))));
            s = s.add(&xv.mul(&t).scale(&qf(1, 6)));
        }
        if n >= 4 {
            let a = xv
                .pow(4)
                .sub(&xv.pow(2).mul(&v2).scale(&q(6)))
                .add(&v2.pow(2).scale(&q(3)));
            let b = xv
                .pow(2)
                .scale(&(x2.clone() - d.clone() - q(4)))
                .add(&v2.scale(&(d.clone() + q(2) - x2.clone())));
            let cterm = x2.clone() * x2.clone() - q(2) * (d.clone() + q(2)) * x2.clone()
                + d.clone() * (d.clone() + q(2));
            let t = a
                .add(&theta.mul(&b).scale(&q(6)))
                .add(&theta.pow(2).scale(&(q(3) * cterm)));
            s = s.add(&t.scale(&qf(1, 24)));
        }
        Ok(s.mul(&rho).scale(&l.w[i]))
    }
}

/// Analyses a declaration whose lattice has been checked.
pub fn analyse(decl: &ModelDecl, lattice: Lattice) -> syn::Result<Analysis> {
    let (mut moments, mut var_names) = declare_moments(decl, lattice.dim)?;
    declare_conserved(decl, &mut moments)?;
    let mut params = Vec::new();
    for p in &decl.params {
        let name = p.name.to_string();
        check_name(&p.name, &params, "parameter")?;
        if moments.iter().any(|m| m.name == name) {
            return Err(Error::new(
                p.name.span(),
                format!(
                    "parameter `{name}` has the name of the moment `{name}`: rename one of them"
                ),
            ));
        }
        if let Some(v) = var_names.iter().position(|n| *n == name) {
            let m = moments
                .iter()
                .find(|m| m.vars.contains(&v))
                .expect("a moment's component");
            return Err(Error::new(
                p.name.span(),
                format!("parameter `{name}` has the name of a component of the moment `{}` ({}): rename the parameter, so that formulas and messages can tell them apart", m.name, component_names(m, &var_names)),
            ));
        }
        params.push(name.clone());
        var_names.push(name);
    }
    var_names.push("f".into());
    let nvars = var_names.len();
    let roles = Roles::of(&moments);
    let names = names_of(&moments, &var_names, &params);
    let eq_expr = decl.equilibrium.as_ref().ok_or_else(|| Error::new(decl.name.span(), format!("model `{}` does not declare `equilibrium`: add `equilibrium = hermite(order = 2);` or a formula", decl.name)))?;
    let mut feq = Vec::with_capacity(lattice.c.len());
    for i in 0..lattice.c.len() {
        let mut ctx = PolyCtx {
            lattice: &lattice,
            nvars,
            names: names.clone(),
            pop: Some(i),
            sum_f: None,
            roles: &roles,
            shift: None,
        };
        feq.push(eval(&mut ctx, eq_expr)?.scalar(eq_expr.span, "the equilibrium")?);
    }
    let mut eq_order = equilibrium_order(&feq, &moments);
    if lattice.isotropy < 2 * eq_order && tensor_product_equilibrium(&lattice, &feq, &moments) {
        eq_order = lattice.isotropy / 2;
    }
    check_isotropy(&lattice, eq_order, eq_expr)?;
    let collision = collision(decl, &lattice, nvars, &moments, &names, &roles)?;
    let force = force(decl, lattice.dim, &moments)?;
    let an = Analysis {
        lattice,
        var_names,
        params,
        fields: decl.params.iter().map(|p| p.field).collect(),
        moments,
        roles,
        feq,
        eq_order,
        collision,
        force,
    };
    check_conservation(&an, &names, eq_expr)?;
    Ok(an)
}

/// The value of every name a formula may use: each moment (a vector moment also by its
/// components `ux`, `uy`, …) and each parameter, as polynomials in the variables `var_names`
/// (the moments' components, the parameters, then `f`).
pub fn names_of(
    moments: &[Moment],
    var_names: &[String],
    params: &[String],
) -> HashMap<String, Value<Poly>> {
    let nvars = var_names.len();
    let mut names = HashMap::new();
    for m in moments {
        let v: Vec<Poly> = m.vars.iter().map(|&k| Poly::var(nvars, k)).collect();
        if m.role.is_vector() {
            for (&k, p) in m.vars.iter().zip(&v) {
                names.insert(var_names[k].clone(), Value::Scalar(p.clone()));
            }
            names.insert(m.name.clone(), Value::Vector(v));
        } else {
            names.insert(m.name.clone(), Value::Scalar(v[0].clone()));
        }
    }
    let first = moments.iter().map(|m| m.vars.len()).sum::<usize>();
    for (k, p) in params.iter().enumerate() {
        names.insert(p.clone(), Value::Scalar(Poly::var(nvars, first + k)));
    }
    names
}

/// `ux, uy` for a velocity `u`: the names of a moment's variables.
fn component_names(m: &Moment, var_names: &[String]) -> String {
    m.vars
        .iter()
        .map(|&v| var_names[v].as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn check_name(id: &Ident, taken: &[String], what: &str) -> syn::Result<()> {
    let name = id.to_string();
    if BUILTINS.contains(&name.as_str()) {
        return Err(Error::new(
            id.span(),
            format!("{what} `{name}` shadows the built-in `{name}`: choose another name"),
        ));
    }
    if taken.contains(&name) {
        return Err(Error::new(
            id.span(),
            format!("{what} `{name}` is declared twice"),
        ));
    }
    Ok(())
}

/// The moments in declaration order, with their roles, and the names of their variables (a
/// vector `u` has `ux`, `uy`(, `uz`)).
fn declare_moments(decl: &ModelDecl, dim: usize) -> syn::Result<(Vec<Moment>, Vec<String>)> {
    let (span, defs) = decl.moments.as_ref().ok_or_else(|| Error::new(decl.name.span(), format!("model `{}` does not declare `moments`: add `moments {{ rho = sum(f); u = sum(f * c) / rho; }}`", decl.name)))?;
    if defs.is_empty() {
        return Err(Error::new(
            *span,
            "declare at least one moment, e.g. `rho = sum(f);` or `phi: scalar = sum(f);`",
        ));
    }
    let mut moments: Vec<Moment> = Vec::new();
    let mut names = Vec::new();
    let mut taken = Vec::new();
    for d in defs {
        check_name(&d.name, &taken, "moment")?;
        let name = d.name.to_string();
        let role = match &d.role {
            Some(r) => Role::parse(r, &name)?,
            None => Role::by_name(&name).ok_or_else(|| Error::new(d.name.span(), format!("moment `{name}` has no role: write `{name}: scalar = …` (or density, velocity, temperature, vector); only rho, u and T have one by default")))?,
        };
        if !matches!(role, Role::Scalar | Role::Vector) {
            if let Some(other) = moments.iter().find(|m| m.role == role) {
                return Err(Error::new(d.name.span(), format!("`{name}` is a second {role:?} after `{}`: a model has one density, one velocity and one temperature (make the other a `scalar` or `vector`)", other.name).to_lowercase()));
            }
        }
        let start = names.len();
        if role.is_vector() {
            names.extend(["x", "y", "z"][..dim].iter().map(|a| format!("{name}{a}")));
        } else {
            names.push(name.clone());
        }
        moments.push(Moment {
            name: name.clone(),
            role,
            vars: (start..names.len()).collect(),
            def: d.value.clone(),
            conserved: true,
        });
        taken.push(name);
    }
    for (k, n) in names.iter().enumerate() {
        if let Some(m) = moments
            .iter()
            .find(|m| m.name == *n && !m.vars.contains(&k))
        {
            return Err(m.def.error(format!(
                "moment `{n}` has the name of a component of another vector moment: rename it"
            )));
        }
    }
    Ok((moments, names))
}

/// Marks the moments of `conserved = [...]` (every moment when the item is absent).
fn declare_conserved(decl: &ModelDecl, moments: &mut [Moment]) -> syn::Result<()> {
    let Some(list) = &decl.conserved else {
        return Ok(());
    };
    let ExprKind::List(items) = &list.kind else {
        return Err(list.error("`conserved` lists moments: `conserved = [rho, u];`"));
    };
    for m in moments.iter_mut() {
        m.conserved = false;
    }
    for item in items {
        let ExprKind::Ident(name) = &item.kind else {
            return Err(item.error("`conserved` lists moments by name: `conserved = [rho, u];`"));
        };
        let what = if decl.params.iter().any(|p| p.name == name) {
            format!("`{name}` is a parameter")
        } else {
            format!("`{name}` is not a moment")
        };
        let m = moments
            .iter_mut()
            .find(|m| m.name == *name)
            .ok_or_else(|| {
                item.error(format!(
                    "{what}: `conserved` lists moments declared in `moments {{ … }}`"
                ))
            })?;
        if m.conserved {
            return Err(item.error(format!("`{name}` is listed twice in `conserved`")));
        }
        m.conserved = true;
    }
    Ok(())
}

/// The Hermite order of the equilibrium: the largest `deg_u + 2·deg_T` of its terms. In a model
/// without a velocity moment (a scalar carried by a flow), the parameters in the equilibrium
/// are what carries it, and count as velocities.
fn equilibrium_order(feq: &[Poly], moments: &[Moment]) -> u32 {
    let advected = !moments.iter().any(|m| m.role == Role::Velocity);
    let nmoment: usize = moments.iter().map(|m| m.vars.len()).sum();
    let weight = |v: usize| -> u32 {
        match moments.iter().find(|m| m.vars.contains(&v)).map(|m| m.role) {
            Some(Role::Velocity | Role::Vector) => 1,
            Some(Role::Temperature) => 2,
            Some(_) => 0,
            None => u32::from(advected && v >= nmoment),
        }
    };
    feq.iter()
        .flat_map(|p| p.terms.keys())
        .map(|m| {
            // The parameters follow the moments; `f`, last, is absent from the equilibrium.
            m.iter().enumerate().map(|(v, e)| e * weight(v)).sum()
        })
        .max()
        .unwrap_or(0)
}

/// Whether `feq` is a product-form equilibrium on a tensor-product lattice: the velocity set
/// `{−1, 0, 1}^D` with the product weights `Π_α w(c_α)`, `w(0) = 2/3`, `w(±1) = 1/6`
/// (D2Q9, D3Q27), no temperature, and every velocity component of degree at most 2 in every
/// term. Such an equilibrium lies in the span of the lattice's own Hermite polynomials
/// `H_a(c_x) H_b(c_y) (H_c(c_z))`, `a, b, c ≤ 2`, which the product quadrature integrates
/// exactly: its terms beyond the second order (like `ρ u_x² u_y`) are the Maxwellian's moments
/// that the lattice carries, not aliases (Geier et al. 2015, "The cumulant lattice Boltzmann
/// equation in three dimensions", Comput. Math. Appl. 70, 507). Its isotropic order is the
/// lattice's.
fn tensor_product_equilibrium(lattice: &Lattice, feq: &[Poly], moments: &[Moment]) -> bool {
    let velocity: Vec<usize> = moments
        .iter()
        .filter(|m| m.role == Role::Velocity)
        .flat_map(|m| m.vars.iter().copied())
        .collect();
    tensor_product(lattice)
        && !moments.iter().any(|m| m.role == Role::Temperature)
        && feq
            .iter()
            .flat_map(|p| p.terms.keys())
            .all(|m| velocity.iter().all(|&v| m[v] <= 2))
}

/// Whether the lattice is `{−1, 0, 1}^D` with the product weights of D1Q3 (D2Q9, D3Q27).
fn tensor_product(lattice: &Lattice) -> bool {
    let d = lattice.dim;
    let one_d = |c: i32| if c == 0 { qf(2, 3) } else { qf(1, 6) };
    lattice.c.len() == 3usize.pow(d as u32)
        && lattice.cs2 == qf(1, 3)
        && lattice.c.iter().zip(&lattice.w).all(|(c, w)| {
            c[..d].iter().all(|x| x.abs() <= 1)
                && *w == c[..d].iter().fold(q(1), |acc, &x| acc * one_d(x))
        })
}

/// An equilibrium of Hermite order N needs a quadrature exact through degree 2N: the lattice's
/// tensor moments must be isotropic through order 2N (Shan, Yuan & Chen 2006).
fn check_isotropy(lattice: &Lattice, order: u32, eq: &Expr) -> syn::Result<()> {
    if lattice.isotropy < 2 * order {
        return Err(eq.error(
            format!(
                "this equilibrium is of order {order}, which needs a lattice isotropic through order {}, but this lattice is isotropic only through order {}: lower the equilibrium's order or use a larger velocity set{}",
                2 * order,
                lattice.isotropy,
                if tensor_product(lattice) {
                    " (on this tensor-product lattice, terms of degree at most 2 in each velocity component, like u_x² u_y, are also accepted: the product form w ρ Π_α (1 + c_α u_α/cs² + (c_α²/cs² − 1) u_α²/(2cs²)) has them all)"
                } else {
                    ""
                }
            ),
        ));
    }
    Ok(())
}

/// Every conserved moment's definition, applied to `f_eq`, must give the moment itself, as an
/// identity in the moments and the parameters; every moment's definition must have its shape.
fn check_conservation(
    an: &Analysis,
    names: &HashMap<String, Value<Poly>>,
    eq: &Expr,
) -> syn::Result<()> {
    let nvars = an.nvars();
    for m in &an.moments {
        let mut ctx = PolyCtx {
            lattice: &an.lattice,
            nvars,
            names: names.clone(),
            pop: None,
            sum_f: Some(&an.feq),
            roles: &an.roles,
            shift: None,
        };
        let got = match eval(&mut ctx, &m.def)? {
            Value::Scalar(p) => vec![p],
            Value::Vector(v) => v,
        };
        if got.len() != m.vars.len() {
            let shape = if m.role.is_vector() {
                format!("a vector (its role is {:?})", m.role).to_lowercase()
            } else {
                format!("a scalar (its role is {:?})", m.role).to_lowercase()
            };
            return Err(m.def.error(format!("moment `{}` must be {shape}", m.name)));
        }
        if !m.conserved {
            continue;
        }
        for (p, &v) in got.iter().zip(&m.vars) {
            let want = Poly::var(nvars, v);
            if !p.close_to(&want, CONSERVATION_TOL) {
                let component = if m.vars.len() > 1 {
                    format!("component `{}` of the moment `{}`", an.var_names[v], m.name)
                } else {
                    format!("moment `{}`", m.name)
                };
                let mut e = eq.error(format!(
                    "the equilibrium does not conserve {} on this lattice: the definition of the {component}, applied to f_eq, gives {} instead of `{}` ({})",
                    m.role.quantity(&m.name),
                    p.display(&an.var_names),
                    an.var_names[v],
                    legend(an)
                ));
                e.combine(m.def.error(format!(
                    "`{}` is defined here: f_eq must reproduce it (check the definition and the equilibrium together, or leave `{}` out of `conserved`)",
                    m.name, m.name
                )));
                return Err(e);
            }
        }
    }
    Ok(())
}

/// "moments: rho, ux, uy; parameters: tau" — what each name in a message is.
fn legend(an: &Analysis) -> String {
    let moments = an
        .moments
        .iter()
        .map(|m| component_names(m, &an.var_names))
        .collect::<Vec<_>>()
        .join(", ");
    if an.params.is_empty() {
        format!("moments: {moments}")
    } else {
        format!("moments: {moments}; parameters: {}", an.params.join(", "))
    }
}

fn rate(arg: &Arg) -> Rate {
    let is_time = arg.name.as_ref().is_some_and(|n| n == "tau");
    Rate {
        expr: arg.value.clone(),
        is_time,
        label: arg.name.as_ref().map_or("omega".into(), |n| n.to_string()),
    }
}

fn named<'a>(args: &'a [Arg], keys: &[&str]) -> Option<&'a Arg> {
    args.iter()
        .find(|a| a.name.as_ref().is_some_and(|n| keys.iter().any(|k| n == k)))
}

fn collision(
    decl: &ModelDecl,
    lattice: &Lattice,
    nvars: usize,
    moments: &[Moment],
    names: &HashMap<String, Value<Poly>>,
    roles: &Roles,
) -> syn::Result<Collision> {
    let e = decl.collision.as_ref().ok_or_else(|| {
        Error::new(
            decl.name.span(),
            format!(
                "model `{}` does not declare `collision`: add `collision = bgk(tau = tau);`",
                decl.name
            ),
        )
    })?;
    let ExprKind::Call(op, args) = &e.kind else {
        return Err(e.error(format!("expected a collision operator: {OPERATORS}")));
    };
    let arity = |want: &str| {
        Error::new(
            op.span(),
            format!("wrong arguments for `{op}`: expected {want}"),
        )
    };
    for a in args {
        if let Some(n) = &a.name {
            let allowed: &[&str] = match op.to_string().as_str() {
                "bgk" => &["tau", "omega"],
                "trt" => &["tau", "omega", "omega_plus", "omega_minus", "magic"],
                "mrt" | "central_mrt" => &["basis", "rates"],
                "regularized" => &["tau", "omega"],
                other => {
                    return Err(Error::new(
                        op.span(),
                        format!("unknown collision operator `{other}`: use {OPERATORS}"),
                    ))
                }
            };
            if !allowed.iter().any(|k| n == k) {
                return Err(Error::new(
                    n.span(),
                    format!(
                        "`{op}` has no argument `{n}` (it takes {})",
                        allowed.join(", ")
                    ),
                ));
            }
        }
    }
    match op.to_string().as_str() {
        "bgk" => match args.as_slice() {
            [a] if a.name.is_some() => Ok(Collision::Bgk { omega: rate(a) }),
            _ => Err(arity(
                "one rate: bgk(tau = <relaxation time>) or bgk(omega = <rate>)",
            )),
        },
        "trt" => {
            let plus = named(args, &["tau", "omega", "omega_plus"]);
            let minus = named(args, &["omega_minus", "magic"]);
            match (args.len(), plus, minus) {
                (2, Some(p), Some(m)) => {
                    let minus = if m.name.as_ref().is_some_and(|n| n == "magic") { TrtMinus::Magic(m.value.clone()) } else { TrtMinus::Rate(rate(m)) };
                    Ok(Collision::Trt { plus: rate(p), minus })
                }
                _ => Err(arity("trt(tau = <time>, magic = <Λ>) or trt(omega_plus = <rate>, omega_minus = <rate>)")),
            }
        }
        "mrt" | "central_mrt" => {
            match (args.len(), named(args, &["basis"]), named(args, &["rates"])) {
                (2, Some(b), Some(r)) => {
                    let invariants = conserved_rows(lattice, nvars, moments, names, roles)?;
                    let central = if op == "central_mrt" {
                        Some(velocity_vars(moments).ok_or_else(|| Error::new(op.span(), "central moments are taken about the velocity: declare a velocity moment (`u = sum(f * c) / rho;`), or use mrt(…)"))?)
                    } else {
                        None
                    };
                    mrt(
                        lattice, nvars, roles, invariants, &b.value, &r.value, central,
                    )
                }
                _ => Err(arity(&format!(
                    "{op}(basis = [<Q polynomials in c>], rates = [<Q rates>])"
                ))),
            }
        }
        "regularized" => match args.as_slice() {
            [a] if a.name.is_some() => {
                if roles.temperature.is_some() {
                    return Err(Error::new(op.span(), "the regularized collision keeps only the second-order (stress) part of f − f_eq, which is the whole non-equilibrium of an isothermal flow but not of a thermal one (its heat flux is third order): use bgk(…) or mrt(…) for a model with a temperature"));
                }
                if velocity_vars(moments).is_none() {
                    return Err(Error::new(op.span(), "the regularized collision keeps only the second-order (stress) part of f − f_eq, so it is for flows with a velocity moment (`u = sum(f * c) / rho;`): a transport model's flux lives in the first-order part it would discard; use bgk(…)"));
                }
                Ok(Collision::Regularized { omega: rate(a) })
            }
            _ => Err(arity(
                "one rate: regularized(tau = <relaxation time>) or regularized(omega = <rate>)",
            )),
        },
        other => Err(Error::new(
            op.span(),
            format!("unknown collision operator `{other}`: use {OPERATORS}"),
        )),
    }
}

/// The collision operators a declaration may use.
const OPERATORS: &str = "bgk(…), trt(…), mrt(…), central_mrt(…) or regularized(…)";

/// The variables of the velocity moment's components, if the model declares one.
fn velocity_vars(moments: &[Moment]) -> Option<&[usize]> {
    moments
        .iter()
        .find(|m| m.role == Role::Velocity)
        .map(|m| m.vars.as_slice())
}

fn mrt(
    lattice: &Lattice,
    nvars: usize,
    roles: &Roles,
    invariants: Vec<Vec<Q>>,
    basis: &Expr,
    rates: &Expr,
    // `Some(vars)`: central moments about the velocity whose components are the variables `vars`.
    central: Option<&[usize]>,
) -> syn::Result<Collision> {
    let nq = lattice.c.len();
    let (ExprKind::List(rows), ExprKind::List(rate_exprs)) = (&basis.kind, &rates.kind) else {
        return Err(basis.error("the MRT basis and rates are lists `[…]`"));
    };
    if rows.len() != nq {
        return Err(basis.error(format!("the MRT basis has {} rows but the lattice has Q = {nq} velocities: give one polynomial in c per velocity", rows.len())));
    }
    if rate_exprs.len() != nq {
        return Err(rates.error(format!(
            "{} MRT rates for {nq} moments: give one relaxation rate per moment",
            rate_exprs.len()
        )));
    }
    // Row k evaluated at every velocity, shifted by `shift`: `P_k(c_i − shift)`.
    let evaluate = |shift: Option<&[Poly]>| -> syn::Result<Vec<Vec<Poly>>> {
        let mut m = Vec::with_capacity(nq);
        for row in rows {
            let mut r = Vec::with_capacity(nq);
            for i in 0..nq {
                let mut ctx = PolyCtx {
                    lattice,
                    nvars,
                    names: HashMap::new(),
                    pop: Some(i),
                    sum_f: None,
                    roles,
                    shift,
                };
                r.push(eval(&mut ctx, row)?.scalar(row.span, "an MRT basis row")?);
            }
            m.push(r);
        }
        Ok(m)
    };
    let mut m = Vec::with_capacity(nq);
    for (row, values) in rows.iter().zip(evaluate(None)?) {
        let constants: Option<Vec<Q>> = values.iter().map(Poly::as_constant).collect();
        m.push(constants.ok_or_else(|| {
            row.error("an MRT basis row is a polynomial in the velocity c (cx, cy, cz) only")
        })?);
    }
    let minv = invert(&m).map_err(|k| {
        rows[k].error(format!(
            "the MRT basis is not invertible: row {} is a linear combination of the rows before it",
            k + 1
        ))
    })?;
    let shift = match central {
        Some(vars) => {
            let u: Vec<Poly> = vars.iter().map(|&v| Poly::var(nvars, v)).collect();
            Some(shift_matrix(&evaluate(Some(&u))?, &minv, vars, rows)?)
        }
        None => None,
    };
    let rates = m
        .iter()
        .zip(rate_exprs)
        .map(|(row, e)| {
            (!in_span(&invariants, row)).then(|| Rate {
                expr: e.clone(),
                is_time: false,
                label: "MRT rate".into(),
            })
        })
        .collect();
    Ok(Collision::Mrt {
        m,
        minv,
        rates,
        shift,
    })
}

/// The shift matrix `N(u) = T(u) M⁻¹` of a central-moment basis from `T(u)_ki = P_k(c_i − u)`,
/// and its inverse `N(−u)`. That `N(−u)` is the inverse holds when the basis spans a space of
/// polynomials closed under shifts (a monomial set that holds every divisor of its members,
/// like 1, cx, cy, cx², cy², cx cy, cx² cy, cx cy², cx² cy² on D2Q9); it is checked exactly.
/// `vars` are the velocity's variables, `u_α`.
fn shift_matrix(
    t: &[Vec<Poly>],
    minv: &[Vec<Q>],
    vars: &[usize],
    rows: &[Expr],
) -> syn::Result<Shift> {
    let nvars = t[0][0].nvars;
    let to: Vec<Vec<Poly>> = t
        .iter()
        .map(|tk| {
            (0..minv.len())
                .map(|j| {
                    tk.iter()
                        .zip(minv)
                        .fold(Poly::zero(nvars), |acc, (p, mi)| acc.add(&p.scale(&mi[j])))
                })
                .collect()
        })
        .collect();
    let back: Vec<Vec<Poly>> = to
        .iter()
        .map(|r| r.iter().map(|p| p.reflect(vars)).collect())
        .collect();
    for (k, row) in to.iter().enumerate() {
        for j in 0..to.len() {
            let entry = row
                .iter()
                .zip(&back)
                .fold(Poly::zero(nvars), |acc, (a, b)| acc.add(&a.mul(&b[j])));
            if entry != Poly::constant(nvars, q(i64::from(k == j))) {
                return Err(rows[k].error(format!("row {} of the central-moment basis leaves the basis's span when c is shifted to c − u (a shift of a polynomial must stay a combination of the rows): use a basis closed under shifts, such as the monomials cx^a cy^b (cz^c) whose every divisor is also a row", k + 1)));
            }
        }
    }
    Ok(Shift { to, back })
}

/// The rows `φ_i` of the collision invariants: every `sum(φ f)` in the definition of a
/// conserved moment (1 for `rho = sum(f)`, c_x, c_y for `u = sum(f * c) / rho`). An MRT
/// collision leaves the moments in their span unrelaxed.
fn conserved_rows(
    lattice: &Lattice,
    nvars: usize,
    moments: &[Moment],
    names: &HashMap<String, Value<Poly>>,
    roles: &Roles,
) -> syn::Result<Vec<Vec<Q>>> {
    let f = nvars - 1;
    let fpolys = vec![Poly::var(nvars, f); lattice.c.len()];
    let mut rows = Vec::new();
    for m in moments.iter().filter(|m| m.conserved) {
        for summand in sums(&m.def) {
            let mut comps: Vec<Vec<Q>> = Vec::new();
            for i in 0..lattice.c.len() {
                let mut ctx = PolyCtx {
                    lattice,
                    nvars,
                    names: names.clone(),
                    pop: Some(i),
                    sum_f: Some(&fpolys),
                    roles,
                    shift: None,
                };
                let v = match eval(&mut ctx, summand)? {
                    Value::Scalar(p) => vec![p],
                    Value::Vector(v) => v,
                };
                comps.resize(v.len(), Vec::new());
                for (row, p) in comps.iter_mut().zip(v) {
                    let weight = p.div(&Poly::var(nvars, f)).and_then(|w| w.as_constant());
                    row.push(weight.ok_or_else(|| summand.error(format!("the MRT collision keeps the conserved moment `{}` unrelaxed through its sum(…), whose weights must be constants per velocity (like sum(f * c)); these depend on the moments: leave `{}` out of `conserved` or define it with constant weights", m.name, m.name)))?);
                }
            }
            rows.extend(comps);
        }
    }
    Ok(rows)
}

/// The summands of the `sum(…)` calls in `e`.
fn sums(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Call(name, args) if name == "sum" => args.iter().map(|a| &a.value).collect(),
        ExprKind::Num(_) | ExprKind::Ident(_) => Vec::new(),
        ExprKind::Unary(a) => sums(a),
        ExprKind::Binary(_, a, b) => sums(a).into_iter().chain(sums(b)).collect(),
        ExprKind::Call(_, args) => args.iter().flat_map(|a| sums(&a.value)).collect(),
        ExprKind::Tuple(v) | ExprKind::List(v) => v.iter().flat_map(sums).collect(),
    }
}

/// Rank of a set of rows, by exact Gaussian elimination.
fn rank(rows: &[Vec<Q>]) -> usize {
    let mut a = rows.to_vec();
    let mut r = 0;
    let ncol = a.first().map_or(0, Vec::len);
    for col in 0..ncol {
        let Some(p) = (r..a.len()).find(|&k| !a[k][col].is_zero()) else {
            continue;
        };
        a.swap(r, p);
        for k in 0..a.len() {
            if k != r && !a[k][col].is_zero() {
                let factor = a[k][col].clone() / a[r][col].clone();
                let pivot_row = a[r].clone();
                for (x, p) in a[k].iter_mut().zip(&pivot_row) {
                    *x -= factor.clone() * p;
                }
            }
        }
        r += 1;
    }
    r
}

/// Whether `row` is a linear combination of `rows` (a conserved moment of the MRT basis: its
/// non-equilibrium part vanishes, so its rate does not matter).
fn in_span(rows: &[Vec<Q>], row: &[Q]) -> bool {
    let mut all = rows.to_vec();
    all.push(row.to_vec());
    rank(&all) == rank(rows)
}

/// The exact inverse of a square matrix, or the index of the first dependent row.
fn invert(m: &[Vec<Q>]) -> Result<Vec<Vec<Q>>, usize> {
    for k in 1..=m.len() {
        if rank(&m[..k]) < k {
            return Err(k - 1);
        }
    }
    let n = m.len();
    let mut a: Vec<Vec<Q>> = m
        .iter()
        .enumerate()
        .map(|(i, r)| {
            r.iter()
                .cloned()
                .chain((0..n).map(|j| if i == j { q(1) } else { q(0) }))
                .collect()
        })
        .collect();
    for col in 0..n {
        let p = (col..n).find(|&k| !a[k][col].is_zero()).expect("full rank");
        a.swap(col, p);
        let pivot = a[col][col].clone();
        for x in a[col].iter_mut() {
            *x /= pivot.clone();
        }
        for k in 0..n {
            if k != col && !a[k][col].is_zero() {
                let factor = a[k][col].clone();
                let pivot_row = a[col].clone();
                for (x, p) in a[k].iter_mut().zip(&pivot_row) {
                    *x -= factor.clone() * p;
                }
            }
        }
    }
    Ok(a.into_iter().map(|r| r[n..].to_vec()).collect())
}

fn force(decl: &ModelDecl, dim: usize, moments: &[Moment]) -> syn::Result<Option<Vec<Expr>>> {
    let Some(e) = &decl.force else {
        return Ok(None);
    };
    if !moments.iter().any(|m| m.role == Role::Velocity) {
        return Err(e.error("a body force accelerates the velocity, but this model declares no velocity moment (`u = sum(f * c) / rho;` or `name: velocity = …`)"));
    }
    match &e.kind {
        ExprKind::Tuple(v) if v.len() == dim => Ok(Some(v.clone())),
        _ if dim == 2 => Err(e.error(
            "the force is an acceleration vector of the parameters, e.g. `force = (0, -g);`",
        )),
        _ => Err(e.error(
            "the force is an acceleration vector of the parameters with dim = 3 components, e.g. `force = (0, 0, -g);`",
        )),
    }
}

/// The first name in `e` (depth first) that `pred` accepts.
pub fn find_ident<'e>(e: &'e Expr, pred: &dyn Fn(&str) -> bool) -> Option<&'e Expr> {
    match &e.kind {
        ExprKind::Ident(n) if pred(n) => Some(e),
        ExprKind::Num(_) | ExprKind::Ident(_) => None,
        ExprKind::Unary(a) => find_ident(a, pred),
        ExprKind::Binary(_, a, b) => find_ident(a, pred).or_else(|| find_ident(b, pred)),
        ExprKind::Call(_, args) => args.iter().find_map(|a| find_ident(&a.value, pred)),
        ExprKind::Tuple(v) | ExprKind::List(v) => v.iter().find_map(|x| find_ident(x, pred)),
    }
}
