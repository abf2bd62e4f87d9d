//! A scalar field as a PNG image: viridis colour map, one square of `scale × scale` pixels per
//! site (`y` up), and a colour bar on the right labelled with the values of its ends.

use std::path::Path;

use super::{OutputError, write_file};

/// A colour: red, green, blue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rgb(pub [u8; 3]);

/// An 8-bit RGB picture, rows top to bottom, as the PNG stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Picture {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Picture {
    /// A `width × height` picture of one colour.
    pub fn filled(width: u32, height: u32, c: Rgb) -> Self {
        let rgb = c.0.repeat(width as usize * height as usize);
        Self { width, height, rgb }
    }

    /// Width and height in pixels.
    pub fn dimensions(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    fn at(&self, x: u32, y: u32) -> usize {
        3 * (y as usize * self.width as usize + x as usize)
    }

    /// The colour of pixel `(x, y)` (`y` down).
    pub fn get(&self, x: u32, y: u32) -> Rgb {
        let i = self.at(x, y);
        Rgb([self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]])
    }

    /// Sets pixel `(x, y)` (`y` down) to `c`.
    pub fn put(&mut self, x: u32, y: u32, c: Rgb) {
        let i = self.at(x, y);
        self.rgb[i..i + 3].copy_from_slice(&c.0);
    }

    /// The picture encoded as a PNG (8-bit RGB).
    pub fn encode(&self) -> Result<Vec<u8>, ::png::EncodingError> {
        let mut bytes = Vec::new();
        let mut encoder = ::png::Encoder::new(&mut bytes, self.width, self.height);
        encoder.set_color(::png::ColorType::Rgb);
        encoder.set_depth(::png::BitDepth::Eight);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&self.rgb)?;
        writer.finish()?;
        Ok(bytes)
    }

    /// Reads back a PNG such as [`write_field`] writes (8-bit RGB).
    pub fn read(path: &Path) -> Result<Self, OutputError> {
        let io = |source| OutputError::Io {
            path: path.to_path_buf(),
            source,
        };
        let bad = |why: String| {
            io(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("not an 8-bit RGB PNG: {why}"),
            ))
        };
        let file = std::io::BufReader::new(std::fs::File::open(path).map_err(io)?);
        let mut reader = ::png::Decoder::new(file)
            .read_info()
            .map_err(|e| bad(e.to_string()))?;
        let size = reader
            .output_buffer_size()
            .ok_or_else(|| bad("too large".into()))?;
        let mut rgb = vec![0; size];
        let frame = reader
            .next_frame(&mut rgb)
            .map_err(|e| bad(e.to_string()))?;
        if (frame.color_type, frame.bit_depth) != (::png::ColorType::Rgb, ::png::BitDepth::Eight) {
            return Err(bad(format!("{:?} {:?}", frame.color_type, frame.bit_depth)));
        }
        rgb.truncate(frame.buffer_size());
        Ok(Self {
            width: frame.width,
            height: frame.height,
            rgb,
        })
    }
}

/// The largest side of an image, in pixels: a larger lattice is drawn sampled every
/// [`sampling`] sites, so that what is gathered for an image is bounded, never the lattice.
pub const IMAGE_SIDE: usize = 2048;

/// The sampling step `k` of the image of an `lx × ly` lattice: the smallest with
/// `⌈max(lx, ly) / k⌉ ≤` [`IMAGE_SIDE`].
pub fn sampling(lx: usize, ly: usize) -> usize {
    lx.max(ly).div_ceil(IMAGE_SIDE).max(1)
}

/// Viridis, sampled at 5 stops (van der Walt & Smith, matplotlib).
const VIRIDIS: [[f64; 3]; 5] = [
    [68.0, 1.0, 84.0],
    [59.0, 82.0, 139.0],
    [33.0, 145.0, 140.0],
    [94.0, 201.0, 98.0],
    [253.0, 231.0, 37.0],
];

/// The colour of `t ∈ [0, 1]`, interpolated linearly between the stops.
fn colour(t: f64) -> Rgb {
    let s = t.clamp(0.0, 1.0) * (VIRIDIS.len() - 1) as f64;
    let i = (s.floor() as usize).min(VIRIDIS.len() - 2);
    let f = s - i as f64;
    let c = |k: usize| ((1.0 - f) * VIRIDIS[i][k] + f * VIRIDIS[i + 1][k]).round() as u8;
    Rgb([c(0), c(1), c(2)])
}

/// Width in pixels of the colour bar, of the gaps around it, and the scale of the label font.
const BAR: u32 = 12;
const GAP: u32 = 4;
const FONT: u32 = 2;
/// Characters of the longest label.
const LABEL: u32 = 10;
/// The smallest image side: small lattices are magnified by an integer factor up to it.
const MIN_SIDE: usize = 256;

