//! Files written whole or not at all: every output of a run (checkpoints, images, VTK files,
//! diagnostics) goes through [`write_atomically`], so a crash or a full disk leaves either the
//! previous file or the new one, never a truncated mixture.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Writes the concatenation of `parts` to `path` atomically ([`write_atomically_with`]).
pub fn write_atomically(path: &Path, parts: &[&[u8]]) -> io::Result<()> {
    write_atomically_with(path, |w| parts.iter().try_for_each(|p| w.write_all(p)))
}

/// Writes what `write` writes (buffered) to a temporary file beside `path`, flushes it to disk
/// (fsync), renames it over `path` and syncs the directory. On failure the temporary file is
/// removed and `path` is untouched.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a file name", path.display()),
        )
    })?;
    let tmp = dir.join(format!(
        ".{}.tmp{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        // A file of that name left by a process that died (or a link planted there) is
        // removed, never written through: the temporary file is always a new one.
        match fs::remove_file(&tmp) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let fresh = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        let mut file = BufWriter::with_capacity(1 << 20, fresh);
        write(&mut file)?;
        let file = file.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("lbm-io-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("a.txt");
        write_atomically(&path, &[b"old"]).unwrap();
        write_atomically(&path, &[b"ne", b"w"]).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 1);
        assert!(write_atomically(&dir.join("missing").join("b"), &[b"x"]).is_err());
        fs::remove_dir_all(&dir).unwrap();
    }

    /// A symbolic link planted at the output's name, or at its temporary's, is replaced:
    /// nothing is written where it points.
    #[cfg(unix)]
    #[test]
    fn links_are_replaced_never_followed() {
        let dir = std::env::temp_dir().join(format!("lbm-io-link-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim.txt");
        fs::write(&victim, b"keep").unwrap();
        let out = dir.join("out.txt");
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        write_atomically(&out, &[b"new"]).unwrap();
        assert!(!fs::symlink_metadata(&out).unwrap().file_type().is_symlink());
        let tmp = dir.join(format!(".out2.txt.tmp{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &tmp).unwrap();
        write_atomically(&dir.join("out2.txt"), &[b"x"]).unwrap();
        assert_eq!(fs::read(&victim).unwrap(), b"keep");
        assert_eq!(fs::read(&out).unwrap(), b"new");
        fs::remove_dir_all(&dir).unwrap();
    }
}
