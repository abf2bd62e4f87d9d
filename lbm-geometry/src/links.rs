//! A body on a lattice: its solid sites, and the links it cuts — from a fluid site to a solid
//! neighbour — with the wall's distance along each, what interpolated bounce-back needs
//! (Bouzidi, Firdaouss & Lallemand 2001).

use std::ops::Range;

use rayon::prelude::*;

use crate::Body;

/// A link from the fluid site `site` along velocity `i` whose far end is solid; the wall
/// crosses it at `site + q c_i`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CutLink {
    /// The fluid site, global `[x, y, z]`.
    pub site: [usize; 3],
    /// The velocity's index in the model's list.
    pub i: usize,
    /// The wall's distance along the link as a share of its length, in `(0, 1]`.
    pub q: f64,
}

/// The links a body cuts on a lattice's planes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cuts {
    /// By site (x, then z, then y), then velocity.
    pub links: Vec<CutLink>,
    /// Links whose far end is inside but whose segment the surface was not found to cross
    /// (a mesh's inside test and its crossing test disagreeing at a grazing edge): given
    /// `q = ½`, half-way bounce-back's wall. Zero for the analytic shapes.
    pub unresolved: usize,
}

impl Body {
    /// Whether site `[x, y, z]` is solid (its point inside the body or on its surface).
    pub fn solid(&self, [x, y, z]: [usize; 3]) -> bool {
        self.contains([x as f64, y as f64, z as f64])
    }

    /// The solid sites of the planes `xs` of a lattice of `size = [lx, ly, lz]` sites, in
    /// the order of a lattice's mask, `[((x − xs.start)·LZ + z)·LY + y]`; the planes in
    /// parallel (a rank asks for its own).
    pub fn voxelize(&self, size: [usize; 3], xs: Range<usize>) -> Vec<bool> {
        let [_, ly, lz] = size;
        let mut mask = vec![false; xs.len() * ly * lz];
        mask.par_chunks_mut((ly * lz).max(1))
            .zip(xs)
            .for_each(|(plane, x)| {
                for z in 0..lz {
                    for y in 0..ly {
                        plane[z * ly + y] = self.solid([x, y, z]);
                    }
                }
            });
        mask
    }

    /// The links of the fluid sites of the planes `xs` of a lattice of `size` sites whose far
    /// end (along one of `velocities`, `c_i`) is a solid site, with the wall's distance from
    /// the exact shape; the planes in parallel. Along an axis that is `periodic` a link leaving
    /// the lattice wraps around to the far side (its wall is looked for where the link
    /// points, outside the lattice: a body meant to be cut by the edge must reach across it);
    /// along the others it ends at the edge.
    pub fn cut_links(
        &self,
        velocities: &[[i32; 3]],
        size: [usize; 3],
        periodic: [bool; 3],
        xs: Range<usize>,
    ) -> Cuts {
        let [lx, ly, lz] = size;
        let planes: Vec<Cuts> = xs
            .into_par_iter()
            .map(|x| {
                let mut cuts = Cuts::default();
                for z in 0..lz {
                    for y in 0..ly {
                        let site = [x, y, z];
                        if self.solid(site) {
                            continue;
                        }
                        for (i, c) in velocities.iter().enumerate() {
                            let to: [i64; 3] =
                                std::array::from_fn(|a| site[a] as i64 + c[a] as i64);
                            let wrapped: [Option<usize>; 3] = std::array::from_fn(|a| {
                                let n = [lx, ly, lz][a] as i64;
                                match to[a] {
                                    v if (0..n).contains(&v) => Some(v as usize),
                                    v if periodic[a] => Some(v.rem_euclid(n) as usize),
                                    _ => None,
                                }
                            });
                            let [Some(fx), Some(fy), Some(fz)] = wrapped else {
                                continue;
                            };
                            if *c == [0; 3] || !self.solid([fx, fy, fz]) {
                                continue;
                            }
                            let from = site.map(|v| v as f64);
                            let to = to.map(|v| v as f64);
                            let q = match self.entry(from, to) {
                                Some(t) if t > 0.0 => t,
                                _ => {
                                    cuts.unresolved += 1;
                                    0.5
                                }
                            };
                            cuts.links.push(CutLink { site, i, q });
                        }
                    }
                }
                cuts
            })
            .collect();
        planes.into_iter().fold(Cuts::default(), |mut all, p| {
            all.links.extend(p.links);
            all.unresolved += p.unresolved;
            all
        })
    }
}