/// Glyphs 3 pixels wide and 5 high (rows top to bottom, bit 2 = left column) for the labels.
fn glyph(c: char) -> [u8; 5] {
    match c {
        '0' => [7, 5, 5, 5, 7],
        '1' => [2, 6, 2, 2, 7],
        '2' => [7, 1, 7, 4, 7],
        '3' => [7, 1, 7, 1, 7],
        '4' => [5, 5, 7, 1, 1],
        '5' => [7, 4, 7, 1, 7],
        '6' => [7, 4, 7, 5, 7],
        '7' => [7, 1, 1, 1, 1],
        '8' => [7, 5, 7, 5, 7],
        '9' => [7, 5, 7, 1, 7],
        '.' => [0, 0, 0, 0, 2],
        '-' => [0, 0, 7, 0, 0],
        '+' => [0, 2, 7, 2, 0],
        'e' => [7, 4, 7, 4, 7],
        _ => [0; 5],
    }
}

/// A label of at most [`LABEL`] characters for `v`.
fn label(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || (1e-3..1e5).contains(&a) {
        let s = format!("{v:.5}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.chars().take(LABEL as usize).collect()
    } else {
        format!("{v:.2e}")
    }
}

/// Draws `text` in black with its top-left corner at `(x, y)`.
fn draw_text(img: &mut Picture, text: &str, x: u32, y: u32) {
    for (k, c) in text.chars().enumerate() {
        for (row, bits) in glyph(c).iter().enumerate() {
            for col in 0..3 {
                if bits & (4 >> col) == 0 {
                    continue;
                }
                for (dx, dy) in (0..FONT).flat_map(|a| (0..FONT).map(move |b| (a, b))) {
                    let px = x + (k as u32 * 4 + col) * FONT + dx;
                    let py = y + row as u32 * FONT + dy;
                    if px < img.width && py < img.height {
                        img.put(px, py, Rgb([0, 0, 0]));
                    }
                }
            }
        }
    }
}

/// The image of `field` (indexed `[x·ly + y]`, `y` up) coloured from `lo` to `hi`, with the
/// colour bar and its labels.
pub fn render(field: &[f64], lx: usize, ly: usize, (lo, hi): (f64, f64)) -> Picture {
    let scale = (MIN_SIDE / lx.max(ly)).max(1) as u32;
    let (w, h) = (lx as u32 * scale, (ly as u32 * scale).max(6 * FONT * 2));
    let span = if hi > lo { hi - lo } else { 1.0 };
    let text_w = LABEL * 4 * FONT;
    let mut img = Picture::filled(w + 2 * GAP + BAR + text_w, h, Rgb([255, 255, 255]));
    for x in 0..lx {
        for y in 0..ly {
            let c = colour((field[x * ly + y] - lo) / span);
            for (dx, dy) in (0..scale).flat_map(|a| (0..scale).map(move |b| (a, b))) {
                img.put(x as u32 * scale + dx, (ly - 1 - y) as u32 * scale + dy, c);
            }
        }
    }
    for py in 0..h {
        let t = 1.0 - py as f64 / (h.max(2) - 1) as f64;
        for px in w + GAP..w + GAP + BAR {
            img.put(px, py, colour(t));
        }
    }
    let tx = w + 2 * GAP + BAR;
    draw_text(&mut img, &label(hi), tx, 0);
    draw_text(&mut img, &label(lo), tx, h - 5 * FONT);
    img
}

/// The range of the finite values of `field` (`(0, 1)` when there are none).
pub fn range(field: &[f64]) -> (f64, f64) {
    let (lo, hi) = field
        .iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(*v), b.max(*v))
        });
    if lo <= hi { (lo, hi) } else { (0.0, 1.0) }
}

/// Writes [`render`]`(field, lx, ly, range)` to `path` as a PNG, atomically.
pub fn write_field(
    path: &Path,
    field: &[f64],
    lx: usize,
    ly: usize,
    range: (f64, f64),
) -> Result<(), OutputError> {
    let bytes = render(field, lx, ly, range)
        .encode()
        .map_err(|source| OutputError::Image {
            path: path.to_path_buf(),
            source,
        })?;
    write_file(path, &[&bytes])
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
    fn labels_are_short() {
        assert_eq!(label(0.9), "0.9");
        assert_eq!(label(-12.5), "-12.5");
        assert_eq!(label(2.5e-5), "2.50e-5");
        assert!(label(-1.234567e12).len() <= LABEL as usize);
    }

    #[test]
    fn writes_a_magnified_png_with_a_colour_bar() {
        let dir = std::env::temp_dir().join(format!("lbm-png-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.png");
        let field: Vec<f64> = (0..64 * 32).map(|i| i as f64).collect();
        write_field(&path, &field, 64, 32, range(&field)).unwrap();
        let img = Picture::read(&path).unwrap();
        // 64 × 32 sites are magnified 4× to 256 × 128 pixels.
        assert_eq!(
            img.dimensions(),
            (256 + 2 * GAP + BAR + LABEL * 4 * FONT, 128)
        );
        // Site (0, 0) is the minimum, drawn bottom-left; the bar's top is the maximum.
        assert_eq!(img.get(0, 127), colour(0.0));
        assert_eq!(img.get(256 + GAP, 0), colour(1.0));
        // The labels are drawn in black beside the bar.
        let tx = 256 + 2 * GAP + BAR;
        assert!((tx..img.dimensions().0).any(|x| img.get(x, 0) == Rgb([0, 0, 0])));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
