//! Formulas of the DSL: an expression tree with source spans, and its parser.
//!
//! The grammar is that of ordinary algebra, not Rust's: `^` is a power and binds tighter than
//! unary minus, `*` and `/` bind tighter than `+` and `-`:
//!
//! ```text
//! expr    := term (('+' | '-') term)*
//! term    := unary (('*' | '/') unary)*
//! unary   := '-' unary | power
//! power   := atom ('^' unary)?
//! atom    := number | ident | ident '(' args ')' | '(' expr (',' expr)* ')' | '[' expr,* ']'
//! args    := (ident '=')? expr (',' (ident '=')? expr)*
//! ```

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::{bracketed, parenthesized, Ident, Token};

use crate::poly::{parse_decimal, Q};

/// A binary operator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
}

/// An argument of a call, positional or named (`order = 4`).
#[derive(Clone, Debug)]
pub struct Arg {
    pub name: Option<Ident>,
    pub value: Expr,
}

/// The shape of an expression.
#[derive(Clone, Debug)]
pub enum ExprKind {
    Num(Q),
    Ident(String),
    Unary(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Call(Ident, Vec<Arg>),
    /// `(a, b)`: a vector.
    Tuple(Vec<Expr>),
    /// `[a, b, …]`: a list (weights, MRT basis and rates).
    List(Vec<Expr>),
}

/// An expression with the spans of its first and last tokens: errors underline all of it.
#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    pub end: Span,
}

impl Expr {
    fn new(kind: ExprKind, span: Span, end: Span) -> Self {
        Expr { kind, span, end }
    }

    fn binary(op: BinOp, lhs: Expr, rhs: Expr) -> Self {
        let (span, end) = (lhs.span, rhs.end);
        Expr::new(
            ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
            span,
            end,
        )
    }

