//! The previous complete checkpoint: every kind of run (a lattice, finite differences, coupled
//! lattices) keeps it beside the newest, and a resume whose newest checkpoint is damaged or
//! gone falls back to it, says so, and continues bitwise as the uninterrupted run.

use std::path::{Path, PathBuf};

use crate::cli_support::{fails, ok, s, tmp};

/// The values a checkpoint (or every part of a set) holds: its shards' payloads, without the
/// headers that name the run.
fn payload(cp: &Path) -> Vec<u8> {
    if let Ok(set) = lbm::read_set(cp) {
        return (set.parts.iter())
            .flat_map(|p| payload(&set.part(cp, &p.name).unwrap()))
            .collect();
    }
    let m = lbm::read_manifest(cp).unwrap_or_else(|e| panic!("{}: {e}", cp.display()));
    let mut all = Vec::new();
    for shard in &m.shards {
        let bytes = std::fs::read(cp.with_file_name(&shard.file)).unwrap();
        // `magic\n<len> <crc>\n<header of len bytes>` then the payload.
        let first = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
        let second = first + bytes[first..].iter().position(|&b| b == b'\n').unwrap() + 1;
        let frame = std::str::from_utf8(&bytes[first..second - 1]).unwrap();
        let len: usize = frame.split(' ').next().unwrap().parse().unwrap();
        all.extend_from_slice(&bytes[second + len..]);
    }
    all
}

/// The first shard of the checkpoint `cp`: of its first part for a set.
fn first_shard(cp: &Path) -> PathBuf {
    let manifest = match lbm::read_set(cp) {
        Ok(set) => set.part(cp, &set.parts[0].name).unwrap(),
        Err(_) => cp.to_path_buf(),
    };
    let m = lbm::read_manifest(&manifest).unwrap();
    manifest.with_file_name(&m.shards[0].file)
}

fn flip_last_byte(file: &Path) {
    let mut bytes = std::fs::read(file).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(file, bytes).unwrap();
}

/// A run of `args` checkpointed every `n` steps to step `2n`, its newest checkpoint damaged by
/// `damage`, resumes from the checkpoint at step `n`, saying so, and ends at step `3n` bitwise
/// as the run that was never interrupted.
fn falls_back(args: &[&str], case: &str, n: u64, damage: impl FnOnce(&Path)) {
    let (whole, part) = (tmp(), tmp());
    let cp = |dir: &Path| dir.join(format!("{case}_checkpoint.lbm"));
    let every = n.to_string();
    let run = |dir: &Path, steps: u64, extra: &[&str]| {
        let steps = steps.to_string();
        let common = [
            "--steps",
            &steps,
            "--checkpoint-every",
            &every,
            "--out",
            s(dir),
        ];
        ok(&[args, &common, extra].concat())
    };
    run(whole.path(), 3 * n, &[]);
    run(part.path(), 2 * n, &[]);
    let previous = lbm::previous_checkpoint(&cp(part.path()));
    assert_eq!(lbm::verify_checkpoint(&previous).unwrap(), n, "{case}");
    damage(&cp(part.path()));
    let out = run(part.path(), 3 * n, &["--resume", s(&cp(part.path()))]);
    assert!(
        out.contains("resuming from the previous complete one")
            && out.contains(&format!("(step {n})"))
            && out.contains(&format!("at step {n}")),
        "{case}:\n{out}"
    );
    assert_eq!(lbm::verify_checkpoint(&cp(part.path())).unwrap(), 3 * n);
    assert!(
        payload(&cp(part.path())) == payload(&cp(whole.path())),
        "{case}: the resumed run differs from the uninterrupted one"
    );
}

#[test]
fn a_damaged_or_lost_newest_checkpoint_falls_back_to_the_previous_one() {
    let tg = [
        "run",
        "taylor-green",
        "--lx",
        "32",
        "--images",
        "",
        "--vtk",
        "false",
    ];
    falls_back(&tg, "taylor-green", 20, |cp| {
        flip_last_byte(&first_shard(cp))
    });
    falls_back(&tg, "taylor-green", 20, |cp| {
        std::fs::remove_file(cp).unwrap()
    });
    falls_back(&tg, "taylor-green", 20, |cp| {
        std::fs::remove_file(first_shard(cp)).unwrap()
    });
    let fd = ["run", "fd-cavity", "--lx", "21", "--images", ""];
    falls_back(&fd, "fd-cavity", 100, |cp| flip_last_byte(&first_shard(cp)));
    let rb = [
        "run",
        "rayleigh-benard",
        "--ly",
        "16",
        "--images",
        "",
        "--vtk",
        "false",
    ];
    falls_back(&rb, "rayleigh-benard", 5, |cp| {
        flip_last_byte(&first_shard(cp))
    });
}

/// With the newest and the previous checkpoint both damaged there is nothing whole to resume:
/// the newest's damage is reported, and nothing is set aside.
#[test]
fn with_no_whole_checkpoint_left_the_resume_is_refused() {
    let d = tmp();
    let cp = d.path().join("taylor-green_checkpoint.lbm");
    let args = |steps: &'static str| {
        vec![
            "run",
            "taylor-green",
            "--lx",
            "32",
            "--images",
            "",
            "--steps",
            steps,
            "--checkpoint-every",
            "20",
            "--out",
            s(d.path()),
        ]
    };
    ok(&args("40"));
    flip_last_byte(&first_shard(&cp));
    flip_last_byte(&first_shard(&lbm::previous_checkpoint(&cp)));
    fails(
        &[&args("60")[..], &["--resume", s(&cp)]].concat(),
        &["damaged", "CRC-32"],
    );
    assert!(cp.exists() && !lbm::damaged_checkpoint(&cp).exists());
}
