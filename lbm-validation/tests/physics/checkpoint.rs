//! Checkpoint and restart: a resumed run is bitwise identical to an uninterrupted one (across
//! layouts and streaming schemes too); damaged, truncated or foreign checkpoints are refused with
//! a message that says so.

use std::path::{Path, PathBuf};

use lbm::models::{D2Q9Bgk, D2Q9BgkParams, D2Q37, D2Q37Params};
use lbm::{
    BoundarySpec, CAoSoa, CheckpointError, Lattice, Layout, Model, Real, Scheme, Soa, Solver,
    read_checkpoint,
};

fn all_populations<M: Model, L: Layout, T: Real>(lat: &Lattice<M, L, T>) -> Vec<T> {
    let d = lat.dims();
    let mut out = Vec::new();
    let mut f = vec![T::default(); M::Q];
    for x in 0..d.lx {
        for y in 0..d.ly {
            lat.populations(x, y, &mut f).unwrap();
            out.extend_from_slice(&f);
        }
    }
    out
}

fn cavity() -> Lattice<D2Q9Bgk, Soa, f64> {
    let mut lat = Lattice::new(
        16,
        16,
        D2Q9BgkParams {
            tau: 0.6,
            ax: 0.0,
            ay: 0.0,
        },
        Scheme::TwoCopy,
        &BoundarySpec::cavity(0.1),
    )
    .unwrap();
    lat.run(7, 0).unwrap();
    lat
}

#[test]
fn resumed_run_is_bitwise_identical() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cavity.ckpt");
    let mut straight = cavity();
    straight.write_checkpoint(&path).unwrap();
    straight.run(40, 0).unwrap();

    // Resume in the same layout and scheme, and in another layout with in-place streaming.
    let ckpt = read_checkpoint::<D2Q9Bgk, f64>(&path).unwrap();
    assert_eq!(ckpt.header.step, 7);
    let mut resumed = ckpt
        .into_lattice::<Soa>(Scheme::TwoCopy, &BoundarySpec::cavity(0.1))
        .unwrap();
    resumed.run(40, 0).unwrap();
    assert_eq!(resumed.steps_done(), straight.steps_done());
    let want = all_populations(&straight);
    assert!(
        all_populations(&resumed)
            .iter()
            .zip(&want)
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );

    let ckpt = read_checkpoint::<D2Q9Bgk, f64>(&path).unwrap();
    let mut other = ckpt
        .into_lattice::<CAoSoa<4>>(Scheme::InPlace, &BoundarySpec::cavity(0.1))
        .unwrap();
    other.run(40, 0).unwrap();
    assert!(
        all_populations(&other)
            .iter()
            .zip(&want)
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );
}

#[test]
fn thermal_model_in_single_precision_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d2q37.ckpt");
    let mut lat = Lattice::<D2Q37, Soa, f32>::new(
        8,
        8,
        D2Q37Params { tau: 0.8, g: 1e-4 },
        Scheme::TwoCopy,
        &BoundarySpec::periodic(),
    )
    .unwrap();
    lat.set_equilibrium(|x, y| vec![1.0 + 0.01 * (x + y) as f64, 0.01, 0.0, 1.0])
        .unwrap();
    lat.run(3, 0).unwrap();
    lat.write_checkpoint(&path).unwrap();
    let back = read_checkpoint::<D2Q37, f32>(&path).unwrap();
    assert_eq!(back.params, D2Q37Params { tau: 0.8, g: 1e-4 });
    let restored = back
        .into_lattice::<Soa>(Scheme::TwoCopy, &BoundarySpec::periodic())
        .unwrap();
    assert_eq!(all_populations(&restored), all_populations(&lat));
}

/// A checkpoint of `cavity()` in a fresh directory: the directory, the manifest, the shard.
fn written() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cavity.ckpt");
    cavity().write_checkpoint(&path).unwrap();
    let shard = shards(dir.path()).pop().expect("one shard");
    (dir, path, shard)
}

/// The shards in `dir`.
fn shards(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.to_string_lossy().contains(".ckpt.") && p.extension() != Some("previous".as_ref())
        })
        .collect()
}

/// The error reading (manifest, shard headers, then populations) a checkpoint `edit`ed.
fn refused(edit: impl FnOnce(&Path, &Path)) -> CheckpointError {
    let (_dir, path, shard) = written();
    edit(&path, &shard);
    read_checkpoint::<D2Q9Bgk, f64>(&path)
        .and_then(|c| c.columns(0..16))
        .expect_err("a damaged checkpoint must be refused")
}

