//! Fields as XML VTK image data, one dataset for ParaView however many processes wrote it:
//! each block writes its piece of every output step (`.vti`: the box of sites it holds), the root
//! the `.pvti` that joins the pieces of the step (a `.vtm` of them where a sparse domain leaves
//! blocks out), and the `.pvd` time series of the run. One
//! process writes the same three kinds of file (one piece), so a whole run opens as one file,
//! `<case>.pvd`.
//!
//! Sites are cells: site `(x, y)` is the cell `[x − ½, x + ½] × [y − ½, y + ½]` (origin
//! `(−½, −½)`, spacing 1; in 3-D the cell `(x, y, z)` of a cube, origin `(−½, −½, −½)`), so the
//! pieces of adjacent blocks abut without sharing a point and every value is a site's own. The
//! nodes of a finite-difference grid of spacing `h` are cells of side `h` centred on them
//! ([`Fields::with_spacing`]). The
//! cell data are every moment as a scalar (`rho`, `T`) and the velocity as a vector
//! `(u_x, u_y, u_z)` (`u_z = 0` in 2-D; ParaView's Gradient filter gives the vorticity), in
//! binary appended data, little-endian `Float64` with `UInt64` headers, optionally compressed
//! with zlib (`vtkZLibDataCompressor`, blocks of [`BLOCK`] bytes).

use std::io::Write as _;
use std::ops::Range;
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::ZlibEncoder;

use super::{Fields, OutputError, write_file};

/// Bytes of a block of uncompressed data in a zlib-compressed array.
pub const BLOCK: usize = 1 << 20;

/// The names and components of the arrays of `f`: the moments but the velocity's, then the
/// velocity.
fn array_names(f: &Fields) -> Vec<(&'static str, usize)> {
    let mut out: Vec<_> = f
        .names()
        .iter()
        .filter(|n| !matches!(**n, "ux" | "uy" | "uz"))
        .map(|n| (*n, 1))
        .collect();
    if f.moment("ux").is_some() && f.moment("uy").is_some() {
        out.push(("velocity", 3));
    }
    out
}

/// The values of the array `name` of `f` (a moment, or the velocity `(u_x, u_y, u_z)`), cell
/// after cell of the box it holds (x fastest, then y, then z), components together.
fn cells<'a>(f: &'a Fields, name: &str) -> Box<dyn Iterator<Item = f64> + 'a> {
    let [nx, ny, nz] = f.cells().clone().map(|r| r.len());
    let plane = f.plane();
    let at = move |v: &'a [f64]| {
        (0..nz).flat_map(move |z| {
            (0..ny).flat_map(move |y| (0..nx).map(move |x| v[x * plane + z * ny + y]))
        })
    };
    match (name, f.moment("ux"), f.moment("uy")) {
        ("velocity", Some(ux), Some(uy)) => match f.moment("uz") {
            Some(uz) => Box::new(
                at(ux)
                    .zip(at(uy))
                    .zip(at(uz))
                    .flat_map(|((a, b), c)| [a, b, c]),
            ),
            None => Box::new(at(ux).zip(at(uy)).flat_map(|(a, b)| [a, b, 0.0])),
        },
        _ => Box::new(at(f.moment(name).expect("a listed moment"))),
    }
}

/// The point extent of the box of cells `[xs, ys, zs]` of the lattice of `f` (`0 0` along z
/// in 2-D).
fn extent([xs, ys, zs]: &[Range<usize>; 3], f: &Fields) -> String {
    let z = if f.lz > 1 { [zs.start, zs.end] } else { [0, 0] };
    let (x, y) = ([xs.start, xs.end], [ys.start, ys.end]);
    format!("{} {} {} {} {} {}", x[0], x[1], y[0], y[1], z[0], z[1])
}

/// The origin and the spacing of the cells, `h` the distance between values (1 on a
/// lattice): origin `(−h/2, −h/2, 0)` in 2-D, `(−h/2, −h/2, −h/2)` in 3-D.
fn origin_and_spacing(f: &Fields) -> String {
    let h = f.spacing();
    let z = if f.lz > 1 { -h / 2.0 } else { 0.0 };
    format!(
        "Origin=\"{} {} {z}\" Spacing=\"{h} {h} {h}\"",
        -h / 2.0,
        -h / 2.0
    )
}

