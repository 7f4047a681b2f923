//! Diagnostics and progress for the command line: a small logger of its own behind the `log` facade
//! (`RUST_LOG` in env_logger's syntax, applied on top of the defaults: springsim's own warnings and
//! errors, other crates' errors) that writes one line per message to stderr, and progress bars on stderr that exist only when
//! stderr is a terminal. A message logged while a bar is drawn clears the bar, prints, and redraws it;
//! records printed on stdout while a bar is drawn go through [`Progress::suspend`] likewise.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use log::{Level, LevelFilter, Log, Metadata, Record};
use std::io::IsTerminal;
use std::io::Write as _;
use std::sync::Mutex;

/// The bar being drawn, if any: the logger suspends it around each message.
static BAR: Mutex<Option<ProgressBar>> = Mutex::new(None);

/// The filter: directives `(target, level)`, the longest target that a record's target starts with
/// deciding (`None` matches every target).
#[derive(Clone, Debug, PartialEq)]
struct Filter(Vec<(Option<String>, LevelFilter)>);

impl Filter {
    /// By default springsim's warnings (the library's and the binary's; both are the `springsim`
    /// target) and every crate's errors. `RUST_LOG` (env_logger's syntax: `level`, `target=level`,
    /// `target` alone for everything of it, comma-separated; a `/regex` suffix is ignored) is applied on
    /// top: module directives add to the defaults (`RUST_LOG=wgpu_hal=debug` adds wgpu's debug output and
    /// keeps springsim's warnings; `RUST_LOG=springsim=info` shows springsim's notes), and a bare level
    /// replaces them for every crate (`RUST_LOG=debug`, `RUST_LOG=off`). What it cannot read is ignored.
    fn parse(rust_log: Option<&str>) -> Filter {
        let spec = rust_log.unwrap_or("").split('/').next().unwrap_or("");
        let mut d: Vec<(Option<String>, LevelFilter)> = Vec::new();
        let mut set = |name: Option<String>, level: LevelFilter| match d.iter_mut().find(|x| x.0 == name) {
            Some(x) => x.1 = level,
            None => d.push((name, level)),
        };
        let given: Vec<&str> = spec.split(',').map(str::trim).filter(|x| !x.is_empty()).collect();
        if !given.iter().any(|x| x.parse::<LevelFilter>().is_ok()) {
            set(None, LevelFilter::Error);
            set(Some("springsim".into()), LevelFilter::Warn);
        }
        for x in given {
            match x.split_once('=') {
                Some((name, level)) => {
                    if let Ok(l) = level.trim().parse::<LevelFilter>() {
                        set(Some(name.trim().to_string()), l);
                    }
                }
                None => match x.parse::<LevelFilter>() {
                    Ok(l) => set(None, l),
                    Err(_) => set(Some(x.to_string()), LevelFilter::Trace),
                },
            }
        }
        Filter(d)
    }

    /// The level allowed for `target`.
    fn level(&self, target: &str) -> LevelFilter {
        let matches = |n: &str| target == n || target.strip_prefix(n).is_some_and(|r| r.starts_with("::"));
        self.0
            .iter()
            .filter(|(n, _)| n.as_deref().is_none_or(matches))
            .max_by_key(|(n, _)| n.as_ref().map_or(0, |n| n.len() + 1))
            .map_or(LevelFilter::Off, |x| x.1)
    }

    /// The most verbose level any directive allows.
    fn max(&self) -> LevelFilter {
        self.0.iter().map(|x| x.1).max().unwrap_or(LevelFilter::Off)
    }
}

/// The logger: one line per message on stderr, the bar suspended around it.
struct Logger(Filter);

impl Log for Logger {
    fn enabled(&self, m: &Metadata) -> bool {
        m.level() <= self.0.level(m.target())
    }

