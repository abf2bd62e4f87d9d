//! STL files, binary and ASCII: read into a checked [`TriMesh`], and written from one (binary).
//!
//! The reader is this crate's own, for what users meet: it tells an empty, truncated or
//! mislabelled file by its length against the triangle count of its header (a binary file is
//! 84 + 50 n bytes; one whose 80-byte header begins with `solid`, as some exporters write, is
//! still binary), it reads the ASCII files CAD tools write (a bare `solid` first line, a UTF-8
//! byte-order mark, any case of the keywords), and it names the line of a bad token. Vertices
//! closer than [`WELD`] of the mesh's size are joined before the mesh is judged closed: a
//! sphere written with sin and cos meets itself at its seam only to within round-off.

use std::collections::HashMap;
use std::io::Write;

use crate::GeometryError;
use crate::mesh::TriMesh;
use crate::vec3::{self, V3};

/// Vertices closer than this fraction of the mesh's size (its bounding box's diagonal, or its
/// largest coordinate when that is larger) are one vertex.
pub const WELD: f64 = 1e-9;

/// The largest STL file an application should read: 2³¹ bytes, 43 million triangles in
/// binary.
pub const STL_LIMIT: u64 = 1 << 31;

impl TriMesh {
    /// The mesh of the STL data `stl` (binary or ASCII; `name` says where it came from in
    /// errors), checked as [`TriMesh::new`] checks after vertices closer than [`WELD`] are
    /// joined.
    pub fn parse_stl(stl: &[u8], name: &str) -> Result<Self, GeometryError> {
        let stl_error = |message: String| GeometryError::Stl {
            path: name.to_string(),
            message,
        };
        let corners = triangles(stl).map_err(stl_error)?;
        let (vertices, triangles) = weld(&corners);
        Self::new(vertices, triangles).map_err(|e| stl_error(e.to_string()))
    }

    /// The mesh as a binary STL file (single precision, each facet's normal from its
    /// corners' order).
    pub fn write_stl<W: Write>(&self, out: &mut W) -> std::io::Result<()> {
        let mut bytes = Vec::with_capacity(84 + 50 * self.len());
        bytes.extend_from_slice(&[0u8; 80]);
        bytes.extend_from_slice(&(self.len() as u32).to_le_bytes());
        for k in 0..self.len() {
            let [a, b, c] = self.triangle(k);
            let n = vec3::cross(vec3::sub(b, a), vec3::sub(c, a));
            let n = vec3::scale(n, 1.0 / vec3::norm(n).max(f64::MIN_POSITIVE));
            for p in [n, a, b, c] {
                for x in p {
                    bytes.extend_from_slice(&(x as f32).to_le_bytes());
                }
            }
            bytes.extend_from_slice(&[0, 0]);
        }
        out.write_all(&bytes)
    }
}

/// The corners of every triangle of the STL data, binary or ASCII.
fn triangles(stl: &[u8]) -> Result<Vec<[V3; 3]>, String> {
    if stl.is_empty() {
        return Err("the file is empty".into());
    }
    let text = stl.strip_prefix("\u{feff}".as_bytes()).unwrap_or(stl);
    let starts_solid = text.len() >= 5 && text[..5].eq_ignore_ascii_case(b"solid");
    if stl.len() >= 84 {
        let n = u32::from_le_bytes([stl[80], stl[81], stl[82], stl[83]]) as u64;
        let size = 84 + 50 * n;
        if size == stl.len() as u64 {
            return Ok(binary(&stl[84..]));
        }
        if !starts_solid {
            return Err(format!(
                "its header counts {n} triangles, {size} bytes for a binary STL, but the file \
                 has {} bytes: it is truncated, or not an STL file",
                stl.len()
            ));
        }
    } else if !starts_solid {
        return Err(format!(
            "it has {} bytes, fewer than the 84 of a binary STL's header, and does not start \
             with `solid` as an ASCII STL does: it is truncated, or not an STL file",
            stl.len()
        ));
    }
    let text = std::str::from_utf8(text)
        .map_err(|e| format!("it starts with `solid` but is not text ({e}), nor a binary STL"))?;
    ascii(text)
}

/// The triangles of a binary STL's records (50 bytes each: normal, three corners, attribute).
fn binary(records: &[u8]) -> Vec<[V3; 3]> {
    let f = |b: &[u8]| f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    records
        .chunks_exact(50)
        .map(|r| [0, 1, 2].map(|k| [0, 1, 2].map(|a| f(&r[12 + 12 * k + 4 * a..]))))
        .collect()
}