/// `values` compressed with zlib in blocks of [`BLOCK`] bytes, behind the header `[blocks,
/// block size, last block size, compressed sizes…]` of `vtkZLibDataCompressor`.
fn compressed(values: impl Iterator<Item = f64>) -> Vec<u8> {
    let mut blocks = Vec::new();
    let mut raw = Vec::with_capacity(BLOCK);
    let mut total = 0usize;
    let flush = |raw: &mut Vec<u8>, blocks: &mut Vec<Vec<u8>>| {
        let mut z = ZlibEncoder::new(Vec::new(), Compression::default());
        let done = z.write_all(raw).and_then(|()| z.finish());
        blocks.push(done.expect("compressing into memory"));
        raw.clear();
    };
    for v in values {
        raw.extend(v.to_le_bytes());
        total += 8;
        if raw.len() == BLOCK {
            flush(&mut raw, &mut blocks);
        }
    }
    if !raw.is_empty() {
        flush(&mut raw, &mut blocks);
    }
    let mut header = vec![blocks.len() as u64, BLOCK as u64, (total % BLOCK) as u64];
    header.extend(blocks.iter().map(|b| b.len() as u64));
    let mut out: Vec<u8> = header.iter().flat_map(|h| h.to_le_bytes()).collect();
    out.extend(blocks.concat());
    out
}

