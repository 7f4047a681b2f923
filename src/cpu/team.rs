//! A few helper threads that stay awake (spinning) for a short while after each job, so that the
//! parallel passes of a simulation loop, a few tens of µs apart, find them ready: waking a sleeping
//! thread costs tens of µs on a virtual machine, as much as the work it would share. rayon's pool
//! sleeps between jobs and is entered from outside it by the caller, which costs that wake-up on every
//! pass; the force evaluation, the gathers of the implicit and local/global iterations and the parallel
//! triangular solve use this team instead.

use std::cell::UnsafeCell;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::*};
use std::sync::{Mutex, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long a helper spins for the next job before it sleeps.
const LINGER: Duration = Duration::from_micros(250);
/// How long the caller spins for a helper's job before it also yields its core.
const WAIT_SPIN: Duration = Duration::from_micros(50);

const IDLE: u32 = 0;
const POSTED: u32 = 1;
const CLAIMED: u32 = 2;
const DONE: u32 = 3;
const PANICKED: u32 = 4;

/// A job: a borrowed closure with its lifetime erased (see [`Team::run`] for why that is sound).
#[derive(Clone, Copy)]
struct Job(*const (dyn Fn() + Sync + 'static));

struct Member {
    state: AtomicU32,
    /// Written by the caller while `state` is `IDLE`, read by the member after it claims a job.
    job: UnsafeCell<Option<Job>>,
    parked: AtomicBool,
    thread: OnceLock<Thread>,
}

// SAFETY: `job` is only written by the thread that holds `Team::busy` while the member is idle,
// and only read by the member between claiming the job and marking it done (see `Team::run`).
unsafe impl Sync for Member {}

/// The helpers, shared by the whole process; one caller at a time.
pub(crate) struct Team {
    members: Vec<&'static Member>,
    busy: Mutex<()>,
}

impl Member {
    fn serve(&'static self) {
        loop {
            let since = Instant::now();
            while self.state.load(Acquire) != POSTED {
                if since.elapsed() < LINGER {
                    std::hint::spin_loop();
                    continue;
                }
                self.parked.store(true, SeqCst);
                if self.state.load(SeqCst) != POSTED {
                    std::thread::park();
                }
                self.parked.store(false, SeqCst);
            }
            if self.state.compare_exchange(POSTED, CLAIMED, Acquire, Relaxed).is_ok() {
                // SAFETY: the caller wrote the job before posting it and waits for DONE or
                // PANICKED before it returns, so the closure outlives this call.
                let job = unsafe { (*self.job.get()).expect("posted job") };
                let ok = catch_unwind(AssertUnwindSafe(|| unsafe { (*job.0)() })).is_ok();
                self.state.store(if ok { DONE } else { PANICKED }, Release);
            }
        }
    }
}

/// The team of `n` helpers, started on first use (an empty team if threads cannot be spawned).
pub(crate) fn team(n: usize) -> &'static Team {
    static TEAM: OnceLock<Team> = OnceLock::new();
    TEAM.get_or_init(|| {
        let mut members = Vec::new();
        for i in 0..n {
            let m: &'static Member = Box::leak(Box::new(Member {
                state: AtomicU32::new(IDLE),
                job: UnsafeCell::new(None),
                parked: AtomicBool::new(false),
                thread: OnceLock::new(),
            }));
            let spawned = std::thread::Builder::new().name(format!("springsim-helper-{i}")).spawn(move || m.serve());
            match spawned {
                Ok(h) => {
                    let _ = m.thread.set(h.thread().clone());
                    members.push(m);
                }
                Err(_) => break,
            }
        }
        Team { members, busy: Mutex::new(()) }
    })
}

impl Team {
    /// The helpers (the calling thread makes one more worker).
    pub(crate) fn len(&self) -> usize {
        self.members.len()
    }

