//! The macroscopic fields of a lattice — or of the piece of it that one process holds — at
//! one step, and the fields derived from them.

use std::ops::Range;

use super::OutputError;
use crate::{LbmError, Model};

/// The moment fields after `step` steps of a box of sites of an `lx × ly` (× `lz`) lattice
/// — all of it, a rank's whole columns, or a block — with the model's `cs²`, each indexed
/// `[(x − x0)·P + (z − z0)·ny + y − y0]` for the box `[x0.., y0.. (ny sites), z0..]` of `P`
/// sites a column: for whole columns `[(x − x0)·LY·LZ + z·LY + y]`, the order of
/// [`crate::Lattice::moment_field`]. Slices, samples and the neighbours' columns take whole
/// columns (the pieces the driver reads its diagnostics and images from); a block's piece is
/// written as it is (VTK).
#[derive(Debug, Clone, PartialEq)]
pub struct Fields {
    /// Lattice width.
    pub lx: usize,
    /// Lattice height.
    pub ly: usize,
    /// Lattice depth (1 in 2-D).
    pub lz: usize,
    /// Steps done.
    pub step: u64,
    /// The model's squared sound speed.
    pub cs2: f64,
    /// The sites held: the columns `cells[0]` and, across them, the rows `cells[1]` and the
    /// layers `cells[2]` (`0..LY`, `0..LZ` for whole columns).
    cells: [Range<usize>; 3],
    /// The distance between neighbouring values: 1 on a lattice (in lattice units), `k` on a
    /// lattice sampled every `k` sites (whose derivatives are then per site of the lattice),
    /// `h` on a finite-difference grid ([`Fields::with_spacing`]).
    spacing: f64,
    names: Vec<&'static str>,
    data: Vec<Vec<f64>>,
    /// The moments of the columns beside the piece, `[before, after]` (wrapping around the
    /// lattice), when [`Fields::with_neighbours`] gave them.
    neighbours: Option<[Vec<Vec<f64>>; 2]>,
}

/// Names of the derived fields, besides the model's moments.
pub const DERIVED: [&str; 2] = ["speed", "vorticity"];

impl Fields {
    /// Collects every moment of model `M` with `field(name)`, e.g. a lattice's
    /// `moment_field`.
    pub fn collect<M: Model, E>(
        (lx, ly): (usize, usize),
        step: u64,
        mut field: impl FnMut(&str) -> Result<Vec<f64>, E>,
    ) -> Result<Self, E> {
        let data = M::MOMENT_NAMES
            .iter()
            .map(|n| field(n))
            .collect::<Result<Vec<_>, E>>()?;
        Ok(Self {
            lx,
            ly,
            lz: 1,
            step,
            cs2: M::CS2,
            cells: [0..lx, 0..ly, 0..1],
            spacing: 1.0,
            names: M::MOMENT_NAMES.to_vec(),
            data,
            neighbours: None,
        })
    }

    /// The moments of model `M` (order of `M::MOMENT_NAMES`, as
    /// [`crate::Solver::local_moments`] gives them) of the box of sites `cells` (`[xs, ys,
    /// zs]`, whole columns or a block) of a lattice of `[LX, LY, LZ]` sites (`LZ = 1` in 2-D).
    pub fn piece<M: Model>(
        [lx, ly, lz]: [usize; 3],
        cells: [Range<usize>; 3],
        step: u64,
        data: Vec<Vec<f64>>,
    ) -> Result<Self, LbmError> {
        let n: usize = cells.iter().map(Range::len).product();
        let inside = cells.iter().zip([lx, ly, lz]).all(|(r, l)| r.end <= l);
        if !inside || data.len() != M::MOMENT_NAMES.len() || data.iter().any(|d| d.len() != n) {
            return Err(LbmError::Shape(format!(
                "a piece of the sites {cells:?} of {} needs {} fields of {n} values",
                M::NAME,
                M::MOMENT_NAMES.len()
            )));
        }
        Ok(Self {
            lx,
            ly,
            lz,
            step,
            cs2: M::CS2,
            cells,
            spacing: 1.0,
            names: M::MOMENT_NAMES.to_vec(),
            data,
            neighbours: None,
        })
    }

    /// The columns held: `0..lx` for a whole lattice.
    pub fn planes(&self) -> Range<usize> {
        self.cells[0].clone()
    }