/// Writes the `.vti` file of the piece `f` (the box of sites it holds) to `path`, atomically,
/// streaming the values (compressed, each array is compressed first, its size being in the
/// XML before it).
pub fn write_piece(path: &Path, f: &Fields, zlib: bool) -> Result<(), OutputError> {
    let ext = extent(f.cells(), f);
    let origin = origin_and_spacing(f);
    let names = array_names(f);
    let packed: Vec<Vec<u8>> = if zlib {
        names.iter().map(|(n, _)| compressed(cells(f, n))).collect()
    } else {
        Vec::new()
    };
    let size = |k: usize, comps: usize| match packed.get(k) {
        Some(p) => p.len(),
        None => 8 + 8 * comps * f.len(),
    };
    let compressor = if zlib {
        r#" compressor="vtkZLibDataCompressor""#
    } else {
        ""
    };
    let mut xml = format!(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"ImageData\" version=\"1.0\" \
         byte_order=\"LittleEndian\" header_type=\"UInt64\"{compressor}>\n  <ImageData \
         WholeExtent=\"{ext}\" {origin}>\n    <Piece \
         Extent=\"{ext}\">\n      <CellData{}>\n",
        attributes(f)
    );
    let mut offset = 0;
    for (k, (name, comps)) in names.iter().enumerate() {
        xml += &format!(
            "        <DataArray type=\"Float64\" Name=\"{name}\" NumberOfComponents=\"{comps}\" \
             format=\"appended\" offset=\"{offset}\"/>\n"
        );
        offset += size(k, *comps);
    }
    xml += "      </CellData>\n    </Piece>\n  </ImageData>\n  <AppendedData encoding=\"raw\">\n_";
    let written = crate::io::write_atomically_with(path, |w| {
        w.write_all(xml.as_bytes())?;
        for (k, (name, comps)) in names.iter().enumerate() {
            match packed.get(k) {
                Some(p) => w.write_all(p)?,
                None => {
                    w.write_all(&(8 * comps * f.len()).to_le_bytes())?;
                    let mut buf = Vec::with_capacity(BLOCK);
                    for v in cells(f, name) {
                        buf.extend(v.to_le_bytes());
                        if buf.len() == BLOCK {
                            w.write_all(&buf)?;
                            buf.clear();
                        }
                    }
                    w.write_all(&buf)?;
                }
            }
        }
        w.write_all(b"\n  </AppendedData>\n</VTKFile>\n")
    });
    written.map_err(|source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The active scalar and vector of a piece's cell data.
fn attributes(f: &Fields) -> String {
    let scalar = f
        .names()
        .iter()
        .find(|n| !matches!(**n, "ux" | "uy" | "uz"));
    let mut a = scalar.map_or(String::new(), |s| format!(" Scalars=\"{s}\""));
    if f.moment("ux").is_some() {
        a += " Vectors=\"velocity\"";
    }
    a
}

/// The pieces a joined file lists: each piece's file name (relative to the joined file) with
/// the box of sites it holds, `[xs, ys, zs]`.
pub type Sources = [([Range<usize>; 3], String)];

/// The file joining the pieces `sources` (file names relative to it, one per block, with the
/// box of sites each holds, `[xs, ys, zs]`) of the fields `f` (any piece of them: the names
/// and the lattice's size are read from it), and its extension: where the pieces cover the
/// lattice, a `.pvti` (one image of the whole lattice); otherwise — a sparse domain, whose
/// blocks left out would be cells of that image that no piece holds — a `.vtm`, a multiblock
/// dataset of the pieces, each an image of its own box (ParaView shows the blocks that exist
/// and nothing where the others would be). `multiblock` asks for a `.vtm` whatever the
/// pieces cover.
pub fn joined(f: &Fields, sources: &Sources, multiblock: bool) -> (&'static str, Vec<u8>) {
    let whole = extent(&[0..f.lx, 0..f.ly, 0..f.lz], f);
    let volume = |b: &[Range<usize>; 3]| b.iter().map(Range::len).product::<usize>();
    let covered = sources.iter().map(|(b, _)| volume(b)).sum::<usize>();
    if multiblock || covered < f.lx * f.ly * f.lz {
        let datasets = sources
            .iter()
            .enumerate()
            .map(|(k, ([xs, ys, zs], source))| {
                let name = format!("block {k}: x {xs:?}, y {ys:?}, z {zs:?}");
                (name, source.clone())
            });
        let xml = multiblock_file(&whole, datasets);
        return ("vtm", xml);
    }
    let mut xml = format!(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"PImageData\" version=\"1.0\" \
         byte_order=\"LittleEndian\" header_type=\"UInt64\">\n  <PImageData \
         WholeExtent=\"{whole}\" GhostLevel=\"0\" {}>\n    \
         <PCellData{}>\n",
        origin_and_spacing(f),
        attributes(f)
    );
    for (name, comps) in array_names(f) {
        xml += &format!(
            "      <PDataArray type=\"Float64\" Name=\"{name}\" NumberOfComponents=\"{comps}\"/>\n"
        );
    }
    xml += "    </PCellData>\n";
    for (cells, source) in sources {
        xml += &format!(
            "    <Piece Extent=\"{}\" Source=\"{source}\"/>\n",
            extent(cells, f)
        );
    }
    xml += "  </PImageData>\n</VTKFile>\n";
    ("pvti", xml.into_bytes())
}

/// A multiblock file (`.vtm`) of the image pieces `datasets` (each a name and a file relative
/// to it) of a lattice whose extent is `whole`: VTK's reader passes over `WholeExtent`,
/// [`read_joined`] takes the lattice from it.
fn multiblock_file(whole: &str, datasets: impl Iterator<Item = (String, String)>) -> Vec<u8> {
    let mut xml = format!(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"vtkMultiBlockDataSet\" version=\"1.0\" \
         byte_order=\"LittleEndian\" header_type=\"UInt64\">\n  <vtkMultiBlockDataSet \
         WholeExtent=\"{whole}\">\n"
    );
    for (k, (name, file)) in datasets.enumerate() {
        xml += &format!("    <DataSet index=\"{k}\" name=\"{name}\" file=\"{file}\"/>\n");
    }
    xml += "  </vtkMultiBlockDataSet>\n</VTKFile>\n";
    xml.into_bytes()
}

/// Writes [`joined`]`(f, sources, multiblock)` to `<stem>.pvti` or `<stem>.vtm`, atomically,
/// and returns that path.
pub fn write_joined(
    stem: &Path,
    f: &Fields,
    sources: &Sources,
    multiblock: bool,
) -> Result<PathBuf, OutputError> {
    let (ext, bytes) = joined(f, sources, multiblock);
    let path = stem.with_extension(ext);
    write_file(&path, &[&bytes])?;
    Ok(path)
}

/// The `.pvd` time series of a run: one `.pvti` (or `.vtm`) per output step, rewritten whole (atomically)
/// at every step.
#[derive(Debug)]
pub struct Series {
    path: PathBuf,
    steps: Vec<(u64, String)>,
}

impl Series {
    /// A new series at `path` (nothing is written until the first step).
    pub fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            steps: Vec::new(),
        }
    }

    /// The series at `path` continued after step `step` (a resumed run): the steps it holds up
    /// to `step` are kept, later ones (written after the checkpoint) dropped. A missing file,
    /// or one that is not a regular text file of at most [`super::READ_LIMIT`] bytes (which
    /// the new series then refuses to replace), starts a new series.
    pub fn resume(path: &Path, step: u64) -> Self {
        let mut s = Self::new(path);
        let text = crate::io::read_bounded(path, super::READ_LIMIT)
            .ok()
            .and_then(|b| String::from_utf8(b).ok());
        if let Some(text) = text {
            s.steps = text
                .lines()
                .filter_map(|l| {
                    Some((
                        attribute(l, "timestep")?.parse().ok()?,
                        attribute(l, "file")?,
                    ))
                })
                .filter(|(t, _)| *t <= step)
                .collect();
        }
        s
    }

    /// Adds the `.pvti` or `.vtm` `file` (relative to the series) of step `step` and rewrites the series.
    pub fn push(&mut self, step: u64, file: String) -> Result<(), OutputError> {
        self.steps.retain(|(t, _)| *t < step);
        self.steps.push((step, file));
        let mut xml = String::from(
            "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"1.0\" \
             byte_order=\"LittleEndian\">\n  <Collection>\n",
        );
        for (t, f) in &self.steps {
            xml += &format!("    <DataSet timestep=\"{t}\" part=\"0\" file=\"{f}\"/>\n");
        }
        xml += "  </Collection>\n</VTKFile>\n";
        write_file(&self.path, &[xml.as_bytes()])
    }

    /// Writes the file joining the pieces `sources` of step `step` at `stem`
    /// ([`write_joined`]) and adds it to the series. Its steps stay one kind of dataset, since
    /// ParaView's reader of a series (`vtkPVDReader`) makes its output of the kind of the first
    /// step: where the series holds `.vtm` steps (a sparse domain's), so does the step added,
    /// even where its pieces cover the lattice (a sparse run resumed on the whole box); where a
    /// `.vtm` step follows image steps (a dense run resumed on a sparse domain), those are
    /// rewritten as multiblock files of their pieces.
    pub fn add(
        &mut self,
        step: u64,
        stem: &Path,
        (f, sources): (&Fields, &Sources),
    ) -> Result<PathBuf, OutputError> {
        let multiblock = self
            .steps
            .iter()
            .any(|(t, file)| *t < step && file.ends_with(".vtm"));
        let path = write_joined(stem, f, sources, multiblock)?;
        if !multiblock && path.extension().is_some_and(|e| e == "vtm") {
            self.rewrite_as_multiblock()?;
        }
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        self.push(step, name.into_owned())?;
        Ok(path)
    }

    /// Rewrites the series' image steps (`<stem>.pvti`) as multiblock files of the same pieces
    /// (`<stem>.vtm` beside each; the `.pvti` stays); a step whose `.pvti` cannot be read is
    /// left as it is.
    fn rewrite_as_multiblock(&mut self) -> Result<(), OutputError> {
        let dir = self.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        for (_, file) in &mut self.steps {
            let Some(stem) = file.strip_suffix(".pvti") else {
                continue;
            };
            let Ok(bytes) = crate::io::read_bounded(&dir.join(&*file), super::READ_LIMIT) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes);
            let Some(whole) = text.lines().find_map(|l| attribute(l, "WholeExtent")) else {
                continue;
            };
            let pieces = (text.lines())
                .filter(|l| l.contains("<Piece "))
                .filter_map(|l| attribute(l, "Source"))
                .enumerate()
                .map(|(k, source)| (format!("block {k}"), source));
            let vtm = format!("{stem}.vtm");
            write_file(&dir.join(&vtm), &[&multiblock_file(&whole, pieces)])?;
            *file = vtm;
        }
        Ok(())
    }

    /// The series' file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// The value of `name="…"` in a line of XML.
