//! The jail size flags shared by every subcommand whose episodes run in jails.

use clap::{Args, FromArgMatches};

/// Sizes of every jail's writable file systems (kernels, shell commands, desktop
/// applications). An agent that fills one gets "No space left on device" inside.
#[derive(Debug, Clone, clap::Args)]
pub struct QuotaArgs {
    /// Size of each jail's home (/home/user): a tmpfs mounted on the episode's folder when
    /// the server runs as root; without root the home is bounded only per file (1 GiB).
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = parse_size)]
    pub home_size: u64,
    /// Size of each sandbox's /tmp (one for all its kernels and commands; a desktop's own).
    #[arg(long, value_name = "SIZE", default_value = "512M", value_parser = parse_size)]
    pub tmp_size: u64,
    /// Size of each jail's /dev/shm.
    #[arg(long, value_name = "SIZE", default_value = "64M", value_parser = parse_size)]
    pub shm_size: u64,
    /// Most CPU each jail may use, in cores (e.g. 1.5). Needs the cgroup cpu controller
    /// (root, or a delegated cgroup v2 subtree). Without it jails still share the CPU by
    /// weight, one share per jail, wherever that controller is usable.
    #[arg(long, value_name = "CORES", value_parser = parse_cores)]
    pub cpu_quota: Option<u64>,
}

impl QuotaArgs {
    /// The sizes the flags default to, read from the flags themselves so they cannot differ.
    pub fn defaults() -> Result<Self, clap::Error> {
        let matches =
            Self::augment_args(clap::Command::new("jails")).try_get_matches_from(["jails"])?;
        Self::from_arg_matches(&matches)
    }

    /// `limits` with these sizes.
    pub fn apply(&self, limits: mcpgym_sandbox::jail::Limits) -> mcpgym_sandbox::jail::Limits {
        mcpgym_sandbox::jail::Limits {
            home_bytes: Some(self.home_size),
            tmp_bytes: Some(self.tmp_size),
            shm_bytes: Some(self.shm_size),
            cpu_millicores: self.cpu_quota.or(limits.cpu_millicores),
            ..limits
        }
    }
}

/// A number of cores (a decimal, at least 0.01), as thousandths of a core.
fn parse_cores(text: &str) -> Result<u64, String> {
    let cores: f64 = text.trim().parse().map_err(|_| {
        format!("{text:?} is not a number of cores: give a decimal such as 1 or 1.5")
    })?;
    if !cores.is_finite() || !(0.01..=4096.0).contains(&cores) {
        return Err(format!(
            "{text:?} cores is out of range: give between 0.01 and 4096"
        ));
    }
    Ok((cores * 1000.0).round() as u64)
}

/// A size in bytes: a whole number with an optional K, M or G suffix (powers of 1024).
fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let (digits, shift) = match trimmed.char_indices().last() {
        Some((at, 'k' | 'K')) => (&trimmed[..at], 10),
        Some((at, 'm' | 'M')) => (&trimmed[..at], 20),
        Some((at, 'g' | 'G')) => (&trimmed[..at], 30),
        _ => (trimmed, 0),
    };
    let refuse = || {
        format!(
            "{text:?} is not a size: give a whole number of bytes with an optional K, M or G suffix, e.g. 512M"
        )
    };
    let value: u64 = digits.parse().map_err(|_| refuse())?;
    let bytes = value
        .checked_shl(shift)
        .filter(|b| b >> shift == value)
        .ok_or_else(refuse)?;
    if bytes < 1 << 20 {
        return Err(format!(
            "{text:?} is too small: a jail's file system needs at least 1M"
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_flags_defaults() {
        let quotas = QuotaArgs::defaults().unwrap();
        assert_eq!(quotas.home_size, 1 << 30);
        assert_eq!(quotas.tmp_size, 512 << 20);
        assert_eq!(quotas.shm_size, 64 << 20);
    }

    #[test]
    fn cores_are_decimals_in_range() {
        assert_eq!(parse_cores("1.5"), Ok(1500));
        assert_eq!(parse_cores(" 2 "), Ok(2000));
        for bad in ["", "x", "0", "-1", "NaN", "inf", "1e9"] {
            let error = parse_cores(bad).unwrap_err();
            assert!(error.contains("cores"), "{bad}: {error}");
        }
    }

    #[test]
    fn sizes_take_suffixes_and_refuse_nonsense() {
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert!(parse_size("12X").unwrap_err().contains("not a size"));
        assert!(parse_size("1K").unwrap_err().contains("too small"));
        assert!(parse_size("99999999999G").is_err());
    }
}
