//! The collision of a cluster through a `ClusterAccess` (the CPU kernels' interior path), its
//! `Q` results stored in groups as soon as each group is computed.
//!
//! The cluster forms of the collision are lane loops, `for l in 0..VL { … }`, that LLVM turns
//! into one pass of vector instructions. In one loop, every result is stored after the last
//! one is computed: a large model's cluster ends in a burst of `Q` stores with no arithmetic
//! left to overlap them (non-temporal stores to memory above all), and all `Q` results are
//! live, and spilled, until then. Here the body is cut into loops:
//!
//! 1. the *shared* nodes, read by more than one group, each kept in a lane array `s<id>`;
//! 2. per group of about [`STORE_GROUP`] consecutive populations, the nodes only it reads and
//!    its results, in lane arrays `o<m>`, stored through the accessor after its loop, while
//!    the next group computes.
//!
//! Inputs (and per-site fields) are read again from the loaded lanes `f` where a loop needs them.
//! The lines and their arithmetic (fused multiply-adds included) are those of the single loop, so
//! the results are bitwise the same (`lbm-validation/tests/physics/model_reference.rs`). Each kept
//! value has an array of its own: LLVM's loop vectorizer gave up on a shared loop that wrote
//! hundreds of rows of one array (D2Q37: its dependence analysis of one object has a limit).
//!
//! Measured on two Zen 4 cores (D2Q37 f64 CAoSoA⟨8⟩ 1024×2048, a scratch binary timing the
//! steps of `Lattice`, alternated; MLUPS, one loop → groups of 8): the fused two-copy step
//! 24.8–26.8 → 33.4–34.4 and the in-place step 31.0–33.9 → 37.0–39.0 in one memory state,
//! two-copy 33.5–36.1 → 39.4–41.7 in another; one group alone (the results in arrays of their
//! own, still stored at the end) left D2Q37 where it was, and moved D3Q19 f64 192³ two-copy
//! from 79–81 to 124–151.

use std::collections::{HashMap, HashSet};

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::emit::name_of;
use crate::ir::{emit, Id, Line, Rust};
use crate::program::Program;

/// About how many post-collision populations a group holds.
const STORE_GROUP: usize = 8;

/// Where the lines of a program's body go: the shared ones, then each group's own.
struct Partition {
    /// The groups' output indices (`0..Q`, consecutive).
    groups: Vec<Vec<usize>>,
    /// The non-input lines read by more than one group, in body order.
    shared: Vec<Id>,
    /// Per group, the non-input lines only it reads, in body order.
    own: Vec<Vec<Id>>,
}

/// Splits a body of `lines` computing `outputs` into about `q / size` groups of consecutive
/// outputs. A line's groups are those whose outputs it reaches (one bit per group, at most
/// 64 groups); lines that read nothing (inputs, per-site fields) belong to no loop.
fn partition<C>(lines: &[Line<C>], outputs: &[Id], size: usize, nodes: usize) -> Partition {
    let q = outputs.len();
    let n = q.div_ceil(size).clamp(1, 64);
    let group_of = |k: usize| k * n / q.max(1);
    let mut reach = vec![0u64; nodes];
    for (k, &o) in outputs.iter().enumerate() {
        reach[o] |= 1 << group_of(k);
    }
    for line in lines.iter().rev() {
        for &r in &line.reads {
            reach[r] |= reach[line.id];
        }
    }
    let computed = lines.iter().filter(|l| !l.reads.is_empty());
    Partition {
        groups: (0..n)
            .map(|g| (0..q).filter(|&k| group_of(k) == g).collect())
            .collect(),
        shared: computed
            .clone()
            .filter(|l| reach[l.id].count_ones() > 1)
            .map(|l| l.id)
            .collect(),
        own: (0..n)
            .map(|g| {
                let g = computed.clone().filter(|l| reach[l.id] == 1 << g);
                g.map(|l| l.id).collect()
            })
            .collect(),
    }
}