fn attribute(line: &str, name: &str) -> Option<String> {
    let start = line.find(&format!(" {name}=\""))? + name.len() + 3;
    let len = line[start..].find('"')?;
    Some(line[start..start + len].to_string())
}

/// The fields of a `.pvti` or `.vtm` written by this module (or of one `.vti` that holds them
/// all), read back whole: the lattice's size and, for each array, its name, its components and
/// its values cell after cell (x fastest) over the whole lattice, 0 where no piece holds a cell
/// (post-processing, and the tests that compare runs).
pub fn read_joined(path: &Path) -> Result<Joined, OutputError> {
    let bad = |why: String| OutputError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, why),
    };
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| OutputError::Io { path: p, source }
    };
    // A `.vti`'s appended data is binary: its XML is read up to them.
    let bytes = std::fs::read(path).map_err(io(path))?;
    let xml = bytes.windows(13).position(|w| w == b"<AppendedData");
    let text = String::from_utf8_lossy(&bytes[..xml.unwrap_or(bytes.len())]).into_owned();
    let whole = text
        .lines()
        .find_map(|l| attribute(l, "WholeExtent"))
        .ok_or_else(|| bad("no WholeExtent".into()))?;
    let ext = |e: &str| -> Vec<usize> { e.split(' ').filter_map(|v| v.parse().ok()).collect() };
    let w = ext(&whole);
    let (lx, ly, lz) = (w[1], w[3], w[5].max(1));
    let mut out = Joined {
        lx,
        ly,
        lz,
        arrays: Vec::new(),
    };
    if text.contains("type=\"ImageData\"") {
        out.arrays = read_piece(&bytes).map_err(bad)?;
        return Ok(out);
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    // A `.pvti`'s pieces, `Source` files; a `.vtm`'s datasets, `file`s (their extents in them).
    let sources = text.lines().filter_map(|l| match l.contains("<Piece ") {
        true => attribute(l, "Source"),
        false => attribute(l, "file").filter(|_| l.contains("<DataSet ")),
    });
    for source in sources {
        let piece_path = dir.join(&source);
        let bytes = std::fs::read(&piece_path).map_err(io(&piece_path))?;
        let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]).into_owned();
        let e = (head.lines().find_map(|l| attribute(l, "Extent")))
            .map(|e| ext(&e))
            .ok_or_else(|| bad(format!("the piece {source} has no Extent")))?;
        for (k, (name, comps, values)) in read_piece(&bytes).map_err(bad)?.into_iter().enumerate() {
            if out.arrays.len() <= k {
                out.arrays
                    .push((name.clone(), comps, vec![0.0; lx * ly * lz * comps]));
            }
            // The piece's rows (along x) in order, y then z; in 2-D one layer, `0 0`.
            let (nx, ny, nz) = (e[1] - e[0], e[3] - e[2], (e[5] - e[4]).max(1));
            for row in 0..ny * nz {
                let (y, z) = (e[2] + row % ny, e[4] + row / ny);
                let (to, from) = (((z * ly + y) * lx + e[0]) * comps, row * nx * comps);
                let n = nx * comps;
                out.arrays[k].2[to..to + n].copy_from_slice(&values[from..from + n]);
            }
        }
    }
    Ok(out)
}

