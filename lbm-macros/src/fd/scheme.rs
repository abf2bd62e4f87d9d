//! The checks of a declaration and its rates as one expression graph.
//!
//! Every name in a formula is a field (read at the node, or at a neighbour inside an
//! operator), a parameter, the grid spacing `h`, or an earlier `let`. An operator applied to an
//! expression evaluates the expression at each of its taps' nodes, so operators compose
//! (`d(d(p, x), y)` is the mixed derivative) and apply to any formula (`d(ux * ux, x)`); each
//! distinct (field, offset) read becomes one input of the graph, and the farthest offset is
//! the halo the scheme needs.

use std::collections::HashMap;

use proc_macro2::Span;
use syn::{Error, Ident};

use super::parse::{Binding, SchemeDecl};
use super::stencil::{operator, Kind, Operator};
use crate::algebra::{eval, Algebra, Value};
use crate::expr::{eval_const, Arg, ExprKind};
use crate::ir::{Id, Ir};
use crate::poly::q;
use crate::program::Program;

/// The time integrator of the rates `∂t φ = R(φ)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Integrator {
    Euler,
    /// Williamson's (1980) low-storage third-order Runge–Kutta scheme.
    Rk3,
}

/// A checked scheme.
pub struct Scheme {
    pub dim: usize,
    /// The scalar unknowns: scalar fields, and the components `ux`, `uy`, … of vector fields.
    pub unknowns: Vec<String>,
    /// Vector fields: name and first component's unknown.
    pub vectors: Vec<(String, usize)>,
    pub params: Vec<String>,
    pub operators: Vec<Operator>,
    /// The graph's inputs: (unknown, offset).
    pub loads: Vec<(usize, [i32; 3])>,
    /// Outputs: the rate of each unknown.
    pub program: Program,
    pub integrator: Integrator,
}

impl Scheme {
    /// The halo: the largest offset of a read along any axis.
    pub fn reach(&self) -> u32 {
        self.loads
            .iter()
            .flat_map(|(_, o)| o.iter().map(|c| c.unsigned_abs()))
            .max()
            .unwrap_or(0)
    }
}

const AXES: [&str; 3] = ["x", "y", "z"];
const FUNCTIONS: [&str; 6] = ["sqrt", "abs", "max", "min", "dot", "norm2"];

#[derive(Clone)]
enum Name {
    Field(Vec<usize>, bool),
    Param(usize),
    Let(usize),
}

struct Ctx<'a> {
    ir: Ir,
    dim: usize,
    shift: [i32; 3],
    names: HashMap<String, Name>,
    lets: &'a [Binding],
    /// Lets `0..visible` may be read.
    visible: usize,
    let_values: HashMap<(usize, [i32; 3]), Value<Id>>,
    operators: HashMap<String, Operator>,
    loads: Vec<(usize, [i32; 3])>,
    load_index: HashMap<(usize, [i32; 3]), usize>,
}

