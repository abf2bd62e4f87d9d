//! The kernel's expression graph: straight-line code in SSA form, built with constant folding
//! and hash-consing (every subexpression exists once), then emitted as Rust or WGSL.
//!
//! Nodes that depend only on parameters and constants are *uniform*: the emitters hoist them out
//! of the per-site code (out of the lane loop of a cluster), and the flop count covers only the
//! per-site nodes that the outputs reach. A `field` parameter (a value that may differ from site
//! to site) is not uniform, nor is anything computed from it.

use std::collections::HashMap;

use num_traits::{One, Signed, Zero};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::poly::{to_f64, Q};

/// Index of a node.
pub type Id = usize;

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Node {
    /// Input `k` of the program (a population, or a moment).
    Input(usize),
    /// Run-time parameter `k`.
    Param(usize),
    Const(Q),
    Add(Id, Id),
    Sub(Id, Id),
    Mul(Id, Id),
    Div(Id, Id),
    Neg(Id),
    Sqrt(Id),
    /// `|a|`.
    Abs(Id),
    /// The larger of two values.
    Max(Id, Id),
    /// The smaller of two values.
    Min(Id, Id),
}

impl Node {
    /// The nodes this one reads, in order (an operand read twice appears twice).
    pub fn operands(&self) -> impl Iterator<Item = Id> {
        let (ids, n) = match *self {
            Node::Add(a, b)
            | Node::Sub(a, b)
            | Node::Mul(a, b)
            | Node::Div(a, b)
            | Node::Max(a, b)
            | Node::Min(a, b) => ([a, b], 2),
            Node::Neg(a) | Node::Sqrt(a) | Node::Abs(a) => ([a, a], 1),
            Node::Input(_) | Node::Param(_) | Node::Const(_) => ([0, 0], 0),
        };
        ids.into_iter().take(n)
    }
}

/// An expression graph under construction.
pub struct Ir {
    pub nodes: Vec<Node>,
    uniform: Vec<bool>,
    index: HashMap<Node, Id>,
    /// `fields[k]`: parameter `k` is a field (per site, not uniform).
    fields: Vec<bool>,
}

impl Ir {
    /// An empty graph over parameters of which those with `fields[k]` vary from site to site.
    pub fn new(fields: &[bool]) -> Self {
        Self {
            nodes: Vec::new(),
            uniform: Vec::new(),
            index: HashMap::new(),
            fields: fields.to_vec(),
        }
    }

    fn intern(&mut self, n: Node) -> Id {
        if let Some(&id) = self.index.get(&n) {
            return id;
        }
        let uniform = match &n {
            Node::Input(_) => false,
            Node::Param(k) => !self.fields.get(*k).copied().unwrap_or(false),
            Node::Const(_) => true,
            arithmetic => arithmetic.operands().all(|o| self.uniform[o]),
        };
        let id = self.nodes.len();
        self.nodes.push(n.clone());
        self.uniform.push(uniform);
        self.index.insert(n, id);
        id
    }

    pub fn input(&mut self, k: usize) -> Id {
        self.intern(Node::Input(k))
    }
    pub fn param(&mut self, k: usize) -> Id {
        self.intern(Node::Param(k))
    }
    pub fn constant(&mut self, c: Q) -> Id {
        self.intern(Node::Const(c))
    }
    fn value(&self, a: Id) -> Option<&Q> {
        match &self.nodes[a] {
            Node::Const(c) => Some(c),
            _ => None,
        }
    }
    fn negated(&self, a: Id) -> Option<Id> {
        match self.nodes[a] {
            Node::Neg(x) => Some(x),
            _ => None,
        }
    }

    pub fn neg(&mut self, a: Id) -> Id {
        if let Some(c) = self.value(a) {
            let c = -c.clone();
            return self.constant(c);
        }
        match self.negated(a) {
            Some(x) => x,
            None => self.intern(Node::Neg(a)),
        }
    }

    pub fn add(&mut self, a: Id, b: Id) -> Id {
        match (self.value(a).cloned(), self.value(b).cloned()) {
            (Some(x), Some(y)) => return self.constant(x + y),
            (Some(x), _) if x.is_zero() => return b,
            (_, Some(y)) if y.is_zero() => return a,
            _ => {}
        }
        if let Some(nb) = self.negated(b) {
            return self.sub(a, nb);
        }
        if let Some(na) = self.negated(a) {
            return self.sub(b, na);
        }
        self.intern(Node::Add(a.min(b), a.max(b)))
    }

