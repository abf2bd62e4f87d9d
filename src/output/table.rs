//! Tables of numbers a case writes beside its outputs, as CSV: a centre-line profile, a
//! spectrum — what a reader plots against published data.

use std::fmt::Write;
use std::path::Path;

use super::{OutputError, write_file};

/// A named table: a header of column names and rows of numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// The table's name, part of its file name (`<case>_<name>_<step>.csv`).
    pub name: &'static str,
    /// Column names.
    pub columns: Vec<&'static str>,
    /// Rows, each with one value per column.
    pub rows: Vec<Vec<f64>>,
}

impl Table {
    /// The CSV text: the header, then one line per row, values to 17 significant digits (they
    /// read back to the same `f64`).
    pub fn csv(&self) -> String {
        let mut text = self.columns.join(",");
        text.push('\n');
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(|v| format!("{v:.16e}")).collect();
            let _ = writeln!(text, "{}", cells.join(","));
        }
        text
    }

    /// Writes [`Table::csv`] to `path`, whole or not at all.
    pub fn write(&self, path: &Path) -> Result<(), OutputError> {
        write_file(path, &[self.csv().as_bytes()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_has_a_header_and_exact_values() {
        let t = Table {
            name: "line",
            columns: vec!["y", "u"],
            rows: vec![vec![0.25, 0.1], vec![0.75, -1.0 / 3.0]],
        };
        let csv = t.csv();
        let mut lines = csv.lines();
        assert_eq!(lines.next(), Some("y,u"));
        let last: Vec<f64> = lines
            .nth(1)
            .unwrap()
            .split(',')
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!(last, vec![0.75, -1.0 / 3.0]);
    }
}