impl Ctx<'_> {
    fn load(&mut self, unknown: usize) -> Id {
        let key = (unknown, self.shift);
        let k = *self.load_index.entry(key).or_insert_with(|| {
            self.loads.push(key);
            self.loads.len() - 1
        });
        self.ir.input(k)
    }

    fn at(&mut self, offset: [i32; 3], e: &crate::expr::Expr) -> syn::Result<Value<Id>> {
        let saved = self.shift;
        for (s, o) in self.shift.iter_mut().zip(offset) {
            *s += o;
        }
        let v = eval(self, e);
        self.shift = saved;
        v
    }

    /// `1 / h^k`.
    fn inverse_spacing(&mut self, k: u32) -> Id {
        let h = self.ir.param(0);
        let mut hk = self.ir.constant(q(1));
        for _ in 0..k {
            hk = self.ir.mul(hk, h);
        }
        let one = self.ir.constant(q(1));
        self.ir.div(one, hk)
    }

    /// `Σ_j c_j v(x + j e_axis)`.
    fn along(
        &mut self,
        op: &Operator,
        axis: usize,
        e: &crate::expr::Expr,
    ) -> syn::Result<Value<Id>> {
        let mut acc: Option<Value<Id>> = None;
        for (j, c) in &op.taps {
            let mut offset = [0; 3];
            offset[axis] = *j;
            let v = self.at(offset, e)?;
            let c = self.ir.constant(c.clone());
            let term = scale(&mut self.ir, &v, c);
            acc = Some(match acc {
                None => term,
                Some(a) => add(&mut self.ir, &a, &term),
            });
        }
        Ok(acc.expect("an operator has a non-zero tap"))
    }

    fn apply(&mut self, op: &Operator, args: &[Arg], span: Span) -> syn::Result<Value<Id>> {
        let name = &op.name;
        if args.is_empty() || args.len() > 2 || args.iter().any(|a| a.name.is_some()) {
            return Err(Error::new(
                span,
                format!("`{name}` takes a formula and, for a derivative, an axis: `{name}(p, x)`"),
            ));
        }
        let e = &args[0].value;
        let inv = self.inverse_spacing(op.derivative);
        let axis = match args.get(1) {
            None => None,
            Some(a) => match &a.value.kind {
                ExprKind::Ident(n) if AXES[..self.dim].contains(&n.as_str()) => {
                    Some(AXES.iter().position(|x| x == n).expect("an axis"))
                }
                _ => {
                    return Err(a.value.error(format!(
                        "the axis is one of {} (dim = {})",
                        AXES[..self.dim].join(", "),
                        self.dim
                    )))
                }
            },
        };
        let sum = match (op.kind, axis) {
            (Kind::Laplacian, Some(_)) => {
                return Err(args[1].value.error(format!(
                    "`{name}` is a Laplacian, the sum over every axis: it takes no axis"
                )))
            }
            (Kind::Laplacian, None) => {
                let mut acc = self.along(op, 0, e)?;
                for a in 1..self.dim {
                    let t = self.along(op, a, e)?;
                    acc = add(&mut self.ir, &acc, &t);
                }
                acc
            }
            (Kind::Derivative(_), Some(a)) => self.along(op, a, e)?,
            (Kind::Derivative(1), None) => {
                let mut comps = Vec::new();
                for a in 0..self.dim {
                    match self.along(op, a, e)? {
                        Value::Scalar(s) => comps.push(s),
                        Value::Vector(_) => return Err(e.error(format!(
                            "`{name}(…)` without an axis is the gradient of a scalar, but this is a vector (its gradient would be a tensor): give the axis, `{name}(…, x)`"
                        ))),
                    }
                }
                Value::Vector(comps)
            }
            (Kind::Derivative(k), None) => {
                return Err(Error::new(
                    span,
                    format!(
                    "`{name}` is a derivative of order {k} along one axis: give it, `{name}(…, x)`"
                ),
                ))
            }
        };
        Ok(scale(&mut self.ir, &sum, inv))
    }
}

fn scale(ir: &mut Ir, v: &Value<Id>, c: Id) -> Value<Id> {
    match v {
        Value::Scalar(s) => Value::Scalar(ir.mul(*s, c)),
        Value::Vector(xs) => Value::Vector(xs.iter().map(|s| ir.mul(*s, c)).collect()),
    }
}

fn add(ir: &mut Ir, a: &Value<Id>, b: &Value<Id>) -> Value<Id> {
    match (a, b) {
        (Value::Scalar(x), Value::Scalar(y)) => Value::Scalar(ir.add(*x, *y)),
        (Value::Vector(x), Value::Vector(y)) => {
            Value::Vector(x.iter().zip(y).map(|(p, q)| ir.add(*p, *q)).collect())
        }
        _ => unreachable!("the taps of one formula have one shape"),
    }
}