    pub fn sub(&mut self, a: Id, b: Id) -> Id {
        if a == b {
            return self.constant(Q::zero());
        }
        match (self.value(a).cloned(), self.value(b).cloned()) {
            (Some(x), Some(y)) => return self.constant(x - y),
            (Some(x), _) if x.is_zero() => return self.neg(b),
            (_, Some(y)) if y.is_zero() => return a,
            _ => {}
        }
        if let Some(nb) = self.negated(b) {
            return self.add(a, nb);
        }
        self.intern(Node::Sub(a, b))
    }

    pub fn mul(&mut self, a: Id, b: Id) -> Id {
        match (self.value(a).cloned(), self.value(b).cloned()) {
            (Some(x), Some(y)) => return self.constant(x * y),
            (Some(x), _) | (_, Some(x)) if x.is_zero() => return self.constant(Q::zero()),
            (Some(x), _) if x.is_one() => return b,
            (_, Some(y)) if y.is_one() => return a,
            (Some(x), _) if (-x.clone()).is_one() => return self.neg(b),
            (_, Some(y)) if (-y.clone()).is_one() => return self.neg(a),
            (Some(x), _) if x.is_negative() => {
                let k = self.constant(-x);
                let m = self.mul(k, b);
                return self.neg(m);
            }
            (_, Some(y)) if y.is_negative() => {
                let k = self.constant(-y);
                let m = self.mul(a, k);
                return self.neg(m);
            }
            _ => {}
        }
        match (self.negated(a), self.negated(b)) {
            (Some(x), Some(y)) => self.mul(x, y),
            (Some(x), None) => {
                let m = self.mul(x, b);
                self.neg(m)
            }
            (None, Some(y)) => {
                let m = self.mul(a, y);
                self.neg(m)
            }
            (None, None) => self.intern(Node::Mul(a.min(b), a.max(b))),
        }
    }

    /// `√a`.
    pub fn sqrt(&mut self, a: Id) -> Id {
        self.intern(Node::Sqrt(a))
    }

    /// `|a|`.
    pub fn abs(&mut self, a: Id) -> Id {
        match self.value(a) {
            Some(c) => {
                let c = num_traits::Signed::abs(c);
                self.constant(c)
            }
            None => self.intern(Node::Abs(a)),
        }
    }

    /// The larger (`max`) or smaller of `a` and `b`.
    pub fn extremum(&mut self, max: bool, a: Id, b: Id) -> Id {
        if let (Some(x), Some(y)) = (self.value(a), self.value(b)) {
            let c = if (x > y) == max { x.clone() } else { y.clone() };
            return self.constant(c);
        }
        let (a, b) = (a.min(b), a.max(b));
        self.intern(if max {
            Node::Max(a, b)
        } else {
            Node::Min(a, b)
        })
    }

    /// `a / b`; a division by a constant becomes a multiplication by its inverse.
    pub fn div(&mut self, a: Id, b: Id) -> Id {
        if let Some(y) = self.value(b).cloned() {
            assert!(!y.is_zero(), "division by the constant zero");
            let inv = self.constant(Q::one() / y);
            return self.mul(a, inv);
        }
        self.intern(Node::Div(a, b))
    }

    /// Whether a node depends on parameters and constants only.
    pub fn is_uniform(&self, a: Id) -> bool {
        self.uniform[a]
    }

    /// The nodes the outputs reach, in order of creation (a valid evaluation order).
    pub fn reachable(&self, outputs: &[Id]) -> Vec<Id> {
        let mut seen = vec![false; self.nodes.len()];
        let mut stack: Vec<Id> = outputs.to_vec();
        while let Some(n) = stack.pop() {
            if std::mem::replace(&mut seen[n], true) {
                continue;
            }
            stack.extend(self.nodes[n].operands());
        }
        (0..self.nodes.len()).filter(|&n| seen[n]).collect()
    }

    /// Floating-point operations per site: the non-uniform arithmetic nodes the outputs reach
    /// (negations fold into the adjacent add or multiply and are not counted).
    pub fn flops(&self, outputs: &[Id]) -> u64 {
        self.reachable(outputs)
            .into_iter()
            .filter(|&n| {
                !self.uniform[n]
                    && matches!(
                        self.nodes[n],
                        Node::Add(..)
                            | Node::Sub(..)
                            | Node::Mul(..)
                            | Node::Div(..)
                            | Node::Sqrt(..)
                            | Node::Abs(..)
                            | Node::Max(..)
                            | Node::Min(..)
                    )
            })
            .count() as u64
    }
}

/// Code emitted for a program: the uniform preamble and the per-site body, in an order where
/// every line follows the lines it reads.
pub struct Emitted<C> {
    pub preamble: Vec<C>,
    pub body: Vec<Line<C>>,
}