/// The lane array that keeps shared node `id` between the loops.
fn kept(id: Id) -> TokenStream {
    let id = format_ident!("s{}", id);
    quote!(#id)
}

/// Rust code of program `p` as a collision through the accessor `a`: the lanes of input `k`
/// read as `load(k)` (from the loaded `f`), parameter `k` as `param(k)`; see the module doc.
pub(crate) fn collide_stored_in_groups(
    p: &Program,
    load: &dyn Fn(usize) -> TokenStream,
    param: &dyn Fn(usize) -> TokenStream,
) -> TokenStream {
    let e = emit(&p.ir, &p.outputs, &Rust { load, param });
    let part = partition(&e.body, &p.outputs, STORE_GROUP, p.ir.nodes.len());
    let line: HashMap<Id, &Line<TokenStream>> = e.body.iter().map(|l| (l.id, l)).collect();
    let shared: HashSet<Id> = part.shared.iter().copied().collect();
    // What a loop binds before its own lines: the inputs and shared values that they (or its
    // `results`) read.
    let binds = |own: &[Id], results: &[Id]| -> Vec<TokenStream> {
        let own: HashSet<Id> = own.iter().copied().collect();
        let mut needed: Vec<Id> = own
            .iter()
            .flat_map(|id| line[id].reads.iter().copied())
            .chain(results.iter().copied())
            .filter(|id| !own.contains(id) && line.contains_key(id))
            .collect();
        needed.sort_unstable();
        needed.dedup();
        needed
            .into_iter()
            .map(|id| {
                if shared.contains(&id) {
                    let (t, s) = (name_of(id), kept(id));
                    quote!(let #t: T = #s[l];)
                } else {
                    line[&id].code.clone()
                }
            })
            .collect()
    };
    let shared_binds = binds(&part.shared, &[]);
    let shared_lines = part.shared.iter().map(|&id| {
        let (code, t, s) = (&line[&id].code, name_of(id), kept(id));
        quote!(#code #s[l] = #t;)
    });
    let shared_kept = part.shared.iter().map(|&id| kept(id));
    let groups = part.groups.iter().zip(&part.own).map(|(ks, own)| {
        let results: Vec<Id> = ks.iter().map(|&k| p.outputs[k]).collect();
        let o: Vec<syn::Ident> = (0..ks.len()).map(|m| format_ident!("o{}", m)).collect();
        let binds = binds(own, &results);
        // Each result is kept as soon as it is computed; those the group does not compute
        // (inputs, shared or uniform values), after its lines.
        let keep = |id: Id| {
            let os = results.iter().zip(&o).filter(move |(&r, _)| r == id);
            let os = os.map(|(_, o)| o);
            let t = name_of(id);
            quote!(#(#os[l] = #t;)*)
        };
        let lines = own.iter().map(|id| {
            let (code, kept) = (&line[id].code, keep(*id));
            quote!(#code #kept)
        });
        let late = results.iter().zip(&o).filter(|(r, _)| !own.contains(r));
        let late = late.map(|(&r, o)| {
            let t = name_of(r);
            quote!(#o[l] = #t;)
        });
        quote! {{
            #(let mut #o = [T::default(); VL];)*
            for l in 0..VL {
                #(#binds)*
                #(#lines)*
                #(#late)*
            }
            #(a.store(#ks, #o);)*
        }}
    });
    let pre = &e.preamble;
    quote! {{
        #(#pre)*
        #(let mut #shared_kept = [T::default(); VL];)*
        for l in 0..VL {
            #(#shared_binds)*
            #(#shared_lines)*
        }
        #(#groups)*
    }}
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: Id, reads: &[Id]) -> Line<()> {
        Line {
            id,
            reads: reads.to_vec(),
            code: (),
        }
    }

    /// Inputs 0–2; 3 = 0·1 read by both groups; 4 = 3 + 2 and 5 = 3 − 0 the first group's
    /// outputs; 6 = 3·2 the second group's, with input 1 itself.
    #[test]
    fn lines_go_to_the_groups_that_read_them() {
        let lines = [
            line(0, &[]),
            line(1, &[]),
            line(2, &[]),
            line(3, &[0, 1]),
            line(4, &[3, 2]),
            line(5, &[3, 0]),
            line(6, &[3, 2]),
        ];
        let p = partition(&lines, &[4, 5, 6, 1], 2, 7);
        assert_eq!(p.groups, [vec![0, 1], vec![2, 3]]);
        assert_eq!(p.shared, [3]);
        assert_eq!(p.own, [vec![4, 5], vec![6]]);
    }

    /// Fewer outputs than a group: one group, nothing shared; more than 64 groups' worth:
    /// 64 groups of consecutive outputs.
    #[test]
    fn groups_are_consecutive_and_at_most_64() {
        let lines: Vec<Line<()>> = (0..200).map(|i| line(i, &[])).collect();
        let outs: Vec<Id> = (0..3).collect();
        let p = partition(&lines, &outs, 8, 200);
        assert_eq!(p.groups, [vec![0, 1, 2]]);
        assert!(p.shared.is_empty());
        let outs: Vec<Id> = (0..200).collect();
        let p = partition(&lines, &outs, 1, 200);
        assert_eq!(p.groups.len(), 64);
        let flat: Vec<usize> = p.groups.concat();
        assert_eq!(flat, outs);
    }
}
