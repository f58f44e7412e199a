//! What the machine offers, for environments that size their default limits from it.

/// Cores this process may run on (at least 1).
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// Physical memory in bytes (`MemTotal`), or `None` where `/proc/meminfo` does not say.
pub fn memory_bytes() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kib: u64 = info
        .lines()
        .find_map(|line| line.strip_prefix("MemTotal:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// How many episodes that each cost `memory_per_episode` bytes and `per_core` episodes a
/// core fit on this machine: the smaller of the two, at least 1.
pub fn episodes_that_fit(memory_per_episode: u64, per_core: usize) -> usize {
    let by_cores = cores().saturating_mul(per_core);
    let by_memory = memory_bytes().map_or(by_cores, |bytes| {
        usize::try_from(bytes / memory_per_episode.max(1)).unwrap_or(usize::MAX)
    });
    by_cores.min(by_memory).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_has_cores_and_memory_and_a_fit_is_the_smaller_bound() {
        assert!(cores() >= 1);
        let memory = memory_bytes().expect("Linux says its memory");
        assert!(memory > 64 << 20);
        // Memory is the bound when each episode costs all of it.
        assert_eq!(episodes_that_fit(memory, 1000), 1);
        // Cores are the bound when memory is plentiful.
        assert_eq!(episodes_that_fit(1, 3), cores() * 3);
    }
}