/// A dataset read by [`read_joined`].
#[derive(Debug, Clone, PartialEq)]
pub struct Joined {
    /// Lattice width.
    pub lx: usize,
    /// Lattice height.
    pub ly: usize,
    /// Lattice depth (1 in 2-D).
    pub lz: usize,
    /// Name, components and values (cell after cell, x fastest, then y, then z) of every
    /// array.
    pub arrays: Vec<(String, usize, Vec<f64>)>,
}

/// The arrays of a `.vti` written by [`piece`].
fn read_piece(bytes: &[u8]) -> Result<Vec<(String, usize, Vec<f64>)>, String> {
    let start = bytes
        .windows(13)
        .position(|w| w == b"<AppendedData")
        .and_then(|p| {
            bytes[p..]
                .iter()
                .position(|&b| b == b'_')
                .map(|q| p + q + 1)
        })
        .ok_or("no appended data")?;
    let head = String::from_utf8_lossy(&bytes[..start]);
    let zlib = head.contains("vtkZLibDataCompressor");
    let u64_at = |o: usize| -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            bytes
                .get(start + o..start + o + 8)
                .ok_or("truncated")?
                .try_into()
                .map_err(|_| "truncated")?,
        ))
    };
    let mut out = Vec::new();
    for line in head.lines().filter(|l| l.contains("<DataArray ")) {
        let name = attribute(line, "Name").ok_or("an array without a name")?;
        let comps = attribute(line, "NumberOfComponents")
            .and_then(|c| c.parse().ok())
            .unwrap_or(1);
        let offset: usize = attribute(line, "offset")
            .and_then(|o| o.parse().ok())
            .ok_or("no offset")?;
        let raw = if zlib {
            let blocks = u64_at(offset)? as usize;
            let sizes: Vec<usize> = (0..blocks)
                .map(|b| u64_at(offset + 24 + 8 * b).map(|s| s as usize))
                .collect::<Result<_, _>>()?;
            let mut at = start + offset + 24 + 8 * blocks;
            let mut raw = Vec::new();
            for s in sizes {
                let mut z = flate2::write::ZlibDecoder::new(Vec::new());
                z.write_all(bytes.get(at..at + s).ok_or("truncated")?)
                    .map_err(|e| e.to_string())?;
                raw.extend(z.finish().map_err(|e| e.to_string())?);
                at += s;
            }
            raw
        } else {
            let n = u64_at(offset)? as usize;
            bytes
                .get(start + offset + 8..start + offset + 8 + n)
                .ok_or("truncated")?
                .to_vec()
        };
        let values = raw
            .chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        out.push((name, comps, values));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(lx: usize, ly: usize) -> Fields {
        let idx: Vec<f64> = (0..lx * ly).map(|s| s as f64).collect();
        Fields::new(
            (lx, ly),
            7,
            1.0,
            vec![
                ("rho", idx.clone()),
                ("ux", idx.iter().map(|v| 0.5 * v).collect()),
                ("uy", vec![-1.0; lx * ly]),
            ],
        )
        .unwrap()
    }

    /// The piece of `whole` (a 2-D lattice of [`fields`]) on the box `cells`.
    fn piece_of(whole: &Fields, cells: &[Range<usize>; 3]) -> Fields {
        let [xs, ys, _] = cells.clone();
        let ly = whole.ly;
        let data = (whole.data().iter())
            .map(|d| {
                let ys = ys.clone();
                xs.clone()
                    .flat_map(|x| ys.clone().map(move |y| d[x * ly + y]))
                    .collect()
            })
            .collect();
        let size = [whole.lx, ly, 1];
        Fields::piece::<crate::models::D2Q9Bgk>(size, cells.clone(), 7, data).unwrap()
    }

    /// Pieces written apart — whole columns and blocks of a cut along y — and joined read back
    /// as the whole lattice, x fastest, raw and compressed; without the block `[2, 5) × [0, 1)`
    /// (a sparse domain's block left out), a `.vtm` of the others that reads back as the
    /// lattice with 0 there.
    #[test]
    fn pieces_join_into_the_whole_lattice() {
        let (lx, ly) = (5, 3);
        let whole = fields(lx, ly);
        let dir = tempfile::tempdir().unwrap();
        // (compressed, a block left out, a `.vtm` asked for though the pieces cover all)
        let cases = [
            (false, false, false),
            (true, false, false),
            (false, true, false),
            (true, true, false),
            (false, false, true),
        ];
        for (zlib, left_out, multiblock) in cases {
            let mut sources = Vec::new();
            // Whole columns and blocks: columns 0..2, and 2..5 cut along y.
            let boxes = [[0..2, 0..3, 0..1], [2..5, 0..1, 0..1], [2..5, 1..3, 0..1]];
            let kept = boxes
                .into_iter()
                .enumerate()
                .filter(|&(k, _)| !left_out || k != 1);
            for (k, cells) in kept {
                let p = piece_of(&whole, &cells);
                let name = format!("p{k}.vti");
                write_piece(&dir.path().join(&name), &p, zlib).unwrap();
                sources.push((cells, name));
            }
            let joined =
                write_joined(&dir.path().join("all"), &whole, &sources, multiblock).unwrap();
            let ext = if left_out || multiblock {
                "vtm"
            } else {
                "pvti"
            };
            assert_eq!(joined, dir.path().join(format!("all.{ext}")));
            let back = read_joined(&joined).unwrap();
            assert_eq!((back.lx, back.ly), (lx, ly));
            let rho = &back.arrays[0];
            assert_eq!((rho.0.as_str(), rho.1), ("rho", 1));
            // x fastest: (0,0), (1,0), … = indices 0, 3, 6, 9, 12, 1, …, every cell once.
            let kept = |x: usize, y: usize| !left_out || x < 2 || y > 0;
            let want: Vec<f64> = (0..ly)
                .flat_map(|y| (0..lx).map(move |x| (x * ly + y) as f64 * f64::from(kept(x, y))))
                .collect();
            assert_eq!(rho.2, want);
            let u = &back.arrays[1];
            assert_eq!((u.0.as_str(), u.1), ("velocity", 3));
            assert_eq!(u.2[3..6], [1.5, -1.0, 0.0]);
            if left_out || multiblock {
                let text = std::fs::read_to_string(&joined).unwrap();
                assert_eq!(text.matches("<DataSet ").count(), sources.len(), "{text}");
            }
        }
    }

    #[test]
    fn a_series_of_multiblock_steps_stays_one() {
        let (lx, ly) = (5, 3);
        let whole = fields(lx, ly);
        let dir = tempfile::tempdir().unwrap();
        let sources = [([0..lx, 0..ly, 0..1], "p.vti".to_string())];
        let stem = |t: u64| dir.path().join(format!("run_{t:08}"));
        let path = dir.path().join("run.pvd");
        let added = Series::new(&path).add(0, &stem(0), (&whole, &sources));
        assert_eq!(
            added.unwrap(),
            stem(0).with_extension("pvti"),
            "a whole box"
        );
        let mut s = Series::new(&path);
        s.push(0, "run_00000000.vtm".into()).unwrap();
        let mut r = Series::resume(&path, 0);
        let added = r.add(10, &stem(10), (&whole, &sources)).unwrap();
        assert_eq!(added, stem(10).with_extension("vtm"), "after a sparse step");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("file=\"run_00000010.vtm\""), "{text}");
    }

    #[test]
    fn a_sparse_step_after_image_steps_makes_them_multiblock() {
        let whole = fields(5, 3);
        let dir = tempfile::tempdir().unwrap();
        let mut sources = Vec::new();
        for (k, cells) in [[0..2, 0..3, 0..1], [2..5, 0..3, 0..1]]
            .into_iter()
            .enumerate()
        {
            let name = format!("p{k}.vti");
            write_piece(&dir.path().join(&name), &piece_of(&whole, &cells), false).unwrap();
            sources.push((cells, name));
        }
        let stem = |t: u64| dir.path().join(format!("run_{t:08}"));
        let path = dir.path().join("run.pvd");
        let mut s = Series::new(&path);
        let image = s.add(0, &stem(0), (&whole, &sources)).unwrap();
        assert_eq!(image, stem(0).with_extension("pvti"));
        let sparse = s.add(10, &stem(10), (&whole, &sources[..1])).unwrap();
        assert_eq!(sparse, stem(10).with_extension("vtm"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains("file=\"run_00000000.vtm\"") && !text.contains(".pvti"),
            "{text}"
        );
        let (before, after) = (
            read_joined(&image),
            read_joined(&stem(0).with_extension("vtm")),
        );
        let (before, after) = (before.unwrap(), after.unwrap());
        assert_eq!(
            (after.lx, after.ly, after.lz),
            (before.lx, before.ly, before.lz)
        );
        assert_eq!(
            after.arrays, before.arrays,
            "the image step's pieces, as a multiblock"
        );
    }

    #[test]
    fn the_series_keeps_the_steps_before_a_resumed_step() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.pvd");
        let mut s = Series::new(&path);
        for t in [0, 100, 200] {
            s.push(t, format!("run_{t:08}.pvti")).unwrap();
        }
        let mut r = Series::resume(&path, 100);
        r.push(150, "run_00000150.pvti".into()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("timestep=\"100\"") && text.contains("timestep=\"150\""));
        assert!(!text.contains("timestep=\"200\""));
    }
}