/// The triangles of an ASCII STL: `solid [name]`, then per facet `facet normal nx ny nz`,
/// `outer loop`, three `vertex x y z`, `endloop`, `endfacet`, and `endsolid [name]`; several
/// solids may follow one another. The normals are checked to be numbers but not used (the
/// corners' order says the orientation).
fn ascii(text: &str) -> Result<Vec<[V3; 3]>, String> {
    let mut t = Tokens {
        tokens: text
            .lines()
            .enumerate()
            .flat_map(|(i, line)| line.split_whitespace().map(move |t| (i + 1, t)))
            .peekable(),
        line: 1,
    };
    let mut found = Vec::new();
    while t.tokens.peek().is_some() {
        t.keyword("solid")?;
        t.rest_of_line();
        loop {
            let (line, w) = t.next("`facet` or `endsolid`")?;
            if w.eq_ignore_ascii_case("endsolid") {
                t.rest_of_line();
                break;
            }
            if !w.eq_ignore_ascii_case("facet") {
                return Err(format!(
                    "line {line}: `{w}` where `facet` or `endsolid` was expected"
                ));
            }
            t.keyword("normal")?;
            for _ in 0..3 {
                t.number()?;
            }
            t.keyword("outer")?;
            t.keyword("loop")?;
            let mut corners = [[0.0; 3]; 3];
            for c in &mut corners {
                t.keyword("vertex")?;
                for x in c.iter_mut() {
                    *x = t.number()?;
                }
            }
            t.keyword("endloop")?;
            t.keyword("endfacet")?;
            found.push(corners);
        }
    }
    if found.is_empty() {
        return Err("it holds no facet".into());
    }
    Ok(found)
}

/// The words of an ASCII STL with their line numbers.
struct Tokens<'a, I: Iterator<Item = (usize, &'a str)>> {
    tokens: std::iter::Peekable<I>,
    /// The line of the last word read.
    line: usize,
}

impl<'a, I: Iterator<Item = (usize, &'a str)>> Tokens<'a, I> {
    /// The next word and its line; `want` says what was expected where the text ends.
    fn next(&mut self, want: &str) -> Result<(usize, &'a str), String> {
        let (line, w) = self.tokens.next().ok_or_else(|| {
            format!(
                "it ends after line {} where {want} was expected: it is truncated",
                self.line
            )
        })?;
        self.line = line;
        Ok((line, w))
    }

    /// The keyword `want` (in any case).
    fn keyword(&mut self, want: &str) -> Result<(), String> {
        let (line, w) = self.next(&format!("`{want}`"))?;
        if w.eq_ignore_ascii_case(want) {
            Ok(())
        } else {
            Err(format!("line {line}: `{w}` where `{want}` was expected"))
        }
    }

    /// A finite number.
    fn number(&mut self) -> Result<f64, String> {
        let (line, w) = self.next("a number")?;
        match w.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(format!(
                "line {line}: `{w}` where a finite number was expected"
            )),
        }
    }

    /// Skips the rest of the line of the last word (a solid's name).
    fn rest_of_line(&mut self) {
        while self.tokens.next_if(|&(l, _)| l == self.line).is_some() {}
    }
}

/// The distinct vertices of `corners` and the triangles as indices into them: corners closer
/// than [`WELD`] of the mesh's size are one vertex (binned on a grid of that spacing, each
/// corner compared with those of the 27 bins around it), and triangles whose corners so
/// become fewer than three distinct (of no area) are dropped.
fn weld(corners: &[[V3; 3]]) -> (Vec<V3>, Vec<[usize; 3]>) {
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for p in corners.iter().flatten() {
        for a in 0..3 {
            lo[a] = lo[a].min(p[a]);
            hi[a] = hi[a].max(p[a]);
        }
    }
    let size = vec3::norm(vec3::sub(hi, lo))
        .max(lo.iter().chain(&hi).fold(0.0, |m: f64, c| m.max(c.abs())));
    let tol = (WELD * size).max(f64::MIN_POSITIVE);
    let cell = |p: V3| p.map(|c| (c / tol).floor() as i64);
    let mut bins: HashMap<[i64; 3], Vec<usize>> = HashMap::new();
    let mut vertices: Vec<V3> = Vec::new();
    let mut index = |p: V3| -> usize {
        let [i, j, k] = cell(p);
        for di in -1..=1 {
            for dj in -1..=1 {
                for dk in -1..=1 {
                    if let Some(near) = bins.get(&[i + di, j + dj, k + dk])
                        && let Some(&v) = near
                            .iter()
                            .find(|&&v| vec3::norm(vec3::sub(vertices[v], p)) <= tol)
                    {
                        return v;
                    }
                }
            }
        }
        // −0 and +0 are one coordinate.
        vertices.push(p.map(|c| c + 0.0));
        bins.entry([i, j, k]).or_default().push(vertices.len() - 1);
        vertices.len() - 1
    };
    let triangles = corners
        .iter()
        .map(|t| t.map(&mut index))
        .filter(|[a, b, c]| a != b && b != c && a != c)
        .collect();
    (vertices, triangles)
}
