//! Bodies in a flow: analytic shapes (sphere, circle, cylinder, box, and unions of them) and
//! closed triangle meshes read from STL files, scaled, rotated and placed in a lattice;
//! voxelised in parallel, each process for its own planes; and, for every lattice link that
//! crosses the wall, the wall's distance `q ∈ (0, 1]` along it from the exact shape
//! (ray–quadric and ray–triangle intersections), which interpolated bounce-back needs.
//!
//! ```
//! use lbm_geometry::Body;
//!
//! // Schäfer & Turek's cylinder: diameter 20 sites, its centre 40 sites from the inlet.
//! let cylinder = Body::circle([40.0, 42.0], 10.0).unwrap();
//! assert!(cylinder.solid([40, 42, 0]) && !cylinder.solid([40, 53, 0]));
//! // The D2Q9 link from (40, 53) down to (40, 52) enters the disc at y = 52: q = 1.
//! let cuts = cylinder.cut_links(&[[0, 0, 0], [0, -1, 0]], [80, 84, 1], [false; 3], 40..41);
//! assert!(cuts.links.iter().any(|l| l.site == [40, 53, 0] && l.q == 1.0));
//! ```

mod body;
mod icosphere;
mod links;
mod mesh;
mod placement;
mod stl;
#[cfg(test)]
mod tests;
mod vec3;

pub use body::Body;
pub use links::{CutLink, Cuts};
pub use mesh::TriMesh;
pub use stl::STL_LIMIT;
pub use vec3::V3;

/// Why a body cannot be built.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GeometryError {
    /// A size, a position or an angle that is not a finite number in its range.
    #[error("invalid geometry: {0}")]
    Invalid(String),
    /// A mesh with holes or edges joined the wrong way: its inside is not defined.
    #[error(
        "the mesh is not closed: {0}; repair it (e.g. with MeshLab's or Blender's 3D-print tools) and export it again"
    )]
    NotClosed(String),
    /// An STL file that cannot be read, or whose mesh is refused.
    #[error("STL file {path}: {message}")]
    Stl {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}
