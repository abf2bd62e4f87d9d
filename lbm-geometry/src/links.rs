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
            .for_each(|(plane, x)| self.plane(x, [ly, lz], plane));
        mask
    }

    /// The solid sites of plane `x`, `[z·LY + y]`.
    fn plane(&self, x: usize, [ly, lz]: [usize; 2], plane: &mut [bool]) {
        for z in 0..lz {
            for y in 0..ly {
                plane[z * ly + y] = self.solid([x, y, z]);
            }
        }
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
        let [_, ly, lz] = size;
        let wrap = |a: usize, v: i64| -> Option<usize> {
            let n = size[a] as i64;
            match v {
                v if (0..n).contains(&v) => Some(v as usize),
                v if periodic[a] => Some(v.rem_euclid(n) as usize),
                _ => None,
            }
        };
        // The solid sites of the planes the links read, voxelised once: `xs` widened by the
        // velocities' reach along x (wrapped where x is periodic; `None` beyond an edge).
        let reach = velocities
            .iter()
            .map(|c| c[0].unsigned_abs() as i64)
            .max()
            .unwrap_or(0);
        let first = xs.start as i64 - reach;
        let mask: Vec<Option<Vec<bool>>> = (first..xs.end as i64 + reach)
            .into_par_iter()
            .map(|x| {
                wrap(0, x).map(|x| {
                    let mut plane = vec![false; ly * lz];
                    self.plane(x, [ly, lz], &mut plane);
                    plane
                })
            })
            .collect();
        let solid = |x: i64, y: usize, z: usize| {
            mask[(x - first) as usize]
                .as_ref()
                .is_some_and(|plane| plane[z * ly + y])
        };
        let planes: Vec<Cuts> = xs
            .into_par_iter()
            .map(|x| {
                let mut cuts = Cuts::default();
                for z in 0..lz {
                    for y in 0..ly {
                        let site = [x, y, z];
                        if solid(x as i64, y, z) {
                            continue;
                        }
                        for (i, c) in velocities.iter().enumerate() {
                            let to: [i64; 3] =
                                std::array::from_fn(|a| site[a] as i64 + c[a] as i64);
                            let (Some(_), Some(fy), Some(fz)) =
                                (wrap(0, to[0]), wrap(1, to[1]), wrap(2, to[2]))
                            else {
                                continue;
                            };
                            if *c == [0; 3] || !solid(to[0], fy, fz) {
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
