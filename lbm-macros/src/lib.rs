//! The `lbm_model!` macro: a lattice Boltzmann model declared in a few lines, checked for
//! physical consistency at compile time, and compiled into CPU kernels and WGSL shaders; and
//! `fd_scheme!`, an explicit finite-difference scheme through the same pipeline ([`fd`]).
//!
//! Stages: [`parse`] the declaration → [`lattice`] checks of the velocity set and weights →
//! [`analysis`] of moments, equilibrium and collision as exact polynomials (isotropy and
//! conservation are proved there) → [`program`] builds the kernels as expression graphs
//! ([`ir`]) → [`emit`] writes Rust and WGSL ([`store_groups`]: the interior kernels' form of
//! the collision).
//!
//! These stages are private (a procedural-macro crate exports its macros only): read them with
//! `cargo doc -p lbm-macros --document-private-items`, where the links above resolve.
#![allow(rustdoc::private_intra_doc_links)]

mod algebra;
mod analysis;
mod emit;
mod expr;
mod fd;
mod ir;
mod lattice;
mod parse;
mod poly;
mod program;
mod store_groups;

use proc_macro::TokenStream;

/// Declares a lattice Boltzmann model; see the `lbm` crate's documentation for the grammar.
#[proc_macro]
pub fn lbm_model(input: TokenStream) -> TokenStream {
    let decl = syn::parse_macro_input!(input as parse::ModelDecl);
    expand(&decl)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

fn expand(decl: &parse::ModelDecl) -> syn::Result<proc_macro2::TokenStream> {
    let lattice = lattice::build(decl)?;
    let analysis = analysis::analyse(decl, lattice)?;
    emit::model(decl, &analysis)
}

/// Declares an explicit finite-difference scheme; see the `lbm` crate's documentation
/// (section "Finite differences") and the user guide for the grammar.
#[proc_macro]
pub fn fd_scheme(input: TokenStream) -> TokenStream {
    let decl = syn::parse_macro_input!(input as fd::SchemeDecl);
    fd::expand(&decl)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
