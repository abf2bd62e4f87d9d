//! Parsing of a model declaration into its items, before any check.

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::{braced, bracketed, Attribute, Ident, Token, Visibility};

use crate::expr::Expr;

/// The velocity set as written: an explicit list, or shells expanded to signed permutations.
pub struct VelocitiesDecl {
    pub shells: bool,
    pub vectors: Vec<Expr>,
    pub span: Span,
}

/// A `name: real` or `name: field` parameter.
pub struct ParamDecl {
    pub name: Ident,
    /// Declared `field`: a value the runtime may give per site (uniform unless it does).
    pub field: bool,
}

/// A `name = expr;` or `name: role = expr;` moment definition.
pub struct MomentDecl {
    pub name: Ident,
    /// The role written after the name, if any (`density`, `velocity`, `temperature`,
    /// `scalar`, `vector`).
    pub role: Option<Ident>,
    pub value: Expr,
}

/// A whole `lbm_model!` input.
pub struct ModelDecl {
    pub attrs: Vec<Attribute>,
    pub vis: Visibility,
    pub name: Ident,
    pub dim: Option<Expr>,
    pub velocities: Option<VelocitiesDecl>,
    pub weights: Option<Expr>,
    pub cs2: Option<Expr>,
    pub params: Vec<ParamDecl>,
    pub moments: Option<(Span, Vec<MomentDecl>)>,
    pub equilibrium: Option<Expr>,
    pub collision: Option<Expr>,
    pub force: Option<Expr>,
    /// `conserved = [name, …];`: the moments the collision conserves (all when absent).
    pub conserved: Option<Expr>,
}

const ITEMS: &str =
    "dim, velocities, weights, cs2, params, moments, conserved, equilibrium, collision, force";

impl Parse for ModelDecl {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let attrs = input.call(Attribute::parse_outer)?;
        let vis: Visibility = input.parse()?;
        let kw: Ident = input.parse()?;
        if kw != "model" {
            return Err(syn::Error::new(kw.span(), "expected `model Name { … }`"));
        }
        let name: Ident = input.parse()?;
        let body;
        braced!(body in input);
        let mut decl = ModelDecl {
            attrs,
            vis,
            name,
            dim: None,
            velocities: None,
            weights: None,
            cs2: None,
            params: Vec::new(),
            moments: None,
            equilibrium: None,
            collision: None,
            force: None,
            conserved: None,
        };
        let mut seen: Vec<String> = Vec::new();
        while !body.is_empty() {
            let key: Ident = body.parse()?;
            let k = key.to_string();
            if seen.contains(&k) {
                return Err(syn::Error::new(
                    key.span(),
                    format!("`{k}` is declared twice: keep one `{k}` item (merge the two)"),
                ));
            }
            seen.push(k.clone());
            match k.as_str() {
                "params" => decl.params = parse_params(&body)?,
                "moments" => decl.moments = Some((key.span(), parse_moments(&body)?)),
                "velocities" => decl.velocities = Some(parse_velocities(&body)?),
                "dim" | "weights" | "cs2" | "equilibrium" | "collision" | "force" | "conserved" => {
                    body.parse::<Token![=]>()?;
                    let e: Expr = body.parse()?;
                    body.parse::<Token![;]>()?;
                    let slot = match k.as_str() {
                        "dim" => &mut decl.dim,
                        "weights" => &mut decl.weights,
                        "cs2" => &mut decl.cs2,
                        "equilibrium" => &mut decl.equilibrium,
                        "collision" => &mut decl.collision,
                        "conserved" => &mut decl.conserved,
                        _ => &mut decl.force,
                    };
                    *slot = Some(e);
                }
                _ => {
                    return Err(syn::Error::new(
                        key.span(),
                        format!("unknown item `{k}`: a model declares {ITEMS}"),
                    ))
                }
            }
        }
        Ok(decl)
    }
}

fn parse_velocities(input: ParseStream) -> syn::Result<VelocitiesDecl> {
    input.parse::<Token![=]>()?;
    let span = input.span();
    let shells = input.peek(Ident);
    if shells {
        let kw: Ident = input.parse()?;
        if kw != "shells" {
            return Err(syn::Error::new(
                kw.span(),
                "expected `[(x, y), …]` or `shells![(x, y), …]`",
            ));
        }
        input.parse::<Option<Token![!]>>()?;
    }
    let content;
    bracketed!(content in input);
    let vectors = content.parse_terminated(Expr::parse, Token![,])?;
    input.parse::<Token![;]>()?;
    Ok(VelocitiesDecl {
        shells,
        vectors: vectors.into_iter().collect(),
        span,
    })
}

fn parse_params(input: ParseStream) -> syn::Result<Vec<ParamDecl>> {
    let content;
    braced!(content in input);
    let mut out = Vec::new();
    while !content.is_empty() {
        let name: Ident = content.parse()?;
        content.parse::<Token![:]>()?;
        let ty: Ident = content.parse()?;
        if ty != "real" && ty != "field" {
            return Err(syn::Error::new(
                ty.span(),
                format!("parameter `{name}` has type `{ty}`: parameters are `real` (an f64 set at run time) or `field` (a value that may differ from site to site: set by the user or coupled from another lattice)"),
            ));
        }
        out.push(ParamDecl {
            field: ty == "field",
            name,
        });
        if !content.is_empty() {
            content.parse::<Token![,]>()?;
        }
    }
    Ok(out)
}

fn parse_moments(input: ParseStream) -> syn::Result<Vec<MomentDecl>> {
    let content;
    braced!(content in input);
    let mut out = Vec::new();
    while !content.is_empty() {
        let name: Ident = content.parse()?;
        let role = if content.peek(Token![:]) {
            content.parse::<Token![:]>()?;
            Some(content.parse()?)
        } else {
            None
        };
        content.parse::<Token![=]>()?;
        let value: Expr = content.parse()?;
        content.parse::<Token![;]>()?;
        out.push(MomentDecl { name, role, value });
    }
    Ok(out)
}