    /// Runs `jobs[0]` on the calling thread and each other job on a helper, or on the calling
    /// thread when its helper has not started it by the time the calling thread is free; returns
    /// when all are done. `None` (nothing run) when another caller has the team or `jobs` has
    /// more than `len() + 1` entries.
    ///
    /// Sound with borrowed closures: a helper calls a job only between claiming it and marking it
    /// done, and this function returns (or unwinds) only after every posted job is taken back or
    /// done.
    pub(crate) fn run(&self, jobs: &[&(dyn Fn() + Sync)]) -> Option<()> {
        if jobs.len() > self.members.len() + 1 {
            return None;
        }
        let _guard = match self.busy.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return None,
        };
        let helpers = &self.members[..jobs.len().saturating_sub(1)];
        for (m, job) in helpers.iter().zip(&jobs[1..]) {
            // SAFETY: erases the borrow's lifetime; see the function docs.
            let job: *const (dyn Fn() + Sync + 'static) = unsafe { std::mem::transmute(*job as *const (dyn Fn() + Sync)) };
            // SAFETY: the member is IDLE and we hold `busy`: nobody else reads or writes `job`.
            unsafe { *m.job.get() = Some(Job(job)) };
            m.state.store(POSTED, SeqCst);
            if m.parked.load(SeqCst) {
                if let Some(t) = m.thread.get() {
                    t.unpark();
                }
            }
        }
        let mine = jobs.first().map(|job| catch_unwind(AssertUnwindSafe(*job)));
        let mut panicked = false;
        for (m, job) in helpers.iter().zip(&jobs[1..]) {
            if m.state.compare_exchange(POSTED, IDLE, Relaxed, Relaxed).is_ok() {
                // not started: ours
                panicked |= catch_unwind(AssertUnwindSafe(*job)).is_err();
                continue;
            }
            let since = Instant::now();
            loop {
                match m.state.load(Acquire) {
                    DONE => break,
                    PANICKED => {
                        panicked = true;
                        break;
                    }
                    _ if since.elapsed() < WAIT_SPIN => std::hint::spin_loop(),
                    _ => std::thread::yield_now(),
                }
            }
            m.state.store(IDLE, Relaxed);
        }
        match mine {
            Some(Err(e)) => resume_unwind(e),
            _ if panicked => panic!("a parallel pass panicked on a helper thread"),
            _ => Some(()),
        }
    }
}

/// The process's team: one helper per rayon thread beyond the caller's (at most 15), started on first
/// use.
pub(crate) fn shared() -> &'static Team {
    team(rayon::current_num_threads().clamp(1, 16) - 1)
}

/// Runs `a` here and `b` on a helper at once (both here, one after the other, when the team has no
/// helper or is busy with another caller); returns when both are done.
pub(crate) fn join(a: impl Fn() + Sync, b: impl Fn() + Sync) {
    let t = shared();
    if t.len() == 0 || t.run(&[&a, &b]).is_none() {
        a();
        b();
    }
}

/// Runs every job at once, the first on the calling thread and the others on helpers (one after the
/// other on the calling thread when there are more jobs than workers or the team is busy); returns
/// when all are done.
pub(crate) fn run_all(jobs: &[&(dyn Fn() + Sync)]) {
    if shared().run(jobs).is_none() {
        for j in jobs {
            j();
        }
    }
}

/// Calls `f(offset, piece)` on contiguous pieces of `out`, one per worker (the calling thread and each
/// helper), all at once; returns when all are done. Runs on the calling thread alone when `out` is
/// shorter than `min_len`, or when the team is busy or empty.
pub(crate) fn for_each_piece<T: Send>(out: &mut [T], min_len: usize, f: impl Fn(usize, &mut [T]) + Sync) {
    let t = shared();
    let workers = t.len() + 1;
    if workers <= 1 || out.len() < min_len.max(2) {
        f(0, out);
        return;
    }
    let per = out.len().div_ceil(workers);
    let pieces: Vec<Mutex<Option<(usize, &mut [T])>>> =
        out.chunks_mut(per).enumerate().map(|(k, c)| Mutex::new(Some((k * per, c)))).collect();
    let jobs: Vec<Box<dyn Fn() + Sync + '_>> = pieces
        .iter()
        .map(|p| {
            let f = &f;
            Box::new(move || {
                let taken = p.lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some((off, c)) = taken {
                    f(off, c);
                }
            }) as Box<dyn Fn() + Sync + '_>
        })
        .collect();
    let refs: Vec<&(dyn Fn() + Sync)> = jobs.iter().map(|j| j.as_ref()).collect();
    if t.run(&refs).is_none() {
        for j in &refs {
            j();
        }
    }
}
