//! Evaluation of formulas in an algebra: exact polynomials (for the checks and the equilibrium)
//! or the kernel's expression graph (for the generated code). The arithmetic, vectors, `dot` and
//! powers are shared; what names and calls mean is up to each algebra's context.

use proc_macro2::Span;
use syn::{Error, Ident};

use crate::expr::{eval_const, small_exponent, Arg, BinOp, Expr, ExprKind};
use crate::poly::Q;

/// A scalar or a vector of the algebra.
#[derive(Clone, Debug)]
pub enum Value<S> {
    Scalar(S),
    Vector(Vec<S>),
}

impl<S> Value<S> {
    /// The scalar, or an error saying a scalar was expected.
    pub fn scalar(self, span: Span, what: &str) -> syn::Result<S> {
        match self {
            Value::Scalar(s) => Ok(s),
            Value::Vector(_) => Err(Error::new(
                span,
                format!("{what} must be a scalar, but this is a vector"),
            )),
        }
    }
}

/// Arithmetic of an algebra, and the meaning of its names and calls.
pub trait Algebra {
    type S: Clone;
    fn constant(&mut self, q: Q) -> Self::S;
    fn add(&mut self, a: &Self::S, b: &Self::S) -> Self::S;
    fn sub(&mut self, a: &Self::S, b: &Self::S) -> Self::S;
    fn mul(&mut self, a: &Self::S, b: &Self::S) -> Self::S;
    fn neg(&mut self, a: &Self::S) -> Self::S;
    fn div(&mut self, a: &Self::S, b: &Self::S, span: Span) -> syn::Result<Self::S>;
    /// The value of a name.
    fn ident(&mut self, name: &str, span: Span) -> syn::Result<Value<Self::S>>;
    /// A call other than `dot` (`sum`, `hermite`, …).
    fn call(&mut self, name: &Ident, args: &[Arg], span: Span) -> syn::Result<Value<Self::S>>;
}

/// The arithmetic of an [`Algebra`] whose scalars are nodes of the expression graph `self.ir`
/// (the models' kernels and the finite-difference schemes' rates): `type S` and `constant`,
/// `add`, `sub`, `mul` and `neg`, inside the `impl`.
macro_rules! ir_arithmetic {
    () => {
        type S = $crate::ir::Id;
        fn constant(&mut self, x: $crate::poly::Q) -> $crate::ir::Id {
            self.ir.constant(x)
        }
        fn add(&mut self, a: &$crate::ir::Id, b: &$crate::ir::Id) -> $crate::ir::Id {
            self.ir.add(*a, *b)
        }
        fn sub(&mut self, a: &$crate::ir::Id, b: &$crate::ir::Id) -> $crate::ir::Id {
            self.ir.sub(*a, *b)
        }
        fn mul(&mut self, a: &$crate::ir::Id, b: &$crate::ir::Id) -> $crate::ir::Id {
            self.ir.mul(*a, *b)
        }
        fn neg(&mut self, a: &$crate::ir::Id) -> $crate::ir::Id {
            self.ir.neg(*a)
        }
    };
}
pub(crate) use ir_arithmetic;

