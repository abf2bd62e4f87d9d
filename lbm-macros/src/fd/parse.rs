//! Parsing of an `fd_scheme!` declaration into its items, before any check.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::parse::{Parse, ParseStream};
use syn::{braced, Attribute, Ident, Token, Visibility};

use crate::expr::Expr;

/// An unknown of the scheme: a scalar, or a vector of `dim` components named `<name>x`, `<name>y`, ….
pub struct FieldDecl {
    pub name: Ident,
    pub vector: bool,
}

/// `name = formula;` (a `let`, an operator, or a rate).
pub struct Binding {
    pub name: Ident,
    pub value: Expr,
}

/// A whole `fd_scheme!` input.
pub struct SchemeDecl {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub name: Ident,
    pub dim: Option<Expr>,
    pub fields: Option<(Span, Vec<FieldDecl>)>,
    pub params: Vec<Ident>,
    pub operators: Vec<Binding>,
    pub lets: Vec<Binding>,
    pub rates: Option<(Span, Vec<Binding>)>,
    pub integrator: Option<Ident>,
}

const ITEMS: &str = "dim, fields, params, operators, let, rates, integrator";

impl Parse for SchemeDecl {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let kw: Ident = input.parse()?;
        if kw != "scheme" {
            return Err(syn::Error::new(kw.span(), "expected `scheme Name { … }`"));
        }
        let name: Ident = input.parse()?;
        let body;
        braced!(body in input);
        let mut decl = SchemeDecl {
            attrs,
            vis,
            name,
            dim: None,
            fields: None,
            params: Vec::new(),
            operators: Vec::new(),
            lets: Vec::new(),
            rates: None,
            integrator: None,
        };
        let mut seen: Vec<String> = Vec::new();
        while !body.is_empty() {
            let key: Ident = body.call(Ident::parse_any)?;
            let k = key.to_string();
            if k != "let" && seen.contains(&k) {
                return Err(syn::Error::new(
                    key.span(),
                    format!("`{k}` is declared twice"),
                ));
            }
            seen.push(k.clone());
            match k.as_str() {
                "dim" => {
                    body.parse::<Token![=]>()?;
                    decl.dim = Some(body.parse()?);
                    body.parse::<Token![;]>()?;
                }
                "integrator" => {
                    body.parse::<Token![=]>()?;
                    decl.integrator = Some(body.parse()?);
                    body.parse::<Token![;]>()?;
                }
                "let" => {
                    decl.lets.push(binding(&body)?);
                    body.parse::<Token![;]>()?;
                }
                "fields" => {
                    let inner;
                    braced!(inner in body);
                    let mut fields = Vec::new();
                    while !inner.is_empty() {
                        let name: Ident = inner.parse()?;
                        let mut vector = false;
                        if inner.peek(Token![:]) {
                            inner.parse::<Token![:]>()?;
                            let kind: Ident = inner.parse()?;
                            vector = match kind.to_string().as_str() {
                                "scalar" => false,
                                "vector" => true,
                                _ => {
                                    return Err(syn::Error::new(
                                        kind.span(),
                                        "a field is a `scalar` (the default) or a `vector`",
                                    ))
                                }
                            };
                        }
                        fields.push(FieldDecl { name, vector });
                        if !inner.is_empty() {
                            inner.parse::<Token![,]>()?;
                        }
                    }
                    decl.fields = Some((key.span(), fields));
                }
                "params" => {
                    let inner;
                    braced!(inner in body);
                    while !inner.is_empty() {
                        let name: Ident = inner.parse()?;
                        inner.parse::<Token![:]>()?;
                        let ty: Ident = inner.parse()?;
                        if ty != "real" {
                            return Err(syn::Error::new(
                                ty.span(),
                                "a parameter of a finite-difference scheme is `real` (one value for the whole grid)",
                            ));
                        }
                        decl.params.push(name);
                        if !inner.is_empty() {
                            inner.parse::<Token![,]>()?;
                        }
                    }
                }
                "operators" | "rates" => {
                    let inner;
                    braced!(inner in body);
                    let mut list = Vec::new();
                    while !inner.is_empty() {
                        list.push(binding(&inner)?);
                        inner.parse::<Token![;]>()?;
                    }
                    if k == "operators" {
                        decl.operators = list;
                    } else {
                        decl.rates = Some((key.span(), list));
                    }
                }
                _ => {
                    return Err(syn::Error::new(
                        key.span(),
                        format!("unknown item `{k}`: expected one of {ITEMS}"),
                    ))
                }
            }
        }
        Ok(decl)
    }
}

fn binding(input: ParseStream) -> syn::Result<Binding> {
    let name: Ident = input.parse()?;
    input.parse::<Token![=]>()?;
    Ok(Binding {
        name,
        value: input.parse()?,
    })
}
