//! Fields as a legacy VTK file (`DATASET STRUCTURED_POINTS`, binary), which ParaView, VisIt
//! and the `vtk` Python package open directly: one point per site at `(x, y, 0)`, spacing 1,
//! with every moment as a scalar (`rho`, `T`), the velocity as a vector and the vorticity.
//!
//! Legacy binary VTK stores big-endian values with x varying fastest; the fields are indexed
//! `[x·LY + y]`, so they are transposed on the way out.

use std::path::Path;

use super::{write_file, Fields, OutputError};

/// The file's bytes.
pub fn encode(f: &Fields, title: &str) -> Vec<u8> {
    let (lx, ly) = (f.lx, f.ly);
    let n = lx * ly;
    let title: String = title.chars().filter(|c| *c != '\n').take(255).collect();
    let mut out = format!(
        "# vtk DataFile Version 3.0\n{title}\nBINARY\nDATASET STRUCTURED_POINTS\n\
         DIMENSIONS {lx} {ly} 1\nORIGIN 0 0 0\nSPACING 1 1 1\nPOINT_DATA {n}\n"
    )
    .into_bytes();
    let values = |out: &mut Vec<u8>, fields: &[&[f64]]| {
        for y in 0..ly {
            for x in 0..lx {
                for field in fields {
                    out.extend_from_slice(&field[x * ly + y].to_be_bytes());
                }
            }
        }
        out.push(b'\n');
    };
    for name in f.names().iter().filter(|n| !matches!(**n, "ux" | "uy")) {
        out.extend(format!("SCALARS {name} double 1\nLOOKUP_TABLE default\n").bytes());
        values(&mut out, &[f.moment(name).expect("a listed moment")]);
    }
    if let (Some(ux), Some(uy)) = (f.moment("ux"), f.moment("uy")) {
        let zero = vec![0.0; n];
        out.extend(b"VECTORS velocity double\n");
        values(&mut out, &[ux, uy, &zero]);
        out.extend(b"SCALARS vorticity double 1\nLOOKUP_TABLE default\n");
        values(&mut out, &[&f.vorticity()]);
    }
    out
}

/// Writes [`encode`]`(f, title)` to `path`, atomically.
pub fn write(path: &Path, f: &Fields, title: &str) -> Result<(), OutputError> {
    write_file(path, &[&encode(f, title)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_values_in_vtk_order() {
        let (lx, ly) = (3, 2);
        let idx: Vec<f64> = (0..lx * ly).map(|s| s as f64).collect();
        let f = Fields::new(
            (lx, ly),
            7,
            1.0,
            vec![
                ("rho", idx.clone()),
                ("ux", vec![0.5; 6]),
                ("uy", vec![0.0; 6]),
            ],
        )
        .unwrap();
        let bytes = encode(&f, "test");
        let text = String::from_utf8_lossy(&bytes);
        assert!(text.starts_with("# vtk DataFile Version 3.0\ntest\nBINARY\n"));
        assert!(text.contains("DIMENSIONS 3 2 1\n") && text.contains("POINT_DATA 6\n"));
        let at = text.find("LOOKUP_TABLE default\n").unwrap() + "LOOKUP_TABLE default\n".len();
        let rho: Vec<f64> = bytes[at..at + 48]
            .chunks(8)
            .map(|b| f64::from_be_bytes(b.try_into().unwrap()))
            .collect();
        // x fastest: (0,0), (1,0), (2,0), (0,1), … = indices 0, 2, 4, 1, 3, 5.
        assert_eq!(rho, [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]);
        assert!(text.contains("VECTORS velocity double\n"));
        assert!(text.contains("SCALARS vorticity double 1\n"));
        // Header, rho, the vector and vorticity blocks, each ending with a newline.
        let header = text.find("SCALARS rho").unwrap();
        let blocks = "SCALARS rho double 1\nLOOKUP_TABLE default\n".len()
            + "VECTORS velocity double\n".len()
            + "SCALARS vorticity double 1\nLOOKUP_TABLE default\n".len()
            + 8 * (6 + 18 + 6)
            + 3;
        assert_eq!(bytes.len(), header + blocks);
    }
}