/// Evaluates `e` in the algebra `a`.
pub fn eval<A: Algebra>(a: &mut A, e: &Expr) -> syn::Result<Value<A::S>> {
    match &e.kind {
        ExprKind::Num(v) => Ok(Value::Scalar(a.constant(v.clone()))),
        ExprKind::Ident(name) => a.ident(name, e.span),
        ExprKind::Unary(x) => Ok(map(eval(a, x)?, |s| a.neg(&s))),
        ExprKind::Binary(BinOp::Pow, x, n) => {
            let n = small_exponent(
                &eval_const(n).map_err(|_| n.error("an exponent must be a whole number"))?,
                n.span,
            )?;
            let base = eval(a, x)?.scalar(x.span, "the base of `^`")?;
            let mut acc = a.constant(crate::poly::q(1));
            for _ in 0..n {
                acc = a.mul(&acc, &base);
            }
            Ok(Value::Scalar(acc))
        }
        ExprKind::Binary(op, x, y) => {
            let (x, y) = (eval(a, x)?, eval(a, y)?);
            binary(a, *op, x, y, e.span)
        }
        ExprKind::Tuple(items) => {
            let mut v = Vec::with_capacity(items.len());
            for item in items {
                v.push(eval(a, item)?.scalar(item.span, "a vector component")?);
            }
            Ok(Value::Vector(v))
        }
        ExprKind::List(_) => Err(e.error("a list `[…]` is not allowed inside a formula")),
        ExprKind::Call(name, args) if name == "dot" || name == "norm2" => {
            let arity = if name == "dot" { 2 } else { 1 };
            if args.len() != arity || args.iter().any(|x| x.name.is_some()) {
                let usage = if arity == 2 {
                    "`dot` takes two vectors: dot(a, b)"
                } else {
                    "`norm2` takes one vector: norm2(a) = dot(a, a)"
                };
                return Err(Error::new(name.span(), usage));
            }
            let x = eval(a, &args[0].value)?;
            let y = if arity == 2 {
                eval(a, &args[1].value)?
            } else {
                x.clone()
            };
            match (x, y) {
                (Value::Vector(x), Value::Vector(y)) if x.len() == y.len() => {
                    let mut acc = a.constant(crate::poly::q(0));
                    for (p, q) in x.iter().zip(&y) {
                        let t = a.mul(p, q);
                        acc = a.add(&acc, &t);
                    }
                    Ok(Value::Scalar(acc))
                }
                _ => Err(Error::new(
                    name.span(),
                    format!("`{name}` takes vectors of the same dimension"),
                )),
            }
        }
        ExprKind::Call(name, args) => a.call(name, args, e.span),
    }
}

fn map<S, A: FnMut(S) -> S>(v: Value<S>, mut f: A) -> Value<S> {
    match v {
        Value::Scalar(s) => Value::Scalar(f(s)),
        Value::Vector(v) => Value::Vector(v.into_iter().map(f).collect()),
    }
}

fn binary<A: Algebra>(
    a: &mut A,
    op: BinOp,
    x: Value<A::S>,
    y: Value<A::S>,
    span: Span,
) -> syn::Result<Value<A::S>> {
    use Value::{Scalar, Vector};
    let elementwise = |a: &mut A, p: &A::S, q: &A::S| -> syn::Result<A::S> {
        Ok(match op {
            BinOp::Add => a.add(p, q),
            BinOp::Sub => a.sub(p, q),
            BinOp::Mul => a.mul(p, q),
            BinOp::Div => a.div(p, q, span)?,
            BinOp::Pow => unreachable!("powers are handled by eval"),
        })
    };
    match (x, y) {
        (Scalar(p), Scalar(q)) => Ok(Scalar(elementwise(a, &p, &q)?)),
        (Vector(p), Vector(q)) if matches!(op, BinOp::Add | BinOp::Sub) && p.len() == q.len() => {
            let v: syn::Result<Vec<_>> = p.iter().zip(&q).map(|(p, q)| elementwise(a, p, q)).collect();
            Ok(Vector(v?))
        }
        (Vector(p), Scalar(q)) if !matches!(op, BinOp::Add | BinOp::Sub) => {
            let v: syn::Result<Vec<_>> = p.iter().map(|p| elementwise(a, p, &q)).collect();
            Ok(Vector(v?))
        }
        (Scalar(p), Vector(q)) if op == BinOp::Mul => {
            let v: Vec<_> = q.iter().map(|q| a.mul(&p, q)).collect();
            Ok(Vector(v))
        }
        _ => Err(Error::new(
            span,
            "vectors combine only as vector ± vector, vector * scalar, vector / scalar or dot(a, b)",
        )),
    }
}