fn edit_bytes(path: &Path, edit: impl FnOnce(&mut Vec<u8>)) {
    let mut bytes = std::fs::read(path).unwrap();
    edit(&mut bytes);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_checkpoint_is_a_manifest_and_its_shards() {
    let (dir, path, shard) = written();
    let c = read_checkpoint::<D2Q9Bgk, f64>(&path).unwrap();
    assert_eq!(c.header.shards.len(), 1);
    assert_eq!((c.header.shards[0].x0, c.header.shards[0].x1), (0, 16));
    assert!(shard.ends_with(&c.header.shards[0].file));
    // Columns 5..9 alone are those of the whole lattice.
    let all = c.columns(0..16).unwrap();
    assert_eq!(c.columns(5..9).unwrap(), all[5 * 16 * 9..9 * 16 * 9]);
    // A second checkpoint at the same path keeps the first as the previous one (its manifest
    // copied to `.previous`, its shard kept); a third removes the first's shard.
    let step = |p: &Path| read_checkpoint::<D2Q9Bgk, f64>(p).unwrap().header.step;
    let previous = lbm::previous_checkpoint(&path);
    let mut lat = cavity();
    lat.run(3, 0).unwrap();
    lat.write_checkpoint(&path).unwrap();
    let now = shards(dir.path());
    assert_eq!(now.len(), 2, "{now:?}");
    assert!(now.contains(&shard));
    assert_eq!((step(&path), step(&previous)), (10, 7));
    lat.run(1, 0).unwrap();
    lat.write_checkpoint(&path).unwrap();
    let now = shards(dir.path());
    assert_eq!(now.len(), 2, "{now:?}");
    assert!(!now.contains(&shard));
    assert_eq!((step(&path), step(&previous)), (11, 10));
    assert_eq!(lbm::verify_checkpoint(&previous).unwrap(), 10);
}

/// `file`'s header framed as format version `version` of `magic` (4, 3, 2: without the CRC-32
/// that version 5 puts after the header's length).
fn to_version(file: &Path, magic: &str, version: &str) {
    edit_bytes(file, |b| {
        let text = String::from_utf8_lossy(b).into_owned();
        let first = format!("{magic} 5\n");
        assert!(text.starts_with(&first), "{text:.40}");
        let rest = &b[first.len()..];
        let eol = rest.iter().position(|&c| c == b'\n').unwrap();
        let len = String::from_utf8(rest[..eol].to_vec()).unwrap();
        let (len, _crc) = len.split_once(' ').expect("a length and a CRC-32");
        let mut old = format!("{magic} {version}\n{len}\n").into_bytes();
        old.extend_from_slice(&rest[eol + 1..]);
        *b = old;
    })
}

/// Checkpoints of format versions 4 (headers without their CRC-32), 3 (shards of whole planes
/// alone) and 2 (no fields either) are still read: a lattice's checkpoint of version 5 is
/// theirs under another frame.
#[test]
fn earlier_versions_are_read() {
    for version in ["4", "3", "2"] {
        let (_dir, path, shard) = written();
        let want = read_checkpoint::<D2Q9Bgk, f64>(&path)
            .and_then(|c| c.columns(0..16))
            .unwrap();
        to_version(&path, "LBM-CHECKPOINT", version);
        to_version(&shard, "LBM-SHARD", version);
        let c = read_checkpoint::<D2Q9Bgk, f64>(&path).unwrap();
        assert!(c.header.fields.is_empty());
        assert!(c.columns(0..16).unwrap() == want, "version {version}");
    }
}

/// A lattice's checkpoint cannot resume a finite-difference run, nor the reverse, and each
/// refusal says which kind the checkpoint is.
#[test]
fn lattice_and_finite_difference_checkpoints_are_told_apart() {
    let (dir, path, _) = written();
    let mut grid = lbm::fd_cavity::FdCavity::new(21, 100.0)
        .grid::<f64>()
        .unwrap();
    let e = grid.resume(&path).unwrap_err().to_string();
    assert!(
        e.contains("a checkpoint of a lattice (the model D2Q9Bgk)"),
        "{e}"
    );
    let fd = dir.path().join("fd.ckpt");
    grid.checkpoint(&fd).unwrap();
    let e = read_checkpoint::<D2Q9Bgk, f64>(&fd)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("a finite-difference run"), "{e}");
}