impl Algebra for Ctx<'_> {
    crate::algebra::ir_arithmetic!();
    fn div(&mut self, a: &Id, b: &Id, span: Span) -> syn::Result<Id> {
        if matches!(&self.ir.nodes[*b], crate::ir::Node::Const(c) if num_traits::Zero::is_zero(c)) {
            return Err(Error::new(span, "division by zero"));
        }
        Ok(self.ir.div(*a, *b))
    }
    fn ident(&mut self, name: &str, span: Span) -> syn::Result<Value<Id>> {
        if name == "h" {
            return Ok(Value::Scalar(self.ir.param(0)));
        }
        match self.names.get(name).cloned() {
            Some(Name::Field(unknowns, vector)) => {
                let v: Vec<Id> = unknowns.iter().map(|&u| self.load(u)).collect();
                Ok(if vector {
                    Value::Vector(v)
                } else {
                    Value::Scalar(v[0])
                })
            }
            Some(Name::Param(k)) => Ok(Value::Scalar(self.ir.param(k + 1))),
            Some(Name::Let(i)) if i < self.visible => {
                if let Some(v) = self.let_values.get(&(i, self.shift)) {
                    return Ok(v.clone());
                }
                let saved = std::mem::replace(&mut self.visible, i);
                let v = eval(self, &self.lets[i].value);
                self.visible = saved;
                let v = v?;
                self.let_values.insert((i, self.shift), v.clone());
                Ok(v)
            }
            Some(Name::Let(_)) => Err(Error::new(
                span,
                format!("`{name}` is used before its `let`: define it first"),
            )),
            None if AXES.contains(&name) => Err(Error::new(
                span,
                format!("`{name}` names an axis: it is the second argument of a derivative, `d(p, {name})`"),
            )),
            None => Err(Error::new(
                span,
                format!(
                    "unknown name `{name}`: a formula reads the fields, the parameters, `h` (the grid spacing) and earlier `let`s"
                ),
            )),
        }
    }
    fn call(&mut self, name: &Ident, args: &[Arg], span: Span) -> syn::Result<Value<Id>> {
        let n = name.to_string();
        if let Some(op) = self.operators.get(&n).cloned() {
            return self.apply(&op, args, span);
        }
        let arity = match n.as_str() {
            "sqrt" | "abs" => 1,
            "max" | "min" => 2,
            _ => {
                let ops: Vec<&str> = self.operators.keys().map(String::as_str).collect();
                return Err(Error::new(
                    name.span(),
                    format!(
                        "unknown function `{n}`: the functions are sqrt, abs, max, min, dot and norm2, and the operators {}",
                        if ops.is_empty() { "(none declared)".to_string() } else { ops.join(", ") }
                    ),
                ));
            }
        };
        if args.len() != arity || args.iter().any(|a| a.name.is_some()) {
            return Err(Error::new(
                span,
                format!("`{n}` takes {arity} scalar argument(s)"),
            ));
        }
        let mut xs = Vec::new();
        for a in args {
            xs.push(eval(self, &a.value)?.scalar(a.value.span, &format!("an argument of `{n}`"))?);
        }
        Ok(Value::Scalar(match n.as_str() {
            "sqrt" => self.ir.sqrt(xs[0]),
            "abs" => self.ir.abs(xs[0]),
            "max" => self.ir.extremum(true, xs[0], xs[1]),
            _ => self.ir.extremum(false, xs[0], xs[1]),
        }))
    }
}

fn declare(names: &mut HashMap<String, Name>, id: &Ident, n: Name) -> syn::Result<()> {
    let s = id.to_string();
    if s == "h" || AXES.contains(&s.as_str()) || FUNCTIONS.contains(&s.as_str()) {
        return Err(Error::new(
            id.span(),
            format!(
                "`{s}` is a built-in name (h: the grid spacing; x, y, z: the axes; {}): rename it",
                FUNCTIONS.join(", ")
            ),
        ));
    }
    if names.insert(s.clone(), n).is_some() {
        return Err(Error::new(
            id.span(),
            format!("`{s}` is declared twice (fields, their components, parameters, operators and lets share one namespace)"),
        ));
    }
    Ok(())
}