/// One binding of the per-site body: the code that binds node `id`, and the nodes it reads
/// (after fusion: a fused multiply-add reads the multiply's operands).
pub struct Line<C> {
    pub id: Id,
    pub reads: Vec<Id>,
    pub code: C,
}

/// How a program's inputs, parameters and outputs appear in the target language.
pub trait Target {
    type Code;
    fn name(&self, n: Id) -> Self::Code;
    fn input(&self, k: usize) -> Self::Code;
    fn param(&self, k: usize) -> Self::Code;
    fn constant(&self, c: f64) -> Self::Code;
    fn bind(&self, n: Id, value: Self::Code) -> Self::Code;
    fn binary(&self, op: char, a: Self::Code, b: Self::Code) -> Self::Code;
    fn neg(&self, a: Self::Code) -> Self::Code;
    /// `a * b + c` with one rounding.
    fn mul_add(&self, a: Self::Code, b: Self::Code, c: Self::Code) -> Self::Code;
    fn sqrt(&self, a: Self::Code) -> Self::Code;
    /// A pointwise function of the target's library: `abs`, `max` or `min`.
    fn function(&self, name: &str, args: Vec<Self::Code>) -> Self::Code;
}

/// How an add or subtract node is emitted after fusing a multiply into it.
enum Fused {
    /// `x*y + c`.
    MulAdd(Id, Id, Id),
    /// `c - x*y`, emitted as `(-x)*y + c`.
    NegMulAdd(Id, Id, Id),
    /// `x*y - c`, emitted as `x*y + (-c)`.
    MulSub(Id, Id, Id),
}

/// Multiplies that feed exactly one add or subtract are fused into it (one FMA instruction,
/// one rounding); returns the fusion of each such add/subtract node and the fused multiplies.
fn fusions(ir: &Ir, reach: &[Id]) -> (HashMap<Id, Fused>, Vec<bool>) {
    let mut uses = vec![0u32; ir.nodes.len()];
    for &n in reach {
        for o in ir.nodes[n].operands() {
            uses[o] += 1;
        }
    }
    let mut fused = HashMap::new();
    let mut absorbed = vec![false; ir.nodes.len()];
    // A multiply joins its single consumer when both are per-site or both uniform.
    let single_mul = |m: Id, n: Id, absorbed: &[bool]| match ir.nodes[m] {
        Node::Mul(x, y) if uses[m] == 1 && !absorbed[m] && ir.uniform[m] == ir.uniform[n] => {
            Some((x, y))
        }
        _ => None,
    };
    for &n in reach {
        let f = match ir.nodes[n] {
            Node::Add(a, b) => match (single_mul(b, n, &absorbed), single_mul(a, n, &absorbed)) {
                (Some((x, y)), _) => Some((b, Fused::MulAdd(x, y, a))),
                (None, Some((x, y))) => Some((a, Fused::MulAdd(x, y, b))),
                _ => None,
            },
            Node::Sub(a, b) => match (single_mul(b, n, &absorbed), single_mul(a, n, &absorbed)) {
                (Some((x, y)), _) => Some((b, Fused::NegMulAdd(x, y, a))),
                (None, Some((x, y))) => Some((a, Fused::MulSub(x, y, b))),
                _ => None,
            },
            _ => None,
        };
        if let Some((m, f)) = f {
            absorbed[m] = true;
            fused.insert(n, f);
        }
    }
    (fused, absorbed)
}

