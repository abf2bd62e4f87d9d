//! Files written whole or not at all, and read only when they are files.
//!
//! Every output of a run (checkpoints, images, VTK files, diagnostics) goes through
//! [`write_atomically`], so a crash or a full disk leaves either the previous file or the new
//! one, never a truncated mixture; an output replaces only a regular file, never a device, a
//! pipe, a directory or a link. Every input (case files, checkpoints, meshes) is opened by
//! [`open_regular`], which refuses what is not a regular file without blocking on it (opening
//! a named pipe for reading waits for a writer), and read by [`read_bounded`] where its whole
//! contents are held in memory.

use std::fs::{self, File};
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;

/// What a file of type `t` is, in words ("a named pipe (FIFO)").
pub fn kind_of(t: fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Opens `path` for reading if it is a regular file (links followed), and refuses anything
/// else with what it is, without blocking: the file is opened non-blocking (a named pipe
/// opens at once) and its type is taken from the open file.
pub fn open_regular(path: &Path) -> io::Result<File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let t = file.metadata()?.file_type();
    if !t.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("it is {}, not a regular file", kind_of(t)),
        ));
    }
    Ok(file)
}

/// The contents of the regular file at `path` ([`open_regular`]), refused when longer than
/// `limit` bytes (what it is meant to hold, with room to spare), before anything is read.
pub fn read_bounded(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let file = open_regular(path)?;
    let len = file.metadata()?.len();
    if len > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("it is {len} bytes long, more than the {limit} such a file may hold"),
        ));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("it grew past the {limit} bytes such a file may hold while it was read"),
        ));
    }
    Ok(bytes)
}

/// Refuses to replace what is at `path` unless it is nothing or a regular file: an output
/// never takes the place of a device (as root, /dev/null itself), a pipe, a directory or a
/// symbolic link (which would be replaced, not followed).
pub fn check_replaceable(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!(
                "{} is {}: outputs replace only regular files; remove it or write elsewhere",
                path.display(),
                kind_of(m.file_type())
            ),
        )),
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Writes the concatenation of `parts` to `path` atomically ([`write_atomically_with`]).
pub fn write_atomically(path: &Path, parts: &[&[u8]]) -> io::Result<()> {
    write_atomically_with(path, |w| parts.iter().try_for_each(|p| w.write_all(p)))
}

/// Writes what `write` writes (buffered) to a temporary file beside `path`, flushes it to disk
/// (fsync), renames it over `path` and syncs the directory. On failure the temporary file is
/// removed and `path` is untouched. Refused before anything is written when `path` holds
/// something other than a regular file ([`check_replaceable`]).
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
    check_replaceable(path)?;
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
#[path = "io_tests.rs"]
mod tests;
