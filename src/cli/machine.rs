//! The machine and the date every `springsim bench` record names: the CPU model, threads, OS, version,
//! the GPU's driver, whether the adapter is a software rasterizer.

use std::time::{SystemTime, UNIX_EPOCH};

/// The host, as every record names it.
#[derive(Clone, Debug)]
pub struct Machine {
    /// The CPU model.
    pub cpu: String,
    /// rayon's threads (the CPU engine's parallel passes).
    pub threads: usize,
    /// `linux x86_64` and the like.
    pub os: String,
    /// springsim's version.
    pub version: String,
}

impl Machine {
    /// This machine.
    pub fn here() -> Machine {
        Machine {
            cpu: cpu_model(std::fs::read_to_string("/proc/cpuinfo").ok().as_deref()),
            threads: rayon::current_num_threads(),
            os: format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
            version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// The CPU model from /proc/cpuinfo's text (its first `model name`, else `Hardware` or `cpu model` as
/// some ARM and MIPS kernels have it), else the architecture's name.
pub fn cpu_model(cpuinfo: Option<&str>) -> String {
    let field = |name: &str| {
        cpuinfo?.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == name && !v.trim().is_empty()).then(|| v.split_whitespace().collect::<Vec<_>>().join(" "))
        })
    };
    field("model name")
        .or_else(|| field("Hardware"))
        .or_else(|| field("cpu model"))
        .unwrap_or_else(|| format!("unknown {} CPU", std::env::consts::ARCH))
}

/// A GPU's driver: wgpu's `driver` and `driver_info` (`llvmpipe Mesa 24.2.8 (LLVM 19.1.4)`).
pub fn driver(info: &wgpu::AdapterInfo) -> String {
    let d = format!("{} {}", info.driver, info.driver_info);
    let d = d.trim();
    if d.is_empty() {
        "unknown".to_string()
    } else {
        d.to_string()
    }
}

/// Whether an adapter is a software rasterizer running on the host's CPU: wgpu's device type `Cpu`, or
/// a name that says so (Mesa's llvmpipe / lavapipe, Google's SwiftShader) where a driver reports another
/// type.
pub fn is_software(info: &wgpu::AdapterInfo) -> bool {
    let name = info.name.to_lowercase();
    info.device_type == wgpu::DeviceType::Cpu || ["llvmpipe", "lavapipe", "swiftshader"].iter().any(|s| name.contains(s))
}

/// The time now, UTC, ISO 8601 to the second: `2026-11-25T15:02:37Z`.
pub fn utc_now() -> String {
    let secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    iso8601(secs)
}

/// Seconds since 1970-01-01T00:00:00Z as ISO 8601 (the proleptic Gregorian calendar; Howard Hinnant's
/// days-to-civil algorithm).
pub fn iso8601(secs: u64) -> String {
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso8601_dates() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        // 2000-02-29 (a leap day of a century leap year) 12:34:56
        assert_eq!(iso8601(951_827_696), "2000-02-29T12:34:56Z");
        assert_eq!(iso8601(1_798_761_599), "2026-12-31T23:59:59Z");
        assert_eq!(iso8601(4_107_542_400), "2100-03-01T00:00:00Z");
        let now = utc_now();
        assert_eq!(now.len(), 20, "{now}");
        assert!(now.ends_with('Z') && now.as_bytes()[10] == b'T', "{now}");
    }

    #[test]
    fn cpu_model_from_cpuinfo() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)  CPU @ 2.20GHz\n\nprocessor\t: 1\nmodel name\t: other\n";
        assert_eq!(cpu_model(Some(x86)), "Intel(R) Xeon(R) CPU @ 2.20GHz");
        assert_eq!(cpu_model(Some("Processor\t: AArch64\nHardware\t: BCM2835\n")), "BCM2835");
        assert!(cpu_model(None).contains(std::env::consts::ARCH));
        assert!(cpu_model(Some("model name\t:\n")).starts_with("unknown"));
    }
}