    /// A compile error underlining the whole expression.
    pub fn error(&self, msg: impl std::fmt::Display) -> syn::Error {
        let first = proc_macro2::Ident::new("first", self.span);
        let last = proc_macro2::Ident::new("last", self.end);
        syn::Error::new_spanned(quote::quote!(#first #last), msg)
    }
}

impl Parse for Expr {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        parse_sum(input)
    }
}

fn parse_sum(input: ParseStream) -> syn::Result<Expr> {
    let mut lhs = parse_product(input)?;
    loop {
        let op = if input.peek(Token![+]) {
            BinOp::Add
        } else if input.peek(Token![-]) {
            BinOp::Sub
        } else {
            return Ok(lhs);
        };
        input.parse::<proc_macro2::TokenTree>()?;
        let rhs = parse_product(input)?;
        lhs = Expr::binary(op, lhs, rhs);
    }
}

fn parse_product(input: ParseStream) -> syn::Result<Expr> {
    let mut lhs = parse_unary(input)?;
    loop {
        let op = if input.peek(Token![*]) {
            BinOp::Mul
        } else if input.peek(Token![/]) {
            BinOp::Div
        } else {
            return Ok(lhs);
        };
        input.parse::<proc_macro2::TokenTree>()?;
        let rhs = parse_unary(input)?;
        lhs = Expr::binary(op, lhs, rhs);
    }
}

fn parse_unary(input: ParseStream) -> syn::Result<Expr> {
    if input.peek(Token![-]) {
        let span = input.span();
        input.parse::<Token![-]>()?;
        let inner = parse_unary(input)?;
        let end = inner.end;
        return Ok(Expr::new(ExprKind::Unary(Box::new(inner)), span, end));
    }
    let base = parse_atom(input)?;
    if input.peek(Token![^]) {
        input.parse::<Token![^]>()?;
        let exp = parse_unary(input)?;
        return Ok(Expr::binary(BinOp::Pow, base, exp));
    }
    Ok(base)
}

fn parse_atom(input: ParseStream) -> syn::Result<Expr> {
    let span = input.span();
    if input.peek(syn::LitInt) || input.peek(syn::LitFloat) {
        let lit: syn::Lit = input.parse()?;
        let text = match &lit {
            syn::Lit::Int(i) => i.base10_digits().to_string(),
            syn::Lit::Float(f) => f.base10_digits().to_string(),
            _ => unreachable!("peeked a number"),
        };
        let value = parse_decimal(&text)
            .ok_or_else(|| syn::Error::new(span, format!("cannot read `{text}` as a number")))?;
        return Ok(Expr::new(ExprKind::Num(value), span, span));
    }
    if input.peek(syn::token::Paren) {
        let content;
        let end = parenthesized!(content in input).span.close();
        let items = content.parse_terminated(Expr::parse, Token![,])?;
        let mut items: Vec<Expr> = items.into_iter().collect();
        return match items.len() {
            0 => Err(syn::Error::new(
                span,
                "empty parentheses: expected an expression or a vector `(x, y)`",
            )),
            1 => Ok(Expr {
                span,
                end,
                ..items.remove(0)
            }),
            _ => Ok(Expr::new(ExprKind::Tuple(items), span, end)),
        };
    }
    if input.peek(syn::token::Bracket) {
        let content;
        let end = bracketed!(content in input).span.close();
        let items = content.parse_terminated(Expr::parse, Token![,])?;
        return Ok(Expr::new(
            ExprKind::List(items.into_iter().collect()),
            span,
            end,
        ));
    }
    if input.peek(Ident) {
        let ident: Ident = input.parse()?;
        if input.peek(syn::token::Paren) {
            let content;
            let end = parenthesized!(content in input).span.close();
            let args = content.parse_terminated(parse_arg, Token![,])?;
            return Ok(Expr::new(
                ExprKind::Call(ident, args.into_iter().collect()),
                span,
                end,
            ));
        }
        return Ok(Expr::new(ExprKind::Ident(ident.to_string()), span, span));
    }
    Err(syn::Error::new(
        span,
        "expected a number, a name, a call such as `dot(c, u)`, or `( … )`",
    ))
}

fn parse_arg(input: ParseStream) -> syn::Result<Arg> {
    if input.peek(Ident) && input.peek2(Token![=]) && !input.peek2(Token![==]) {
        let name: Ident = input.parse()?;
        input.parse::<Token![=]>()?;
        return Ok(Arg {
            name: Some(name),
            value: input.parse()?,
        });
    }
    Ok(Arg {
        name: None,
        value: input.parse()?,
    })
}

/// Evaluates an expression made of numbers only (weights, `cs2`, velocity components) exactly.
pub fn eval_const(e: &Expr) -> syn::Result<Q> {
    match &e.kind {
        ExprKind::Num(v) => Ok(v.clone()),
        ExprKind::Unary(a) => Ok(-eval_const(a)?),
        ExprKind::Binary(op, a, b) => {
            let (a, b) = (eval_const(a)?, eval_const(b)?);
            match op {
                BinOp::Add => Ok(a + b),
                BinOp::Sub => Ok(a - b),
                BinOp::Mul => Ok(a * b),
                BinOp::Div if num_traits::Zero::is_zero(&b) => Err(e.error("division by zero")),
                BinOp::Div => Ok(a / b),
                BinOp::Pow => Ok(num_traits::pow(a, small_exponent(&b, e.span)? as usize)),
            }
        }
        _ => Err(e.error("expected a number (digits, + - * / ^ and parentheses)")),
    }
}

/// The exponent of `^`, which must be a small non-negative integer.
pub fn small_exponent(b: &Q, span: Span) -> syn::Result<u32> {
    use num_traits::ToPrimitive;
    if b.is_integer() {
        if let Some(n) = b.to_integer().to_u32().filter(|n| *n <= 16) {
            return Ok(n);
        }
    }
    Err(syn::Error::new(
        span,
        "exponents must be whole numbers from 0 to 16",
    ))
}

/// Source-like text of an expression, for messages and docs.
pub fn show(e: &Expr) -> String {
    let op = |o: &BinOp| match o {
        BinOp::Add => " + ",
        BinOp::Sub => " - ",
        BinOp::Mul => "*",
        BinOp::Div => "/",
        BinOp::Pow => "^",
    };
    let list = |v: &[Expr]| v.iter().map(show).collect::<Vec<_>>().join(", ");
    match &e.kind {
        ExprKind::Num(v) => {
            if v.is_integer() {
                v.to_string()
            } else {
                crate::poly::to_f64(v).to_string()
            }
        }
        ExprKind::Ident(n) => n.clone(),
        ExprKind::Unary(x) => format!("-{}", show(x)),
        ExprKind::Binary(o, a, b) => {
            let wrap = |x: &Expr| match x.kind {
                ExprKind::Binary(..) => format!("({})", show(x)),
                _ => show(x),
            };
            format!("{}{}{}", wrap(a), op(o), wrap(b))
        }
        ExprKind::Call(n, args) => {
            let a: Vec<String> = args
                .iter()
                .map(|a| match &a.name {
                    Some(k) => format!("{k} = {}", show(&a.value)),
                    None => show(&a.value),
                })
                .collect();
            format!("{n}({})", a.join(", "))
        }
        ExprKind::Tuple(v) => format!("({})", list(v)),
        ExprKind::List(v) => format!("[{}]", list(v)),
    }
}
