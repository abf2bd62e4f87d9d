//! Writing a scalar field as a PNG image (viridis colour map, a colour bar on the right).

use std::path::Path;

use image::{Rgb, RgbImage};

use super::CliError;

/// Viridis, sampled at 5 stops (van der Walt & Smith, matplotlib).
const VIRIDIS: [[f64; 3]; 5] = [
    [68.0, 1.0, 84.0],
    [59.0, 82.0, 139.0],
    [33.0, 145.0, 140.0],
    [94.0, 201.0, 98.0],
    [253.0, 231.0, 37.0],
];

/// The colour of `t ∈ [0, 1]`, interpolated linearly between the stops.
fn colour(t: f64) -> Rgb<u8> {
    let s = t.clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f64;
    let i = (s.floor() as usize).min(VIRIDIS.len() - 2);
    let f = s - i as f64;
    let c = |k: usize| ((1.0 - f) * VIRIDIS[i][k] + f * VIRIDIS[i + 1][k]).round() as u8;
    Rgb([c(0), c(1), c(2)])
}

/// Width in pixels of the colour bar and of the gap before it.
const BAR: u32 = 12;
const GAP: u32 = 4;

/// Writes `field` (indexed `[x·ly + y]`, `y` up) scaled from `lo` to `hi` to `path`, one
/// pixel per site, with a colour bar from `lo` (bottom) to `hi` (top) on the right.
pub fn write_field(
    path: &Path,
    field: &[f64],
    lx: usize,
    ly: usize,
    (lo, hi): (f64, f64),
) -> Result<(), CliError> {
    let (w, h) = (lx as u32, ly as u32);
    let span = if hi > lo { hi - lo } else { 1.0 };
    let mut img = RgbImage::from_pixel(w + GAP + BAR, h, Rgb([255, 255, 255]));
    for x in 0..lx {
        for y in 0..ly {
            let t = (field[x * ly + y] - lo) / span;
            img.put_pixel(x as u32, h - 1 - y as u32, colour(t));
        }
    }
    for py in 0..h {
        let t = 1.0 - py as f64 / (h.max(2) - 1) as f64;
        for px in w + GAP..w + GAP + BAR {
            img.put_pixel(px, py, colour(t));
        }
    }
    img.save(path).map_err(|source| CliError::Image {
        path: path.display().to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_map_ends_at_the_stops() {
        assert_eq!(colour(0.0), Rgb([68, 1, 84]));
        assert_eq!(colour(1.0), Rgb([253, 231, 37]));
        assert_eq!(colour(2.0), colour(1.0));
    }

    #[test]
    fn writes_a_png_with_a_colour_bar() {
        let dir = std::env::temp_dir().join(format!("lbm-png-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.png");
        let field: Vec<f64> = (0..6 * 4).map(|i| i as f64).collect();
        write_field(&path, &field, 6, 4, (0.0, 23.0)).unwrap();
        let img = image::open(&path).unwrap().to_rgb8();
        assert_eq!(img.dimensions(), (6 + GAP + BAR, 4));
        // Site (0, 0) is the minimum, drawn bottom-left; the bar's top is the maximum.
        assert_eq!(*img.get_pixel(0, 3), colour(0.0));
        assert_eq!(*img.get_pixel(6 + GAP, 0), colour(1.0));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