/// Emits the nodes the outputs reach, uniform ones in the preamble, with multiplies fused into
/// the adds that consume them.
pub fn emit<T: Target>(ir: &Ir, outputs: &[Id], t: &T) -> Emitted<T::Code> {
    let mut out = Emitted {
        preamble: Vec::new(),
        body: Vec::new(),
    };
    let reach = ir.reachable(outputs);
    let (fused, absorbed) = fusions(ir, &reach);
    for n in reach {
        if absorbed[n] {
            continue;
        }
        let reads = match fused.get(&n) {
            Some(Fused::MulAdd(x, y, c) | Fused::NegMulAdd(x, y, c) | Fused::MulSub(x, y, c)) => {
                vec![*x, *y, *c]
            }
            None => ir.nodes[n].operands().collect(),
        };
        let value = match (&ir.nodes[n], fused.get(&n)) {
            (_, Some(Fused::MulAdd(x, y, c))) => t.mul_add(t.name(*x), t.name(*y), t.name(*c)),
            (_, Some(Fused::NegMulAdd(x, y, c))) => {
                t.mul_add(t.neg(t.name(*x)), t.name(*y), t.name(*c))
            }
            (_, Some(Fused::MulSub(x, y, c))) => {
                t.mul_add(t.name(*x), t.name(*y), t.neg(t.name(*c)))
            }
            (Node::Input(k), _) => t.input(*k),
            (Node::Param(k), _) => t.param(*k),
            (Node::Const(c), _) => t.constant(to_f64(c)),
            (Node::Add(a, b), _) => t.binary('+', t.name(*a), t.name(*b)),
            (Node::Sub(a, b), _) => t.binary('-', t.name(*a), t.name(*b)),
            (Node::Mul(a, b), _) => t.binary('*', t.name(*a), t.name(*b)),
            (Node::Div(a, b), _) => t.binary('/', t.name(*a), t.name(*b)),
            (Node::Neg(a), _) => t.neg(t.name(*a)),
            (Node::Sqrt(a), _) => t.sqrt(t.name(*a)),
            (Node::Abs(a), _) => t.function("abs", vec![t.name(*a)]),
            (Node::Max(a, b), _) => t.function("max", vec![t.name(*a), t.name(*b)]),
            (Node::Min(a, b), _) => t.function("min", vec![t.name(*a), t.name(*b)]),
        };
        let code = t.bind(n, value);
        if ir.is_uniform(n) {
            out.preamble.push(code)
        } else {
            out.body.push(Line { id: n, reads, code })
        }
    }
    out
}

/// Rust, generic over `T: ::lbm::Real`; `load(k)` reads input k, `param(k)` parameter k
/// (`prm[k]`, or a field's lane in a cluster).
pub struct Rust<'a> {
    pub load: &'a dyn Fn(usize) -> TokenStream,
    pub param: &'a dyn Fn(usize) -> TokenStream,
}

impl Target for Rust<'_> {
    type Code = TokenStream;
    fn name(&self, n: Id) -> TokenStream {
        let id = format_ident!("t{}", n);
        quote!(#id)
    }
    fn input(&self, k: usize) -> TokenStream {
        (self.load)(k)
    }
    fn param(&self, k: usize) -> TokenStream {
        (self.param)(k)
    }
    fn constant(&self, c: f64) -> TokenStream {
        let lit = proc_macro2::Literal::f64_suffixed(c);
        quote!(<T as ::lbm::Real>::from_f64(#lit))
    }
    fn bind(&self, n: Id, value: TokenStream) -> TokenStream {
        let id = format_ident!("t{}", n);
        quote!(let #id: T = #value;)
    }
    fn binary(&self, op: char, a: TokenStream, b: TokenStream) -> TokenStream {
        match op {
            '+' => quote!(#a + #b),
            '-' => quote!(#a - #b),
            '*' => quote!(#a * #b),
            _ => quote!(#a / #b),
        }
    }
    fn neg(&self, a: TokenStream) -> TokenStream {
        quote!(-#a)
    }
    fn mul_add(&self, a: TokenStream, b: TokenStream, c: TokenStream) -> TokenStream {
        quote!(<T as ::lbm::Real>::mul_add(#a, #b, #c))
    }
    fn sqrt(&self, a: TokenStream) -> TokenStream {
        quote!(<T as ::lbm::Real>::sqrt(#a))
    }
    fn function(&self, name: &str, args: Vec<TokenStream>) -> TokenStream {
        let f = format_ident!("{}", name);
        quote!(<T as ::lbm::Real>::#f(#(#args),*))
    }
}

/// WGSL, in the type alias `real` that the runtime defines (`f32` or `f64`); inputs are read from
/// the local array `inp`, parameters from `prm`.
pub struct Wgsl;

impl Target for Wgsl {
    type Code = String;
    fn name(&self, n: Id) -> String {
        format!("t{n}")
    }
    fn input(&self, k: usize) -> String {
        format!("inp[{k}]")
    }
    fn param(&self, k: usize) -> String {
        format!("prm[{k}]")
    }
    fn constant(&self, c: f64) -> String {
        let s = format!("{c:?}");
        let s = if s.contains(['.', 'e']) {
            s
        } else {
            format!("{s}.0")
        };
        format!("real({s})")
    }
    fn bind(&self, n: Id, value: String) -> String {
        format!("    let t{n}: real = {value};")
    }
    fn binary(&self, op: char, a: String, b: String) -> String {
        format!("{a} {op} {b}")
    }
    fn neg(&self, a: String) -> String {
        format!("-{a}")
    }
    fn mul_add(&self, a: String, b: String, c: String) -> String {
        format!("fma({a}, {b}, {c})")
    }
    fn sqrt(&self, a: String) -> String {
        format!("sqrt({a})")
    }
    fn function(&self, name: &str, args: Vec<String>) -> String {
        format!("{name}({})", args.join(", "))
    }
}