    fn log(&self, r: &Record) {
        if !self.enabled(r.metadata()) {
            return;
        }
        let ours = r.target() == "springsim" || r.target().starts_with("springsim::");
        let line = match (r.level(), ours) {
            (Level::Error, true) => format!("springsim: {}\n", r.args()),
            (Level::Warn, true) => format!("springsim: warning: {}\n", r.args()),
            (level, _) => format!("springsim: [{} {}] {}\n", level.as_str().to_lowercase(), r.target(), r.args()),
        };
        // one write of the whole line; a closed stderr is nothing to report
        let write = || {
            let _ = std::io::stderr().lock().write_all(line.as_bytes());
        };
        match BAR.lock().ok().and_then(|b| b.clone()) {
            Some(b) => b.suspend(write),
            None => write(),
        }
    }

    fn flush(&self) {
        let _ = std::io::stderr().flush();
    }
}

/// Installs the logger (once, before anything logs), with `RUST_LOG` read now. A second call does
/// nothing.
pub fn init() {
    let filter = Filter::parse(std::env::var("RUST_LOG").ok().as_deref());
    let max = filter.max();
    if log::set_boxed_logger(Box::new(Logger(filter))).is_ok() {
        log::set_max_level(max);
    }
}

/// A progress bar on stderr when stderr is a terminal; hidden (and free) otherwise. Dropping it clears
/// it.
pub struct Progress(ProgressBar);

impl Progress {
    /// A bar of `len` steps (frames, iterations), `what` beside it.
    pub fn new(len: u64, what: &str) -> Progress {
        Progress::with_target(len, what, std::io::stderr().is_terminal())
    }

    fn with_target(len: u64, what: &str, terminal: bool) -> Progress {
        if !terminal {
            return Progress(ProgressBar::hidden());
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg} ({elapsed}, eta {eta})")
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_prefix(what.to_string());
        if let Ok(mut b) = BAR.lock() {
            *b = Some(bar.clone());
        }
        Progress(bar)
    }

    /// Whether it is drawn.
    #[cfg(test)]
    fn is_drawn(&self) -> bool {
        !self.0.is_hidden()
    }

    /// The text after the counts (the run under way).
    pub fn set_message(&self, m: impl Into<String>) {
        self.0.set_message(m.into());
    }

    /// Advances by `n` steps.
    pub fn inc(&self, n: u64) {
        self.0.inc(n);
    }

    /// Runs `f` with the bar cleared (for printing on stdout while it is drawn).
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.0.suspend(f)
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.0.finish_and_clear();
        if let Ok(mut b) = BAR.lock() {
            *b = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_terminal_no_bar() {
        let p = Progress::with_target(10, "bench", false);
        assert!(!p.is_drawn());
        p.inc(3);
        assert_eq!(p.suspend(|| 7), 7);
    }

    #[test]
    fn rust_log_on_top_of_the_defaults() {
        let on = |rust_log: Option<&str>, target: &str, level: Level| level <= Filter::parse(rust_log).level(target);
        // unset: our warnings, others' errors
        assert!(on(None, "springsim", Level::Warn));
        assert!(on(None, "springsim::run", Level::Warn));
        assert!(!on(None, "springsim", Level::Info));
        assert!(!on(None, "springsimx", Level::Warn));
        assert!(on(None, "wgpu_hal::vulkan", Level::Error));
        assert!(!on(None, "wgpu_hal::vulkan", Level::Warn));
        // a module directive adds to them
        assert!(on(Some("wgpu_hal=debug"), "wgpu_hal::vulkan", Level::Debug));
        assert!(on(Some("wgpu_hal=debug"), "springsim", Level::Warn));
        assert!(on(Some("springsim=info"), "springsim::bench", Level::Info));
        assert!(!on(Some("springsim=error"), "springsim", Level::Warn));
        assert!(on(Some("naga"), "naga::front", Level::Trace));
        // a bare level replaces them everywhere
        assert!(on(Some("debug"), "springsim", Level::Debug));
        assert!(on(Some("info,wgpu_core=off"), "naga", Level::Info));
        assert!(!on(Some("info,wgpu_core=off"), "wgpu_core::device", Level::Error));
        assert!(!on(Some("off"), "springsim", Level::Error));
        assert_eq!(Filter::parse(Some("off")).max(), LevelFilter::Off);
        // nonsense is ignored
        assert!(on(Some("springsim=loud"), "springsim", Level::Warn));
    }
}
