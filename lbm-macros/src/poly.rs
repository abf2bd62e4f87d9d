//! Exact multivariate polynomials with rational coefficients.
//!
//! The macro works on exact numbers: decimal weights such as D2Q37's
//! 25-digit values are exact rationals `d / 10^k`, so sums, products and the consistency checks
//! carry no rounding error until the final conversion to `f64` in the emitted code.

use std::collections::BTreeMap;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{ToPrimitive, Zero};

/// An exact rational number.
pub type Q = BigRational;

/// `n` as an exact rational.
pub fn q(n: i64) -> Q {
    Q::from_integer(BigInt::from(n))
}

/// `n / d` as an exact rational.
pub fn qf(n: i64, d: i64) -> Q {
    Q::new(BigInt::from(n), BigInt::from(d))
}

/// Rounds an exact rational to the nearest `f64`.
pub fn to_f64(x: &Q) -> f64 {
    x.to_f64().unwrap_or(f64::NAN)
}

/// Parses a decimal literal (`4`, `0.2331506691323525`, `1.5e-3`) exactly.
pub fn parse_decimal(text: &str) -> Option<Q> {
    let text = text.replace('_', "");
    let (mantissa, exp) = match text.find(['e', 'E']) {
        Some(p) => (&text[..p], text[p + 1..].parse::<i32>().ok()?),
        None => (&text[..], 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: BigInt = format!("{int}{frac}").parse().ok()?;
    let scale = exp - frac.len() as i32;
    let ten = BigInt::from(10);
    Some(if scale >= 0 {
        Q::from_integer(digits * num_traits::pow(ten, scale as usize))
    } else {
        Q::new(digits, num_traits::pow(ten, (-scale) as usize))
    })
}

/// Whether `a` and `b` agree to `tol` relative to `max(1, |b|)`.
pub fn close(a: &Q, b: &Q, tol: f64) -> bool {
    let scale = to_f64(b).abs().max(1.0);
    to_f64(&(a - b)).abs() <= tol * scale
}

/// Exponents of the variables of a monomial, indexed by variable.
pub type Mono = Vec<u32>;

/// A polynomial `Σ coef · Π var^exp` over a fixed table of `nvars` variables.
#[derive(Clone, Debug, PartialEq)]
pub struct Poly {
    pub nvars: usize,
    pub terms: BTreeMap<Mono, Q>,
}

impl Poly {
    pub fn zero(nvars: usize) -> Self {
        Poly {
            nvars,
            terms: BTreeMap::new(),
        }
    }

    pub fn constant(nvars: usize, c: Q) -> Self {
        let mut p = Poly::zero(nvars);
        if !c.is_zero() {
            p.terms.insert(vec![0; nvars], c);
        }
        p
    }

    pub fn var(nvars: usize, v: usize) -> Self {
        let mut m = vec![0; nvars];
        m[v] = 1;
        Poly {
            nvars,
            terms: BTreeMap::from([(m, q(1))]),
        }
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    /// The value if the polynomial is a constant.
    pub fn as_constant(&self) -> Option<Q> {
        match self.terms.len() {
            0 => Some(q(0)),
            1 => self.terms.get(&vec![0; self.nvars]).cloned(),
            _ => None,
        }
    }

    fn add_term(&mut self, m: Mono, c: Q) {
        let entry = self.terms.entry(m.clone()).or_insert_with(|| q(0));
        *entry += c;
        if entry.is_zero() {
            self.terms.remove(&m);
        }
    }

    pub fn add(&self, o: &Poly) -> Poly {
        let mut r = self.clone();
        for (m, c) in &o.terms {
            r.add_term(m.clone(), c.clone());
        }
        r
    }

    pub fn neg(&self) -> Poly {
        let terms = self.terms.iter().map(|(m, c)| (m.clone(), -c)).collect();
        Poly {
            nvars: self.nvars,
            terms,
        }
    }

    pub fn sub(&self, o: &Poly) -> Poly {
        self.add(&o.neg())
    }

    pub fn scale(&self, s: &Q) -> Poly {
        if s.is_zero() {
            return Poly::zero(self.nvars);
        }
        let terms = self.terms.iter().map(|(m, c)| (m.clone(), c * s)).collect();
        Poly {
            nvars: self.nvars,
            terms,
        }
    }

    pub fn mul(&self, o: &Poly) -> Poly {
        let mut r = Poly::zero(self.nvars);
        for (ma, ca) in &self.terms {
            for (mb, cb) in &o.terms {
                let m = ma.iter().zip(mb).map(|(a, b)| a + b).collect();
                r.add_term(m, ca * cb);
            }
        }
        r
    }

    pub fn pow(&self, n: u32) -> Poly {
        (0..n).fold(Poly::constant(self.nvars, q(1)), |acc, _| acc.mul(self))
    }

    /// The polynomial with the variables `vars` negated: `p(…, −x_v, …)`.
    pub fn reflect(&self, vars: &[usize]) -> Poly {
        let terms = self
            .terms
            .iter()
            .map(|(m, c)| {
                let odd = vars.iter().map(|&v| m[v]).sum::<u32>() % 2 == 1;
                (m.clone(), if odd { -c } else { c.clone() })
            })
            .collect();
        Poly {
            nvars: self.nvars,
            terms,
        }
    }

    /// Exact division by a single term `c · m`; `None` when a quotient term would have a
    /// negative exponent (the result is not a polynomial) or the divisor is not one term.
    pub fn div(&self, o: &Poly) -> Option<Poly> {
        let (md, cd) = match o.terms.len() {
            1 => o.terms.iter().next()?,
            _ => return None,
        };
        let mut r = Poly::zero(self.nvars);
        for (m, c) in &self.terms {
            let mut e = Vec::with_capacity(self.nvars);
            for (a, b) in m.iter().zip(md) {
                e.push(a.checked_sub(*b)?);
            }
            r.add_term(e, c / cd);
        }
        Some(r)
    }

    /// Largest coefficient magnitude (for relative comparisons).
    pub fn norm(&self) -> f64 {
        self.terms
            .values()
            .map(|c| to_f64(c).abs())
            .fold(0.0, f64::max)
    }

    /// Whether `self` and `o` agree coefficient by coefficient to `tol` relative to the larger
    /// of their norms and 1.
    pub fn close_to(&self, o: &Poly, tol: f64) -> bool {
        let scale = self.norm().max(o.norm()).max(1.0);
        self.sub(o).norm() <= tol * scale
    }

    /// Human-readable form for error messages: terms below `1e-12` of the largest (round-off
    /// of decimal weights) are left out, and simple rationals print as fractions.
    pub fn display(&self, names: &[String]) -> String {
        let floor = 1e-12 * self.norm();
        let mut s = String::new();
        for (m, c) in self.terms.iter().filter(|(_, c)| to_f64(c).abs() > floor) {
            let negative = c < &Q::zero();
            s.push_str(match (s.is_empty(), negative) {
                (true, true) => "-",
                (true, false) => "",
                (false, true) => " - ",
                (false, false) => " + ",
            });
            let mag = if negative { -c.clone() } else { c.clone() };
            let vars: Vec<String> = m
                .iter()
                .enumerate()
                .filter(|(_, e)| **e > 0)
                .map(|(v, e)| {
                    if *e == 1 {
                        names[v].clone()
                    } else {
                        format!("{}^{e}", names[v])
                    }
                })
                .collect();
            if vars.is_empty() || mag != q(1) {
                s.push_str(&fmt_q(&mag));
                if !vars.is_empty() {
                    s.push('·');
                }
            }
            s.push_str(&vars.join("·"));
        }
        if s.is_empty() {
            s.push('0');
        }
        s
    }
}

/// An exact number for messages: `3/2` when the denominator is small, else a decimal.
pub fn fmt_q(x: &Q) -> String {
    if x.is_integer() || x.denom() <= &BigInt::from(1000) {
        x.to_string()
    } else {
        fmt_num(to_f64(x))
    }
}

/// Short form of a number for messages.
pub fn fmt_num(x: f64) -> String {
    if x == x.round() && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else if (1e-4..1e6).contains(&x.abs()) {
        let t = format!("{x:.10}");
        t.trim_end_matches('0').to_string()
    } else {
        format!("{x:.6e}")
    }
}
