//! Difference operators and the proof of their order of accuracy.
//!
//! A one-dimensional stencil of coefficients `c_j` at the offsets `j = from, …, from + n − 1`
//! approximates the `k`-th derivative as `D f(x) = h^(−k) Σ_j c_j f(x + j h)`. Taylor's theorem
//! gives
//!
//! ```text
//! D f = Σ_m M_m h^(m − k) f^(m)(x),      M_m = Σ_j c_j j^m / m!,
//! ```
//!
//! so `D` is consistent when `M_m = 0` for `m < k` and `M_k = 1`, and of order `p` when
//! moreover `M_m = 0` for `k < m < k + p` and `M_(k+p) ≠ 0`; `M_(k+p) h^p f^(k+p)` is then the
//! leading error term (LeVeque 2007, *Finite Difference Methods for Ordinary and Partial
//! Differential Equations*, §1.5). The moments are exact rationals, so the order the macro
//! states is proved, not measured.

use num_traits::{One, ToPrimitive, Zero};
use syn::{Error, Ident};

use crate::expr::{eval_const, Arg, Expr, ExprKind};
use crate::poly::{fmt_q, q, Q};

/// What an operator approximates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// `∂^k/∂x_a^k` along the axis given where it is applied (or the gradient for k = 1).
    Derivative(u32),
    /// `Σ_a ∂²/∂x_a²`, the stencil applied along every axis.
    Laplacian,
}

/// A checked difference operator.
#[derive(Clone, Debug)]
pub struct Operator {
    pub name: Ident,
    pub kind: Kind,
    /// The derivative's order `k` along one axis.
    pub derivative: u32,
    /// The proved order of accuracy.
    pub order: u32,
    /// The coefficients with their offsets, zero ones left out.
    pub taps: Vec<(i32, Q)>,
}

impl Operator {
    /// A one-line description for the generated docs.
    pub fn describe(&self) -> String {
        let what = match self.kind {
            Kind::Derivative(k) => format!("∂^{k}/∂x^{k}"),
            Kind::Laplacian => "∇²".to_string(),
        };
        let taps: Vec<String> = self
            .taps
            .iter()
            .map(|(j, c)| format!("{}·f[{j:+}]", fmt_q(c)))
            .collect();
        format!(
            "`{}` = {what}, order {}: ({}) / h^{}",
            self.name,
            self.order,
            taps.join(" + "),
            self.derivative
        )
    }
}

fn named<'a>(args: &'a [Arg], key: &str) -> Option<&'a Arg> {
    args.iter()
        .find(|a| a.name.as_ref().is_some_and(|n| n == key))
}

fn whole(e: &Expr, what: &str) -> syn::Result<i64> {
    let v = eval_const(e)?;
    if !v.is_integer() {
        return Err(e.error(format!("{what} must be a whole number")));
    }
    v.to_integer()
        .to_i64()
        .filter(|n| n.abs() <= 64)
        .ok_or_else(|| e.error(format!("{what} must be a whole number between -64 and 64")))
}

const USAGE: &str = "an operator is `derivative(k, order = p, stencil = [c…])` (k = 1–4) or `laplacian(order = p, stencil = [c…])`, with `from = j` when the first coefficient is not at −(n − 1)/2 (a one-sided stencil)";