#[test]
fn damaged_or_foreign_checkpoints_are_refused() {
    let truncated = refused(|_, shard| {
        let f = std::fs::OpenOptions::new().write(true).open(shard).unwrap();
        f.set_len(f.metadata().unwrap().len() - 100).unwrap();
    });
    assert!(truncated.to_string().contains("truncated"), "{truncated}");
    let flipped = refused(|_, shard| {
        edit_bytes(shard, |b| {
            let n = b.len();
            b[n - 5] ^= 0x40;
        })
    });
    assert!(flipped.to_string().contains("checksum"), "{flipped}");
    let missing = refused(|_, shard| std::fs::remove_file(shard).unwrap());
    // Every byte of the headers is checked: a step changed in the manifest or in a shard.
    for which in [0, 1] {
        let edited = refused(|path, shard| {
            edit_bytes([path, shard][which], |b| {
                let text = String::from_utf8_lossy(b).into_owned();
                let at = text.find("step = 7").expect("the step in the header");
                b[at + 7] = b'8';
            })
        });
        assert!(
            edited.to_string().contains("does not match its CRC-32"),
            "{edited}"
        );
    }
    // The shards must tile the lattice: one that holds a column less leaves nodes uncovered
    // (a manifest of version 4, which has no CRC-32 to catch the edit first).
    let short = refused(|path, _| {
        to_version(path, "LBM-CHECKPOINT", "4");
        edit_bytes(path, |b| {
            let text = String::from_utf8(b.clone()).unwrap();
            *b = text.replacen("x1 = 16", "x1 = 15", 1).into_bytes();
        })
    });
    assert!(
        short.to_string().contains("cover 240 of the 256 nodes"),
        "{short}"
    );
    assert!(missing.to_string().contains("incomplete"), "{missing}");
    let not_ours = refused(|path, _| edit_bytes(path, |b| b[0] = b'X'));
    assert!(
        not_ours.to_string().contains("not an lbm checkpoint"),
        "{not_ours}"
    );
    let header = refused(|path, _| edit_bytes(path, |b| b.truncate(40)));
    assert!(
        matches!(header, CheckpointError::Corrupt { .. }),
        "{header}"
    );
    // The shard of another checkpoint under this one's name, and this manifest over another
    // checkpoint's shards.
    let (_other, other_path, other_shard) = written();
    let foreign = refused(|_, shard| {
        std::fs::copy(&other_shard, shard).unwrap();
    });
    assert!(
        foreign
            .to_string()
            .contains("belongs to another checkpoint"),
        "{foreign}"
    );
    let foreign_manifest = refused(|path, _| {
        std::fs::copy(&other_path, path).unwrap();
    });
    assert!(
        foreign_manifest.to_string().contains("incomplete"),
        "{foreign_manifest}"
    );

    let (dir, path, _) = written();
    let other_model = read_checkpoint::<D2Q37, f64>(&path).err().unwrap();
    assert!(
        other_model.to_string().contains("model D2Q9Bgk"),
        "{other_model}"
    );
    let other_precision = read_checkpoint::<D2Q9Bgk, f32>(&path).err().unwrap();
    assert!(
        other_precision.to_string().contains("--precision f64"),
        "{other_precision}"
    );

    let missing_dir = cavity()
        .write_checkpoint(&dir.path().join("no/such/dir/c.ckpt"))
        .unwrap_err();
    assert!(
        matches!(
            missing_dir,
            lbm::Error::Checkpoint(CheckpointError::Io { .. })
        ),
        "{missing_dir}"
    );
    assert!(
        std::fs::read_dir(dir.path()).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains(".tmp")),
        "no temporary file is left behind"
    );
}

/// What is not a checkpoint file is refused after a few bytes, with what it is: a device that
/// never ends (/dev/zero, once read until memory ran out), a directory, random binary data, a
/// manifest naming a device as its shard; the manifest alone is read by `read_manifest`.
#[test]
fn files_that_are_not_checkpoints_are_refused_at_once() {
    let refusal = |path: &Path| {
        read_checkpoint::<D2Q9Bgk, f64>(path)
            .err()
            .unwrap()
            .to_string()
    };
    if Path::new("/dev/zero").exists() {
        let e = refusal(Path::new("/dev/zero"));
        assert!(e.contains("not a regular file"), "{e}");
    }
    let dir = tempfile::tempdir().unwrap();
    let e = refusal(dir.path());
    assert!(
        e.contains("not a regular file") || e.contains("directory"),
        "{e}"
    );
    let binary = dir.path().join("random.bin");
    let bytes: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&binary, &bytes).unwrap();
    let e = refusal(&binary);
    assert!(e.contains("not an lbm checkpoint"), "{e}");
    let no_newline = dir.path().join("long.txt");
    std::fs::write(&no_newline, vec![b'a'; 1 << 20]).unwrap();
    let e = refusal(&no_newline);
    assert!(e.contains("not an lbm checkpoint"), "{e}");

    let (_keep, path, shard) = written();
    let header = lbm::read_manifest(&path).unwrap();
    assert_eq!(header.model, "D2Q9Bgk");
    assert!(
        header.about.is_empty(),
        "the library says nothing of the run"
    );
    if Path::new("/dev/zero").exists() {
        std::fs::remove_file(&shard).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &shard).unwrap();
        let e = refusal(&path);
        assert!(
            e.contains("incomplete") && e.contains("not a regular file"),
            "{e}"
        );
    }
}
