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

/// A symbolic link planted at the output's name is refused, one at its temporary's is
/// replaced: nothing is written where either points.
#[cfg(unix)]
#[test]
fn links_are_never_followed_nor_outputs_replaced() {
    let dir = std::env::temp_dir().join(format!("lbm-io-link-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let victim = dir.join("victim.txt");
    fs::write(&victim, b"keep").unwrap();
    let out = dir.join("out.txt");
    std::os::unix::fs::symlink(&victim, &out).unwrap();
    let e = write_atomically(&out, &[b"new"]).unwrap_err();
    assert!(e.to_string().contains("a symbolic link"), "{e}");
    assert!(fs::symlink_metadata(&out).unwrap().file_type().is_symlink());
    fs::remove_file(&out).unwrap();
    write_atomically(&out, &[b"new"]).unwrap();
    let tmp = dir.join(format!(".out2.txt.tmp{}", std::process::id()));
    std::os::unix::fs::symlink(&victim, &tmp).unwrap();
    write_atomically(&dir.join("out2.txt"), &[b"x"]).unwrap();
    assert_eq!(fs::read(&victim).unwrap(), b"keep");
    assert_eq!(fs::read(&out).unwrap(), b"new");
    fs::remove_dir_all(&dir).unwrap();
}

/// Devices, pipes and directories are neither read (a named pipe does not block) nor
/// replaced; a file longer than its bound is refused before it is read.
#[cfg(target_os = "linux")]
#[test]
fn only_regular_files_are_read_or_replaced() {
    let dir = std::env::temp_dir().join(format!("lbm-io-kinds-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let fifo = dir.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for (path, what) in [
        (fifo.as_path(), "a named pipe"),
        (Path::new("/dev/zero"), "a character device"),
        (dir.as_path(), "a directory"),
    ] {
        let e = read_bounded(path, 1 << 20).unwrap_err();
        assert!(e.to_string().contains(what), "{}: {e}", path.display());
        let e = write_atomically(path, &[b"x"]).unwrap_err();
        assert!(e.to_string().contains(what), "{}: {e}", path.display());
    }
    let file = dir.join("long");
    fs::write(&file, [7u8; 100]).unwrap();
    assert_eq!(read_bounded(&file, 100).unwrap().len(), 100);
    let e = read_bounded(&file, 99).unwrap_err();
    assert!(e.to_string().contains("100 bytes long"), "{e}");
    fs::remove_dir_all(&dir).unwrap();
}