    /// The box of sites held, `[xs, ys, zs]`.
    pub fn cells(&self) -> &[Range<usize>; 3] {
        &self.cells
    }

    /// Sites held per column (plane in 3-D): `LY·LZ` for whole columns.
    pub fn plane(&self) -> usize {
        self.cells[1].len() * self.cells[2].len()
    }

    /// Number of sites held.
    pub fn len(&self) -> usize {
        self.cells[0].len() * self.plane()
    }

    /// Whether no site is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The global site `(x, y)` of the value at index `s` of a field (in 3-D `y` is the plane
    /// site `z·LY + y`).
    pub fn site(&self, s: usize) -> (usize, usize) {
        let ([xs, ys, zs], plane) = (&self.cells, self.plane());
        let (r, ny) = (s % plane, ys.len());
        let across = (zs.start + r / ny) * self.ly + ys.start + r % ny;
        (xs.start + s / plane, across)
    }

    /// The plane `axis = at` (axis 0, 1, 2: x, y, z) of 3-D fields, for the columns held, as
    /// 2-D fields whose first axis is drawn to the right and second up: `(x, y)` for a plane
    /// of constant z, `(x, z)` for y, `(y, z)` for x. The velocity is renamed to the picture's
    /// axes (`ux`, `uy` in it, `uz` normal to it), so the derived vorticity is the component
    /// normal to the picture, positive counter-clockwise in it (`ω_z`, `−ω_y`, `ω_x`). A plane
    /// of constant x lies in one piece: the others give an empty piece, and the pieces
    /// concatenated in column order are the whole plane.
    pub fn slice(&self, axis: usize, at: usize) -> Self {
        let (ly, lz, plane) = (self.ly, self.lz, self.plane());
        // The picture's sides, the piece's columns of it and the site of its pixel (i, j).
        let (lx_p, ly_p, planes) = match axis {
            0 if self.cells[0].contains(&at) => (ly, lz, 0..ly),
            0 => (ly, lz, 0..0),
            1 => (self.lx, lz, self.planes()),
            _ => (self.lx, ly, self.planes()),
        };
        let x0 = self.cells[0].start;
        let site = move |i: usize, j: usize| match axis {
            0 => (at - x0) * plane + j * ly + i,
            1 => i * plane + j * ly + at,
            _ => i * plane + at * ly + j,
        };
        let renamed = |n: &'static str| match (axis, n) {
            (0, "ux") | (1, "uy") => "uz",
            (0, "uy") => "ux",
            (0, "uz") | (1, "uz") => "uy",
            _ => n,
        };
        let data = self
            .data
            .iter()
            .map(|d| {
                (0..planes.len())
                    .flat_map(|i| (0..ly_p).map(move |j| d[site(i, j)]))
                    .collect()
            })
            .collect();
        Self {
            lx: lx_p,
            ly: ly_p,
            lz: 1,
            cells: [planes, 0..ly_p, 0..1],
            names: self.names.iter().map(|&n| renamed(n)).collect(),
            data,
            neighbours: None,
            ..self.clone()
        }
    }

    /// The piece sampled every `k` sites along x and y: the global columns and rows that are
    /// multiples of `k` (a whole lattice sampled so: a picture of at most `⌈L/k⌉` pixels a
    /// side). The piece is a piece of the sampled lattice, whose derivatives remain per site
    /// of the original one. 2-D fields (a [`Fields::slice`] of 3-D ones).
    pub fn sampled(&self, k: usize) -> Self {
        let k = k.max(1);
        let sampled = |n: usize| n.div_ceil(k);
        let (lx, ly) = (sampled(self.lx), sampled(self.ly));
        let planes = sampled(self.cells[0].start)..sampled(self.cells[0].end);
        let data = self
            .data
            .iter()
            .map(|d| {
                planes
                    .clone()
                    .flat_map(|xs| {
                        let x = xs * k - self.cells[0].start;
                        (0..ly).map(move |ys| d[x * self.ly + ys * k])
                    })
                    .collect()
            })
            .collect();
        Self {
            lx,
            ly,
            lz: 1,
            step: self.step,
            cs2: self.cs2,
            cells: [planes, 0..ly, 0..1],
            spacing: self.spacing * k as f64,
            names: self.names.clone(),
            data,
            neighbours: None,
        }
    }

    /// The whole lattice from its pieces' fields, concatenated in column order (`data[j]` of
    /// every piece, rank after rank), with the names, step and sampling of `piece`.
    pub fn assembled(piece: &Self, data: Vec<Vec<f64>>) -> Result<Self, LbmError> {
        if data.iter().any(|d| d.len() != piece.lx * piece.plane()) {
            return Err(LbmError::Shape(format!(
                "the assembled fields do not cover the {}×{} lattice",
                piece.lx,
                piece.plane()
            )));
        }
        Ok(Self {
            cells: [0..piece.lx, 0..piece.ly, 0..piece.lz],
            data,
            neighbours: None,
            ..piece.clone()
        })
    }

    /// The moments of the piece's first and last columns, each as one array (every moment's
    /// plane in turn, in the order of [`Fields::names`]): what a neighbour needs of this
    /// piece, see [`Fields::with_neighbours`].
    pub fn end_columns(&self) -> [Vec<f64>; 2] {
        let (plane, n) = (self.plane(), self.cells[0].len());
        let column = |x: usize| -> Vec<f64> {
            self.data
                .iter()
                .flat_map(|d| d[x * plane..(x + 1) * plane].iter().copied())
                .collect()
        };
        if n == 0 {
            return [Vec::new(), Vec::new()];
        }
        [column(0), column(n - 1)]
    }

    /// The piece with the moments of the columns beside it, `[before, after]` as
    /// [`Fields::end_columns`] packs them (the neighbours' `[last, first]`, from
    /// [`crate::Solver::neighbour_columns`]), so that [`Fields::column`] reaches one column
    /// beyond each end.
    pub fn with_neighbours(self, [before, after]: [Vec<f64>; 2]) -> Result<Self, LbmError> {
        let plane = self.plane();
        let unpack = |v: Vec<f64>| -> Result<Vec<Vec<f64>>, LbmError> {
            if v.len() != plane * self.names.len() {
                return Err(LbmError::Shape(format!(
                    "a neighbour column of {} moments needs {} values, not {}",
                    self.names.len(),
                    plane * self.names.len(),
                    v.len()
                )));
            }
            Ok(v.chunks(plane.max(1)).map(<[f64]>::to_vec).collect())
        };
        let neighbours = [unpack(before)?, unpack(after)?];
        Ok(Self {
            neighbours: Some(neighbours),
            ..self
        })
    }

    /// Moment `name` on the local column `x` (`0..planes().len()`), or on the neighbour's
    /// column just before (`x = −1`) or after (`x = planes().len()`) when
    /// [`Fields::with_neighbours`] gave them.
    pub fn column(&self, name: &str, x: isize) -> Option<&[f64]> {
        let j = self.names.iter().position(|n| *n == name)?;
        let (plane, n) = (self.plane(), self.cells[0].len() as isize);
        match x {
            -1 => self.neighbours.as_ref().map(|nb| &nb[0][j][..]),
            x if x == n => self.neighbours.as_ref().map(|nb| &nb[1][j][..]),
            x if (0..n).contains(&x) => {
                let x = x as usize;
                Some(&self.data[j][x * plane..(x + 1) * plane])
            }
            _ => None,
        }
    }

    /// The moment fields, in the order of [`Fields::names`].
    pub fn data(&self) -> &[Vec<f64>] {
        &self.data
    }

    /// Builds fields from named arrays (each of `lx·ly` values, indexed `[x·LY + y]`).
    pub fn new(
        (lx, ly): (usize, usize),
        step: u64,
        cs2: f64,
        fields: Vec<(&'static str, Vec<f64>)>,
    ) -> Result<Self, LbmError> {
        if let Some((n, f)) = fields.iter().find(|(_, f)| f.len() != lx * ly) {
            return Err(LbmError::Shape(format!(
                "field {n} has {} values, a {lx}×{ly} lattice {}",
                f.len(),
                lx * ly
            )));
        }
        let (names, data) = fields.into_iter().unzip();
        Ok(Self {
            lx,
            ly,
            lz: 1,
            step,
            cs2,
            cells: [0..lx, 0..ly, 0..1],
            spacing: 1.0,
            names,
            data,
            neighbours: None,
        })
    }

    /// The fields with their values `h` apart (nodes of a finite-difference grid of spacing
    /// `h`, say): their derivatives and their images in VTK are in those units.
    pub fn with_spacing(self, h: f64) -> Self {
        Self { spacing: h, ..self }
    }

    /// The distance between neighbouring values ([`Fields::with_spacing`]; 1 on a lattice).
    pub fn spacing(&self) -> f64 {
        self.spacing
    }

    /// The fields with `values` (one a site held, in the moments' order) as the field `name`,
    /// drawn and written as a moment is: the solid sites of a case's bodies, say.
    pub fn with_field(mut self, name: &'static str, values: Vec<f64>) -> Result<Self, LbmError> {
        if values.len() != self.len() {
            return Err(LbmError::Shape(format!(
                "field {name} has {} values, the piece holds {} sites",
                values.len(),
                self.len()
            )));
        }
        self.names.push(name);
        self.data.push(values);
        Ok(self)
    }

    /// The model's moment names (`rho`, `ux`, `uy`, and `T` for thermal models).
    pub fn names(&self) -> &[&'static str] {
        &self.names
    }

    /// A moment field, if the model has it.
    pub fn moment(&self, name: &str) -> Option<&[f64]> {
        let j = self.names.iter().position(|n| *n == name)?;
        Some(&self.data[j])
    }

    /// The temperature, 1 everywhere for athermal models.
    pub fn temperature(&self) -> Vec<f64> {
        self.moment("T")
            .map_or_else(|| vec![1.0; self.len()], <[f64]>::to_vec)
    }

    /// A moment or a derived field: `speed` = |u|, `vorticity` = ∂u_y/∂x − ∂u_x/∂y.
    pub fn get(&self, name: &str) -> Result<Vec<f64>, OutputError> {
        match name {
            "speed" => Ok(self.speed()),
            "vorticity" => Ok(self.vorticity()),
            _ => self
                .moment(name)
                .map(<[f64]>::to_vec)
                .ok_or_else(|| OutputError::NoField {
                    name: name.into(),
                    available: self.available(),
                }),
        }
    }

    /// Every name [`Fields::get`] accepts.
    pub fn available(&self) -> String {
        self.names
            .iter()
            .chain(DERIVED.iter())
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn velocity(&self) -> (&[f64], &[f64]) {
        let zero: &[f64] = &[];
        (
            self.moment("ux").unwrap_or(zero),
            self.moment("uy").unwrap_or(zero),
        )
    }

    /// The speed |u| at every site.
    pub fn speed(&self) -> Vec<f64> {
        let (ux, uy) = self.velocity();
        match self.moment("uz") {
            Some(uz) => ux
                .iter()
                .zip(uy)
                .zip(uz)
                .map(|((a, b), c)| (a * a + b * b + c * c).sqrt())
                .collect(),
            None => ux.iter().zip(uy).map(|(a, b)| a.hypot(*b)).collect(),
        }
    }

    /// The vorticity ω = ∂u_y/∂x − ∂u_x/∂y by central differences (one-sided at the edges of
    /// the columns held), per lattice site; in 3-D its z component, plane by plane.
    pub fn vorticity(&self) -> Vec<f64> {
        let (nx, ly, plane) = (self.cells[0].len(), self.cells[1].len(), self.plane());
        let (ux, uy) = self.velocity();
        if ux.is_empty() {
            return vec![0.0; self.len()];
        }
        let h = self.spacing;
        (0..nx * plane)
            .map(|s| {
                // Site `s` is `x·LY·LZ + r`, `r = z·LY + y` its place in the plane; its row starts at `s − y`.
                let (x, r, y) = (s / plane, s % plane, s % ly);
                let duy_dx = derivative(nx, x, |xx| uy[xx * plane + r]);
                let dux_dy = derivative(ly, y, |yy| ux[s - y + yy]);
                (duy_dx - dux_dy) / h
            })
            .collect()
    }
}

/// The derivative at `i` of the line `at(0..n)`: central, one-sided at the ends.
fn derivative(n: usize, i: usize, at: impl Fn(usize) -> f64) -> f64 {
    match i {
        _ if n < 2 => 0.0,
        0 => at(1) - at(0),
        i if i == n - 1 => at(i) - at(i - 1),
        i => 0.5 * (at(i + 1) - at(i - 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vorticity_of_solid_rotation_is_twice_the_rate() {
        // u = Ω (−(y − y0), x − x0): ω = 2Ω everywhere (exact for central differences).
        let (lx, ly, omega) = (5, 4, 0.01);
        let ux = (0..lx * ly).map(|s| -omega * (s % ly) as f64).collect();
        let uy = (0..lx * ly).map(|s| omega * (s / ly) as f64).collect();
        let f = Fields::new(
            (lx, ly),
            0,
            1.0 / 3.0,
            vec![("rho", vec![1.0; lx * ly]), ("ux", ux), ("uy", uy)],
        )
        .unwrap();
        assert!(
            f.vorticity()
                .iter()
                .all(|w| (w - 2.0 * omega).abs() < 1e-15)
        );
        assert!((f.speed()[ly + 1] - omega * 2f64.sqrt()).abs() < 1e-15);
        assert!(matches!(f.get("p"), Err(OutputError::NoField { .. })));
        assert_eq!(f.temperature(), vec![1.0; lx * ly]);
    }

    #[test]
    fn vorticity_of_3d_fields_is_its_z_component_plane_by_plane() {
        // u = Ω (−(y − y0), x − x0, z): ω_z = 2Ω in every plane z.
        let (lx, ly, lz, omega) = (4, 3, 5, 0.01);
        let n = lx * ly * lz;
        let (x, y, z) = (
            |s: usize| s / (ly * lz),
            |s: usize| s % ly,
            |s: usize| s / ly % lz,
        );
        let data = vec![
            vec![1.0; n],
            (0..n).map(|s| -omega * y(s) as f64).collect(),
            (0..n).map(|s| omega * x(s) as f64).collect(),
            (0..n).map(|s| z(s) as f64).collect(),
        ];
        let f =
            Fields::piece::<crate::models::D3Q19Bgk>([lx, ly, lz], [0..lx, 0..ly, 0..lz], 0, data)
                .unwrap();
        assert!(
            f.vorticity()
                .iter()
                .all(|w| (w - 2.0 * omega).abs() < 1e-15)
        );
        assert_eq!(f.slice(2, 2).moment("uz").unwrap(), vec![2.0; lx * ly]);
    }

    /// A solid-body rotation about each axis in turn: every slice normal to that axis draws
    /// the rotation's vorticity `2Ω` (counter-clockwise in the picture, `−ω_y` for a plane of
    /// constant y), the normal velocity renamed `uz`; a plane of constant x lies in one piece.
    #[test]
    fn slices_along_every_axis_draw_the_normal_vorticity() {
        let (lx, ly, lz, omega) = (4, 6, 5, 0.01);
        let n = lx * ly * lz;
        let coord = |s: usize| [s / (ly * lz), s % ly, s / ly % lz].map(|v| v as f64);
        for axis in 0..3 {
            // A rotation counter-clockwise in the picture's axes (a, b), plus a normal flow.
            let (a, b) = [(1, 2), (0, 2), (0, 1)][axis];
            let u = |k: usize, s: usize| {
                let r = coord(s);
                omega
                    * match k {
                        k if k == a => -r[b],
                        k if k == b => r[a],
                        _ => 0.0,
                    }
                    + if k == axis { 7.0 } else { 0.0 }
            };
            let data = vec![
                vec![1.0; n],
                (0..n).map(|s| u(0, s)).collect(),
                (0..n).map(|s| u(1, s)).collect(),
                (0..n).map(|s| u(2, s)).collect(),
            ];
            let f = Fields::piece::<crate::models::D3Q19Bgk>(
                [lx, ly, lz],
                [0..lx, 0..ly, 0..lz],
                0,
                data,
            )
            .unwrap();
            let at = [2, 3, 1][axis];
            let slice = f.slice(axis, at);
            let sides = [(ly, lz), (lx, lz), (lx, ly)][axis];
            assert_eq!((slice.lx, slice.ly, slice.lz), (sides.0, sides.1, 1));
            let w = slice.vorticity();
            assert_eq!(w.len(), sides.0 * sides.1);
            assert!(
                w.iter().all(|w| (w - 2.0 * omega).abs() < 1e-14),
                "axis {axis}: {w:?}"
            );
            assert!(slice.moment("uz").unwrap().iter().all(|&v| v == 7.0));
        }
        // A piece of columns 0..2 holds no plane x = 3; the piece 2..4 holds all of it.
        let part = |xs: std::ops::Range<usize>| {
            let m = xs.len() * ly * lz;
            Fields::piece::<crate::models::D3Q19Bgk>(
                [lx, ly, lz],
                [xs, 0..ly, 0..lz],
                0,
                vec![vec![1.0; m]; 4],
            )
            .unwrap()
            .slice(0, 3)
        };
        assert!(part(0..2).is_empty());
        assert_eq!(part(2..4).len(), ly * lz);
    }
}
