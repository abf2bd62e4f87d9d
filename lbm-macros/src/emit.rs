//! Emission of the model: the parameter struct, `impl ::lbm::Model`, and the WGSL functions,
//! validated with naga before the macro returns.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use syn::Error;

use crate::analysis::{Analysis, Collision};
use crate::ir::{emit, Rust, Wgsl};
use crate::parse::ModelDecl;
use crate::poly::to_f64;
use crate::program::{
    collide_program, equilibrium_program, force_program, moments_program, rates, Program,
};

/// Rust code of a program: the uniform preamble, then `body` around the per-site code.
pub(crate) fn rust(
    p: &Program,
    load: &dyn Fn(usize) -> TokenStream,
    param: &dyn Fn(usize) -> TokenStream,
    store: &dyn Fn(usize, TokenStream) -> TokenStream,
) -> (TokenStream, TokenStream) {
    let e = emit(&p.ir, &p.outputs, &Rust { load, param });
    let stores = p
        .outputs
        .iter()
        .enumerate()
        .map(|(k, &id)| store(k, name_of(id)));
    let pre = e.preamble;
    let body = e.body.into_iter().map(|l| l.code);
    (quote!(#(#pre)*), quote!(#(#body)* #(#stores)*))
}

/// The Rust name of node `id`'s value.
pub(crate) fn name_of(id: usize) -> TokenStream {
    let id = format_ident!("t{}", id);
    quote!(#id)
}

/// A parameter read from the uniform `prm` (a site's own parameters, fields included).
fn site_param(k: usize) -> TokenStream {
    quote!(prm[#k])
}

/// WGSL function `name(inp: array<real, NIN>, prm: array<real, NP>) -> array<real, NOUT>`.
pub(crate) fn wgsl_fn(name: &str, p: &Program, nin: usize, np: usize) -> String {
    let e = emit(&p.ir, &p.outputs, &Wgsl);
    let nout = p.outputs.len();
    let mut s = format!(
        "fn {name}(inp: array<real, {nin}>, prm: array<real, {np}>) -> array<real, {nout}> {{\n"
    );
    for line in e.preamble.iter().chain(e.body.iter().map(|l| &l.code)) {
        s.push_str(line);
        s.push('\n');
    }
    s.push_str(&format!("    var out: array<real, {nout}>;\n"));
    for (k, id) in p.outputs.iter().enumerate() {
        s.push_str(&format!("    out[{k}] = t{id};\n"));
    }
    s.push_str("    return out;\n}\n");
    s
}

/// Validates the model's WGSL with naga, in f32 and in f64 (SHADER_F64 adapters).
pub(crate) fn validate_wgsl(src: &str, span: Span) -> syn::Result<()> {
    for (real, caps) in [
        ("f32", naga::valid::Capabilities::empty()),
        ("f64", naga::valid::Capabilities::FLOAT64),
    ] {
        let full = format!("alias real = {real};\n{src}");
        let module = naga::front::wgsl::parse_str(&full).map_err(|e| {
            Error::new(
                span,
                format!(
                    "generated WGSL ({real}) does not parse: {}",
                    e.emit_to_string(&full)
                ),
            )
        })?;
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), caps)
            .validate(&module)
            .map_err(|e| {
                Error::new(
                    span,
                    format!(
                        "generated WGSL ({real}) fails naga validation: {}",
                        e.emit_to_string(&full)
                    ),
                )
            })?;
    }
    Ok(())
}

fn f64_lits(xs: impl Iterator<Item = f64>) -> Vec<proc_macro2::Literal> {
    xs.map(proc_macro2::Literal::f64_suffixed).collect()
}

/// The whole expansion of a checked model.
pub fn model(decl: &ModelDecl, an: &Analysis) -> syn::Result<TokenStream> {
    let span = decl.name.span();
    let name = &decl.name;
    let vis = &decl.vis;
    let attrs = &decl.attrs;
    let params_ty = format_ident!("{}Params", name);
    let l = &an.lattice;
    let nq = l.c.len();
    let np = an.params.len();
    let nm: usize = an.moments.iter().map(|m| m.vars.len()).sum();

    let moments = moments_program(an)?;
    let equilibrium = equilibrium_program(an, span)?;
    let plain = collide_program(an, false, span)?;
    let forced = an
        .force
        .as_ref()
        .map(|_| collide_program(an, true, span))
        .transpose()?;
    let force = force_program(an)?;
    let (rate_prog, rate_labels) = rates(an)?;

    let flops = plain.ir.flops(&plain.outputs);
    let flops_forced = forced.as_ref().map_or(flops, |p| p.ir.flops(&p.outputs));

    let pnames: Vec<syn::Ident> = an.params.iter().map(|p| format_ident!("{}", p)).collect();
    let pstrs = &an.params;
    let pidx: Vec<usize> = (0..np).collect();
    let prm_init = quote!(let prm: [T; #np] = [#(<T as ::lbm::Real>::from_f64(params.#pnames)),*]; let _ = &prm;);
    // Field parameters: their indices among the parameters, and their slot among the fields.
    let field_params: Vec<usize> = (0..np).filter(|&k| an.fields[k]).collect();
    let nf = field_params.len();
    let field_slot = |k: usize| field_params.iter().position(|&p| p == k);
    let lane_param = |k: usize| match field_slot(k) {
        Some(j) => quote!(fl[#j][l]),
        None => quote!(prm[#k]),
    };
    let field_names: Vec<&String> = field_params.iter().map(|&k| &an.params[k]).collect();
    let field_pnames: Vec<&syn::Ident> = field_params.iter().map(|&k| &pnames[k]).collect();
    let field_idx: Vec<usize> = (0..nf).collect();
    let fields_init = quote! {
        let fl: [[T; VL]; #nf] = match fields {
            Some(v) => v.try_into().expect("collide_cluster: one lane vector per field"),
            None => [#([prm[#field_params]; VL]),*],
        };
        let _ = &fl;
    };

    // --- Rust ---
    let idx = |k: usize| quote!(#k);
    let site_load = |k: usize| {
        let k = idx(k);
        quote!(f[#k])
    };
    let site_store = |k: usize, v: TokenStream| quote!(f[#k] = #v;);
    let lane_load = |k: usize| quote!(f[#k][l]);
    let lane_store = |k: usize, v: TokenStream| quote!(f[#k][l] = #v;);
    let collide_variant = |p: &Program, form: Form| -> TokenStream {
        match form {
            Form::Cluster => {
                let (pre, body) = rust(p, &lane_load, &lane_param, &lane_store);
                quote!({ #pre for l in 0..VL { #body } })
            }
            Form::Site => {
                let (pre, body) = rust(p, &site_load, &site_param, &site_store);
                quote!({ #pre #body })
            }
            Form::Access => {
                crate::store_groups::collide_stored_in_groups(p, &lane_load, &lane_param)
            }
        }
    };
    // A force of field parameters varies from site to site: its branch is always taken.
    let force_varies = force
        .as_ref()
        .is_some_and(|fo| fo.outputs.iter().any(|&o| !fo.ir.is_uniform(o)));
    let dispatch = |form: Form| -> TokenStream {
        let plain_code = collide_variant(&plain, form);
        match (&forced, &force) {
            (Some(fp), Some(_)) if force_varies => collide_variant(fp, form),
            (Some(fp), Some(force)) => {
                let forced_code = collide_variant(fp, form);
                let (pre, _) = rust(force, &site_load, &site_param, &|_, _| quote!());
                let a: Vec<TokenStream> = force.outputs.iter().map(|&o| name_of(o)).collect();
                quote! {
                    let zero = <T as ::lbm::Real>::from_f64(0.0);
                    let forced = { #pre #(#a != zero)||* };
                    if forced #forced_code else #plain_code
                }
            }
            _ => plain_code,
        }
    };
    let acceleration = force.as_ref().map(|fo| {
        let (pre, body) = rust(fo, &site_load, &site_param, &|_, _| quote!());
        let mut a: Vec<TokenStream> = fo.outputs.iter().map(|&o| name_of(o)).collect();
        a.resize(3, quote!(0.0));
        let force_on = force_varies.then(|| {
            quote! {
                fn force_on(params: &Self::Params) -> bool {
                    true
                }
            }
        });
        quote! {
            fn acceleration(params: &Self::Params) -> [f64; 3] {
                type T = f64;
                let prm: [f64; #np] = [#(params.#pnames),*];
                #pre
                #body
                [#(#a),*]
            }
            #force_on
        }
    });
    let collide_site = dispatch(Form::Site);
    let collide_cluster = dispatch(Form::Cluster);
    let collide_access = dispatch(Form::Access);
    let pops: Vec<usize> = (0..nq).collect();
    let (mom_pre, mom_body) = rust(
        &moments,
        &site_load,
        &site_param,
        &|k, v| quote!(m[#k] = #v;),
    );
    let (eq_pre, eq_body) = rust(
        &equilibrium,
        &|k| quote!(m[#k]),
        &site_param,
        &site_store_feq,
    );
    let (rate_pre, rate_body) = rust(&rate_prog, &site_load, &site_param, &|_, _| quote!());
    let rate_names: Vec<TokenStream> = rate_prog.outputs.iter().map(|&id| name_of(id)).collect();
    let rate_labels_lit = &rate_labels;

    let velocities = l.c.iter().map(|c| {
        let (x, y, z) = (c[0], c[1], c[2]);
        quote!([#x, #y, #z])
    });
    let dim = l.dim;
    let lattice_name = format!("D{dim}Q{nq}");
    let weights = f64_lits(l.w.iter().map(to_f64));
    let opposite = &l.opposite;
    let halo = l.halo;
    let cs2 = proc_macro2::Literal::f64_suffixed(to_f64(&l.cs2));
    let moment_names: Vec<String> = an
        .moments
        .iter()
        .flat_map(|m| m.vars.iter().map(|&v| an.var_names[v].clone()))
        .collect();
    let moment_roles: Vec<TokenStream> = an
        .moments
        .iter()
        .flat_map(|m| (0..m.vars.len()).map(|a| m.role.runtime(a)))
        .collect();
    let eq_order = an.eq_order;
    let iso = l.isotropy;
    let model_name = name.to_string();
    let description = describe(an);
    let doc = format!(
        "Model `{model_name}` (generated by `lbm_model!`): {lattice_name}, {description}. Isotropic through order {iso}; collide costs {flops} flops per site ({flops_forced} with the force on). Weights: {}.",
        l.w.iter().map(|w| format!("{:.6e}", to_f64(w))).collect::<Vec<_>>().join(", ")
    );
    let params_doc = format!(
        "Run-time parameters of [`{model_name}`], in declaration order: {}.",
        an.params.join(", ")
    );

    // --- WGSL ---
    let npw = np.max(1);
    let mut wgsl =
        format!("// Model {model_name}: {lattice_name}, {description}. Generated by lbm_model!.\n");
    wgsl += &wgsl_fn("lbm_moments", &moments, nq, npw);
    wgsl += &wgsl_fn("lbm_equilibrium", &equilibrium, nm, npw);
    wgsl += &wgsl_fn("lbm_collide_plain", &plain, nq, npw);
    match (&forced, &force) {
        (Some(fp), Some(fo)) => {
            wgsl += &wgsl_fn("lbm_collide_forced", fp, nq, npw);
            wgsl += &wgsl_fn("lbm_force", fo, nq, npw);
            let on = (0..dim).map(|a| format!("a[{a}] != real(0.0)")).collect::<Vec<_>>().join(" || ");
            wgsl += &format!("fn lbm_collide(inp: array<real, {nq}>, prm: array<real, {npw}>) -> array<real, {nq}> {{\n    let a = lbm_force(inp, prm);\n    if ({on}) {{ return lbm_collide_forced(inp, prm); }}\n    return lbm_collide_plain(inp, prm);\n}}\n");
        }
        _ => wgsl += &format!("fn lbm_collide(inp: array<real, {nq}>, prm: array<real, {npw}>) -> array<real, {nq}> {{\n    return lbm_collide_plain(inp, prm);\n}}\n"),
    }
    validate_wgsl(&wgsl, span)?;

    Ok(quote! {
        #(#attrs)*
        #[doc = #doc]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
        #vis struct #name;

        #[doc = #params_doc]
        #[derive(Clone, Copy, Debug, PartialEq)]
        #vis struct #params_ty {
            #(#[doc = concat!("Parameter `", #pstrs, "`.")] pub #pnames: f64,)*
        }

        #[allow(clippy::all, clippy::pedantic, clippy::nursery, unused_variables, unused_mut)]
        impl ::lbm::Model for #name {
            const NAME: &'static str = #model_name;
            const D: usize = #dim;
            const Q: usize = #nq;
            const VELOCITIES: &'static [[i32; 3]] = &[#(#velocities),*];
            const WEIGHTS: &'static [f64] = &[#(#weights),*];
            const OPPOSITE: &'static [usize] = &[#(#opposite),*];
            const HALO: usize = #halo;
            const CS2: f64 = #cs2;
            const MOMENT_NAMES: &'static [&'static str] = &[#(#moment_names),*];
            const MOMENT_ROLES: &'static [::lbm::Role] = &[#(#moment_roles),*];
            const EQUILIBRIUM_ORDER: u32 = #eq_order;
            const ISOTROPY_ORDER: u32 = #iso;
            const COLLIDE_FLOPS: u64 = #flops;
            const COLLIDE_FLOPS_FORCED: u64 = #flops_forced;
            const DESCRIPTION: &'static str = #description;
            const WGSL: &'static str = #wgsl;
            const FIELDS: &'static [&'static str] = &[#(#field_names),*];
            const FIELD_PARAMS: &'static [usize] = &[#(#field_params),*];
            type Params = #params_ty;

            fn validate(params: &Self::Params) -> ::core::result::Result<(), ::lbm::ParamError> {
                #(
                    if !params.#pnames.is_finite() {
                        return Err(::lbm::ParamError { model: #model_name, name: #pstrs.into(), value: params.#pnames, reason: "parameters must be finite numbers".into() });
                    }
                )*
                type T = f64;
                let prm: [f64; #np] = [#(params.#pnames),*];
                let _ = &prm;
                #rate_pre
                #rate_body
                let rates: &[(&str, f64)] = &[#((#rate_labels_lit, #rate_names)),*];
                for &(label, omega) in rates {
                    if !(omega > 0.0 && omega < 2.0) {
                        return Err(::lbm::ParamError {
                            model: #model_name,
                            name: label.into(),
                            value: omega,
                            reason: format!("the relaxation rate must lie in (0, 2), i.e. the relaxation time τ = 1/ω must exceed 1/2 (here τ = {}); otherwise the viscosity cs²(τ − ½) is not positive and the run diverges: raise τ", 1.0 / omega),
                        });
                    }
                }
                Ok(())
            }

            #acceleration

            fn param_values(params: &Self::Params) -> ::std::vec::Vec<(&'static str, f64)> {
                ::std::vec![#((#pstrs, params.#pnames)),*]
            }

            fn params_from_values(values: &[f64]) -> ::core::option::Option<Self::Params> {
                if values.len() != #np {
                    return None;
                }
                Some(#params_ty { #(#pnames: values[#pidx]),* })
            }

            #[inline]
            fn moments<T: ::lbm::Real>(f: &[T], params: &Self::Params, m: &mut [T]) {
                #prm_init
                let f: &[T; #nq] = f.try_into().expect("moments: a site has Q populations");
                let m: &mut [T; #nm] = m.try_into().expect("moments: the output holds one value per moment");
                #mom_pre
                #mom_body
            }

            #[inline]
            fn equilibrium<T: ::lbm::Real>(m: &[T], params: &Self::Params, f: &mut [T]) {
                #prm_init
                let m: &[T; #nm] = m.try_into().expect("equilibrium: one value per moment");
                let f: &mut [T; #nq] = f.try_into().expect("equilibrium: the output holds Q populations");
                #eq_pre
                #eq_body
            }

            #[inline]
            fn collide<T: ::lbm::Real>(f: &mut [T], params: &Self::Params) {
                #prm_init
                let f: &mut [T; #nq] = f.try_into().expect("collide: a site has Q populations");
                #collide_site
            }

            #[inline]
            fn with_fields(params: &Self::Params, values: &[f64]) -> Self::Params {
                let mut p = *params;
                #(p.#field_pnames = values[#field_idx];)*
                p
            }

            #[inline]
            fn collide_cluster<T: ::lbm::Real, const VL: usize>(f: &mut [[T; VL]], params: &Self::Params, fields: ::core::option::Option<&[[T; VL]]>) {
                #prm_init
                #fields_init
                let f: &mut [[T; VL]; #nq] = f.try_into().expect("collide_cluster: a cluster has Q population vectors");
                #collide_cluster
            }

            #[inline(always)]
            fn collide_access<T: ::lbm::Real, const VL: usize, A: ::lbm::ClusterAccess<T, VL>>(a: &mut A, params: &Self::Params, fields: ::core::option::Option<&[[T; VL]]>) {
                #prm_init
                #fields_init
                let f: [[T; VL]; #nq] = [#(a.load(#pops)),*];
                #collide_access
            }
        }
    })
}

/// The forms of the generated collision: one site's populations in `f[k]`; a cluster's lanes
/// in `f[k][l]`, collided in place; a cluster's lanes loaded through a `ClusterAccess` and
/// stored through it ([`crate::store_groups`]).
#[derive(Clone, Copy)]
enum Form {
    Site,
    Cluster,
    Access,
}

fn site_store_feq(k: usize, v: TokenStream) -> TokenStream {
    quote!(f[#k] = #v;)
}

/// One line for docs and `lbm models`: equilibrium, collision, forcing.
fn describe(an: &Analysis) -> String {
    use crate::analysis::Role;
    let conserved: Vec<&str> = an
        .moments
        .iter()
        .filter(|m| m.conserved)
        .map(|m| m.name.as_str())
        .collect();
    let kind = if an.moment(Role::Velocity).is_none() {
        format!("transport of {} (conserved alone)", conserved.join(", "))
    } else if an.moment(Role::Temperature).is_some() {
        "thermal".to_string()
    } else {
        "isothermal".to_string()
    };
    let collision = match &an.collision {
        Collision::Bgk { .. } => "BGK",
        Collision::Trt { .. } => "TRT",
        Collision::Mrt { shift: None, .. } => "MRT",
        Collision::Mrt { shift: Some(_), .. } => "central-moment MRT",
        Collision::Regularized { .. } => "regularized BGK",
    };
    let force = if an.force.is_some() {
        ", body force by the exact-difference method"
    } else {
        ""
    };
    let local = if an.collision.state_dependent(&an.moments, &an.var_names) {
        " with rates from the local state"
    } else {
        ""
    };
    let fields: Vec<&str> = an
        .params
        .iter()
        .zip(&an.fields)
        .filter(|(_, f)| **f)
        .map(|(p, _)| p.as_str())
        .collect();
    let fields = if fields.is_empty() {
        String::new()
    } else {
        format!(", per-site fields {}", fields.join(", "))
    };
    format!(
        "{kind}, equilibrium of order {}, {collision} collision{local}{force}{fields}",
        an.eq_order
    )
}
