//! STL files (binary and ASCII, through `stl_io`): read into a checked [`TriMesh`], and written
//! from one (binary).

use std::collections::HashMap;
use std::io::{Read, Seek, Write};
use std::path::Path;

use crate::GeometryError;
use crate::mesh::TriMesh;
use crate::vec3::{self, V3};

impl TriMesh {
    /// The mesh of the STL file at `path` (binary or ASCII), checked as [`TriMesh::new`]
    /// checks (vertices are joined where their coordinates are equal).
    pub fn read_stl(path: &Path) -> Result<Self, GeometryError> {
        let name = path.display().to_string();
        let stl_error = |message: String| GeometryError::Stl {
            path: name.clone(),
            message,
        };
        let meta = std::fs::metadata(path).map_err(|e| stl_error(e.to_string()))?;
        if !meta.is_file() {
            return Err(stl_error(
                "it is not a regular file (a directory, a device or a pipe)".into(),
            ));
        }
        let mut file = std::fs::File::open(path).map_err(|e| stl_error(e.to_string()))?;
        Self::parse_stl(&mut file, &name)
    }

    /// The mesh of the STL data `stl` (binary or ASCII; `name` says where it came from in
    /// errors), checked as [`TriMesh::new`] checks.
    pub fn parse_stl<R: Read + Seek>(stl: &mut R, name: &str) -> Result<Self, GeometryError> {
        let stl_error = |message: String| GeometryError::Stl {
            path: name.to_string(),
            message,
        };
        let mesh = stl_io::read_stl(stl).map_err(|e| stl_error(e.to_string()))?;
        // The reader joins vertices of equal bits; −0 and +0 are joined here too.
        let mut joined: HashMap<[u64; 3], usize> = HashMap::new();
        let mut vertices = Vec::new();
        let index: Vec<usize> = mesh
            .vertices
            .iter()
            .map(|v| {
                let p = [v[0], v[1], v[2]].map(|c| f64::from(c) + 0.0);
                *joined.entry(p.map(f64::to_bits)).or_insert_with(|| {
                    vertices.push(p);
                    vertices.len() - 1
                })
            })
            .collect();
        let triangles = mesh
            .faces
            .iter()
            .map(|f| f.vertices.map(|i| index[i]))
            .collect();
        Self::new(vertices, triangles).map_err(|e| stl_error(e.to_string()))
    }

    /// The mesh as a binary STL file (single precision, each facet's normal from its
    /// corners' order).
    pub fn write_stl<W: Write>(&self, out: &mut W) -> std::io::Result<()> {
        let triangles = (0..self.len()).map(|k| {
            let [a, b, c] = self.triangle(k);
            let n = vec3::cross(vec3::sub(b, a), vec3::sub(c, a));
            let n = vec3::scale(n, 1.0 / vec3::norm(n).max(f64::MIN_POSITIVE));
            let f = |p: V3| stl_io::Vertex::new(p.map(|x| x as f32));
            stl_io::Triangle {
                normal: stl_io::Normal::new(n.map(|x| x as f32)),
                vertices: [f(a), f(b), f(c)],
            }
        });
        stl_io::write_stl(out, triangles)
    }
}