/// Parses and checks `name = derivative(…)` or `name = laplacian(…)`.
pub fn operator(name: &Ident, e: &Expr) -> syn::Result<Operator> {
    let (call, args) = match &e.kind {
        ExprKind::Call(call, args) => (call, args),
        _ => return Err(e.error(USAGE)),
    };
    let (kind, k) = match call.to_string().as_str() {
        "derivative" => {
            let first = args
                .first()
                .filter(|a| a.name.is_none())
                .ok_or_else(|| Error::new(call.span(), "`derivative` takes the derivative's order first: derivative(1, order = 2, stencil = [-1/2, 0, 1/2])"))?;
            let k = whole(&first.value, "the derivative's order")?;
            if !(1..=4).contains(&k) {
                return Err(first
                    .value
                    .error("the derivative's order k is 1, 2, 3 or 4"));
            }
            (Kind::Derivative(k as u32), k as u32)
        }
        "laplacian" => (Kind::Laplacian, 2),
        _ => return Err(Error::new(call.span(), USAGE)),
    };
    for a in args {
        match &a.name {
            Some(n) if ["order", "stencil", "from"].contains(&n.to_string().as_str()) => {}
            Some(n) => {
                return Err(Error::new(
                    n.span(),
                    format!("unknown argument `{n}`: {USAGE}"),
                ))
            }
            None if kind == Kind::Laplacian || !std::ptr::eq(a, &args[0]) => {
                return Err(a.value.error(USAGE))
            }
            None => {}
        }
    }
    let order_arg = named(args, "order").ok_or_else(|| {
        Error::new(
            call.span(),
            "give the operator's order of accuracy, `order = p`: the macro proves it from the stencil",
        )
    })?;
    let declared = whole(&order_arg.value, "the order of accuracy")?;
    if declared < 1 {
        return Err(order_arg.value.error("the order of accuracy is at least 1"));
    }
    let stencil = named(args, "stencil")
        .ok_or_else(|| Error::new(call.span(), "give the coefficients, `stencil = [c…]`"))?;
    let coeffs: Vec<Q> = match &stencil.value.kind {
        ExprKind::List(items) if !items.is_empty() => {
            items.iter().map(eval_const).collect::<syn::Result<_>>()?
        }
        _ => {
            return Err(stencil
                .value
                .error("the stencil is a list of numbers, `[1, -2, 1]`"))
        }
    };
    let n = coeffs.len() as i64;
    let from = match named(args, "from") {
        Some(a) => whole(&a.value, "`from`")?,
        None if n % 2 == 1 => -(n - 1) / 2,
        None => {
            return Err(stencil.value.error(format!(
                "a stencil of {n} coefficients has no centre: give the offset of the first one, `from = j`"
            )))
        }
    };
    let taps: Vec<(i32, Q)> = coeffs
        .into_iter()
        .enumerate()
        .map(|(i, c)| ((from + i as i64) as i32, c))
        .filter(|(_, c)| !c.is_zero())
        .collect();
    let order = proved_order(&taps, k)
        .map_err(|msg| stencil.value.error(format!("operator `{name}`: {msg}")))?;
    if order != declared as u32 {
        let (lead_m, lead) = moment_after(&taps, k + order);
        let msg = if order < declared as u32 {
            format!(
                "operator `{name}` is declared order {declared}, but its stencil is order {order}: the leading error term is {}",
                term(&lead, order as i64, lead_m)
            )
        } else {
            format!(
                "operator `{name}` is declared order {declared}, but its stencil is order {order} (leading error {}): declare `order = {order}`",
                term(&lead, order as i64, lead_m)
            )
        };
        return Err(order_arg.value.error(msg));
    }
    Ok(Operator {
        name: name.clone(),
        kind,
        derivative: k,
        order,
        taps,
    })
}

/// `M_m = Σ_j c_j j^m / m!`.
fn moment(taps: &[(i32, Q)], m: u32) -> Q {
    let fact: Q = (1..=m).fold(Q::one(), |a, i| a * q(i as i64));
    taps.iter()
        .map(|(j, c)| c * num_traits::pow(q(*j as i64), m as usize))
        .fold(Q::zero(), |a, b| a + b)
        / fact
}

/// The first non-zero moment from `m` on (within the stencil's reach of degrees), and its value.
fn moment_after(taps: &[(i32, Q)], m: u32) -> (u32, Q) {
    (m..m + 2 * taps.len() as u32 + 8)
        .map(|i| (i, moment(taps, i)))
        .find(|(_, v)| !v.is_zero())
        .unwrap_or((m, Q::zero()))
}

/// `n` in superscript digits (a minus sign for negative `n`).
fn sup(n: i64) -> String {
    let digits = n
        .unsigned_abs()
        .to_string()
        .chars()
        .map(|c| {
            "⁰¹²³⁴⁵⁶⁷⁸⁹"
                .chars()
                .nth(c as usize - '0' as usize)
                .unwrap_or(c)
        })
        .collect::<String>();
    if n < 0 {
        format!("⁻{digits}")
    } else {
        digits
    }
}

/// `∂ᵐf/∂xᵐ`, `∂f/∂x` or `f`.
fn derivative_text(m: u32) -> String {
    match m {
        0 => "f".to_string(),
        1 => "∂f/∂x".to_string(),
        _ => format!("∂{}f/∂x{}", sup(m as i64), sup(m as i64)),
    }
}

/// `M hᵖ ∂ᵐf/∂xᵐ` as text.
fn term(m_val: &Q, p: i64, m: u32) -> String {
    let h = match p {
        0 => String::new(),
        1 => " h".to_string(),
        _ => format!(" h{}", sup(p)),
    };
    format!("{}{h} {}", fmt_q(m_val), derivative_text(m))
}

/// The order of accuracy of the stencil for the `k`-th derivative, or why it approximates
/// something else.
fn proved_order(taps: &[(i32, Q)], k: u32) -> Result<u32, String> {
    for m in 0..k {
        let v = moment(taps, m);
        if !v.is_zero() {
            return Err(format!(
                "the stencil does not approximate the derivative of order {k}: {} = {} ≠ 0, so it has the term {}, which grows as h → 0",
                if m == 0 { "Σ c_j".to_string() } else { format!("Σ c_j j{}/{m}!", sup(m as i64)) },
                fmt_q(&v),
                term(&v, m as i64 - k as i64, m)
            ));
        }
    }
    let mk = moment(taps, k);
    if !mk.is_one() {
        return Err(format!(
            "the stencil approximates {} times the derivative of order {k} (Σ c_j j{}/{k}! = {}): scale the coefficients by {}",
            fmt_q(&mk),
            sup(k as i64),
            fmt_q(&mk),
            if mk.is_zero() { "a non-zero factor".to_string() } else { fmt_q(&(Q::one() / mk.clone())) }
        ));
    }
    let (m, _) = moment_after(taps, k + 1);
    Ok(m - k)
}