/// Checks the declaration and builds the rates' graph.
pub fn build(decl: &SchemeDecl) -> syn::Result<Scheme> {
    let dim_expr = decl
        .dim
        .as_ref()
        .ok_or_else(|| Error::new(decl.name.span(), "missing `dim = 2;` (or 3)"))?;
    let dim = match eval_const(dim_expr)? {
        d if d == q(2) => 2,
        d if d == q(3) => 3,
        _ => return Err(dim_expr.error("dim is 2 or 3")),
    };
    let (fields_span, fields) = decl.fields.as_ref().ok_or_else(|| {
        Error::new(
            decl.name.span(),
            "missing `fields { … }`: the unknowns, e.g. `fields { p, u: vector }`",
        )
    })?;
    if fields.is_empty() {
        return Err(Error::new(*fields_span, "a scheme has at least one field"));
    }
    let mut names = HashMap::new();
    let mut unknowns = Vec::new();
    let mut vectors = Vec::new();
    for f in fields {
        if f.vector {
            let first = unknowns.len();
            let mut ids = Vec::new();
            for a in &AXES[..dim] {
                let c = Ident::new(&format!("{}{a}", f.name), f.name.span());
                declare(&mut names, &c, Name::Field(vec![unknowns.len()], false))?;
                ids.push(unknowns.len());
                unknowns.push(c.to_string());
            }
            declare(&mut names, &f.name, Name::Field(ids, true))?;
            vectors.push((f.name.to_string(), first));
        } else {
            declare(
                &mut names,
                &f.name,
                Name::Field(vec![unknowns.len()], false),
            )?;
            unknowns.push(f.name.to_string());
        }
    }
    for (k, p) in decl.params.iter().enumerate() {
        declare(&mut names, p, Name::Param(k))?;
    }
    let mut operators = HashMap::new();
    let mut ops = Vec::new();
    for b in &decl.operators {
        if names.contains_key(&b.name.to_string()) || operators.contains_key(&b.name.to_string()) {
            return Err(Error::new(
                b.name.span(),
                format!("`{}` is declared twice", b.name),
            ));
        }
        declare(&mut HashMap::new(), &b.name, Name::Param(0))?;
        let op = operator(&b.name, &b.value)?;
        operators.insert(b.name.to_string(), op.clone());
        ops.push(op);
    }
    for (i, b) in decl.lets.iter().enumerate() {
        if operators.contains_key(&b.name.to_string()) {
            return Err(Error::new(
                b.name.span(),
                format!("`{}` is an operator", b.name),
            ));
        }
        declare(&mut names, &b.name, Name::Let(i))?;
    }
    let integrator = match &decl.integrator {
        None => Integrator::Euler,
        Some(i) if i == "euler" => Integrator::Euler,
        Some(i) if i == "rk3" => Integrator::Rk3,
        Some(i) => {
            return Err(Error::new(
                i.span(),
                "the integrator is `euler` (forward Euler) or `rk3` (Williamson's low-storage third-order Runge–Kutta)",
            ))
        }
    };
    let new_ctx = || Ctx {
        ir: Ir::new(&[]),
        dim,
        shift: [0; 3],
        names: names.clone(),
        lets: &decl.lets,
        visible: 0,
        let_values: HashMap::new(),
        operators: operators.clone(),
        loads: Vec::new(),
        load_index: HashMap::new(),
    };
    // Each `let` is checked where it is written, reading only the lets before it (in a scratch
    // graph: the rates' graph holds only what the rates read).
    let mut scratch = new_ctx();
    for (i, b) in decl.lets.iter().enumerate() {
        scratch.visible = i;
        eval(&mut scratch, &b.value)?;
    }
    let mut ctx = new_ctx();
    ctx.visible = decl.lets.len();
    let (rates_span, rates) = decl.rates.as_ref().ok_or_else(|| {
        Error::new(
            decl.name.span(),
            "missing `rates { … }`: the time derivative of each field, `p = …;`",
        )
    })?;
    let mut outputs: Vec<Option<Id>> = vec![None; unknowns.len()];
    for b in rates {
        let (ids, vector) = match names.get(&b.name.to_string()) {
            Some(Name::Field(ids, vector)) => (ids.clone(), *vector),
            _ => {
                let list: Vec<String> = fields.iter().map(|f| f.name.to_string()).collect();
                return Err(Error::new(
                    b.name.span(),
                    format!(
                        "`{}` is not a field: the rates are those of the fields {}",
                        b.name,
                        list.join(", ")
                    ),
                ));
            }
        };
        if outputs[ids[0]].is_some() {
            return Err(Error::new(
                b.name.span(),
                format!("the rate of `{}` is given twice", b.name),
            ));
        }
        let v = eval(&mut ctx, &b.value)?;
        match (v, vector) {
            (Value::Scalar(s), false) => outputs[ids[0]] = Some(s),
            (Value::Vector(xs), true) if xs.len() == dim => {
                for (o, x) in ids.iter().zip(xs) {
                    outputs[*o] = Some(x);
                }
            }
            (_, vector) => {
                return Err(b.value.error(format!(
                    "`{}` is a {}, but its rate is {}",
                    b.name,
                    if vector {
                        format!("vector of {dim} components")
                    } else {
                        "scalar".into()
                    },
                    if vector {
                        "not a vector of as many components"
                    } else {
                        "a vector"
                    }
                )))
            }
        }
    }
    let missing: Vec<String> = fields
        .iter()
        .filter(|f| match &names[&f.name.to_string()] {
            Name::Field(ids, _) => outputs[ids[0]].is_none(),
            _ => false,
        })
        .map(|f| f.name.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(Error::new(
            *rates_span,
            format!("no rate is given for {}: every field needs one (write `{} = 0;` for a field that does not change)", missing.join(", "), missing[0]),
        ));
    }
    let outputs: Vec<Id> = outputs
        .into_iter()
        .map(|o| o.expect("checked above"))
        .collect();
    Ok(Scheme {
        dim,
        unknowns,
        vectors,
        params: decl.params.iter().map(|p| p.to_string()).collect(),
        operators: ops,
        loads: ctx.loads,
        program: Program {
            ir: ctx.ir,
            outputs,
        },
        integrator,
    })
}
