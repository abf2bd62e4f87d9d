//! What the machine is, read from the operating system: the facts the kernels and the
//! benchmarks size themselves by. It sits below both (`kernels` and `metrics` read it; it reads
//! nothing of theirs).

/// The size of the largest cache of CPU 0 (its last level), bytes, from
/// `/sys/devices/system/cpu/cpu0/cache/index*/size`, read once per process (the kernels ask
/// at every paired two-copy sweep); `None` where it cannot be read.
pub fn last_level_cache() -> Option<usize> {
    static LLC: std::sync::OnceLock<Option<usize>> = std::sync::OnceLock::new();
    *LLC.get_or_init(read_last_level_cache)
}

fn read_last_level_cache() -> Option<usize> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(|e| {
        let size = std::fs::read_to_string(e.ok()?.path().join("size")).ok()?;
        let size = size.trim();
        let (digits, unit) = size.split_at(size.find(|c: char| !c.is_ascii_digit())?);
        let n: usize = digits.parse().ok()?;
        Some(match unit {
            "K" => n << 10,
            "M" => n << 20,
            _ => n,
        })
    })
    .max()
}
