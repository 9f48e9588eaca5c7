//! Run-time SIMD dispatch: one binary for every x86-64 CPU, each running the fastest code it can.
//!
//! A plain `cargo build --release` targets the x86-64 baseline (SSE2). The hot code (fills, step
//! kernels, batches, floods) is written once, generic over an [`Isa`] (which says how wide a
//! vector is and whether `pdep`/`pclmulqdq` may be used), and compiled several times inside
//! `#[target_feature]` clones, one per [`Path`]. Which clone runs is decided once per process:
//! [`Simd::active`] detects the CPU (or honours `CAVESWEEP_SIMD=avx512|avx2|sse2|scalar`), and
//! the callers that own hot loops (the [`crate::generate::Generator`], the
//! [`crate::kernel::Stepper`], the measurer's flood) carry a [`Simd`] and hand it down. Nothing
//! else knows which instructions run.
//!
//! | level | path | features the clone is compiled with | lanes across caves |
//! |---|---|---|---|
//! | `avx512` | `avx512-vbmi2` | AVX-512 F/BW/CD/DQ/VL + VBMI/VBMI2/VPOPCNTDQ/BITALG, GFNI | 8 |
//! | `avx512` | `avx512` | AVX-512 F/BW/CD/DQ/VL (Skylake-X: no VBMI2) | 8 |
//! | `avx2` | `avx2` | AVX2, BMI1/2, LZCNT, POPCNT, FMA, PCLMULQDQ (x86-64-v3) | 4 |
//! | `avx2` | `avx2-slow-pdep` | the same, but `pdep`/`pext` avoided (AMD before Zen 3) | 4 |
//! | `sse2` | `sse2` | the x86-64 baseline | 2 |
//! | `scalar` | `scalar` | the baseline, one 64-bit word per vector | 1 |
//!
//! **How a clone stays a clone.** `#[target_feature]` applies to a function's own body, not to
//! what it calls. A [`Task`]'s `run` and everything hot below it is `#[inline(always)]`, so it is
//! inlined into the clone's entry point and compiled with the clone's features; LLVM honours
//! `alwaysinline` whatever the size. Closures are avoided in hot generic code for the same
//! reason (LLVM may keep them out of line). `results/kernels.md` shows the instruction census
//! of each clone (`ymm`/`zmm`, `vpternlogq`, `vpshldq`, `vpopcntq`).
//!
//! **Why `pdep` can be refused.** On AMD Zen 1 and Zen 2 `pdep`/`pext` are microcoded (~250
//! cycles instead of 3); the flood fill's downward run fill uses them, so those CPUs get the
//! `avx2-slow-pdep` path, whose fill is a shift-based Kogge-Stone fill.

mod lane;
mod pcg;

pub use lane::{Lane, W1, W2, W4, W8};
pub use pcg::PcgKernel;

use std::fmt;
use std::sync::OnceLock;

/// A SIMD level, as named in `CAVESWEEP_SIMD` and in reports. Ordered: a CPU that runs a level
/// runs every lower one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// One 64-bit word per vector; runs on any target (the only level off x86-64).
    Scalar,
    /// 128-bit vectors, the x86-64 baseline.
    Sse2,
    /// 256-bit vectors with the x86-64-v3 features (AVX2, BMI1/2, ...).
    Avx2,
    /// 512-bit vectors: AVX-512 F/BW/CD/DQ/VL.
    Avx512,
}

impl Level {
    /// Every level, lowest first.
    pub const ALL: [Level; 4] = [Level::Scalar, Level::Sse2, Level::Avx2, Level::Avx512];

    /// The level's name in `CAVESWEEP_SIMD` and reports: `scalar`, `sse2`, `avx2`, `avx512`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Scalar => "scalar",
            Level::Sse2 => "sse2",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Level {
    type Err = SimdError;
    fn from_str(s: &str) -> Result<Level, SimdError> {
        Level::ALL
            .into_iter()
            .find(|l| l.name() == s.trim())
            .ok_or_else(|| SimdError::Unknown(s.to_string()))
    }
}

/// A compiled clone: a [`Level`] and the variant of it the CPU gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Path {
    /// The scalar clone (level `scalar`).
    Scalar,
    /// The SSE2 clone (level `sse2`).
    Sse2,
    /// Level `avx2` without `pdep`/`pext` (microcoded on AMD before Zen 3).
    Avx2SlowPdep,
    /// Level `avx2` using `pdep`/`pext`.
    Avx2,
    /// Level `avx512` with the base AVX-512 features only (Skylake-X).
    Avx512,
    /// Level `avx512` plus VBMI/VBMI2/VPOPCNTDQ/BITALG and GFNI (Ice Lake, Zen 4 and later).
    Avx512Vbmi2,
}

impl Path {
    /// The level this clone belongs to.
    pub fn level(self) -> Level {
        match self {
            Path::Scalar => Level::Scalar,
            Path::Sse2 => Level::Sse2,
            Path::Avx2 | Path::Avx2SlowPdep => Level::Avx2,
            Path::Avx512 | Path::Avx512Vbmi2 => Level::Avx512,
        }
    }

    /// The clone's name in reports (the "path" column of the module table), e.g.
    /// `avx2-slow-pdep`.
    pub fn name(self) -> &'static str {
        match self {
            Path::Scalar => "scalar",
            Path::Sse2 => "sse2",
            Path::Avx2SlowPdep => "avx2-slow-pdep",
            Path::Avx2 => "avx2",
            Path::Avx512 => "avx512",
            Path::Avx512Vbmi2 => "avx512-vbmi2",
        }
    }
}

/// Why a requested SIMD level cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimdError {
    /// The text names no [`Level`]; holds it as given.
    #[error("CAVESWEEP_SIMD={0:?} is not one of avx512, avx2, sse2, scalar")]
    Unknown(String),
    /// The level exists but this CPU (or target) cannot run it.
    #[error("CAVESWEEP_SIMD={want}: this CPU does not support it (best available: {best})")]
    Unsupported {
        /// The level asked for.
        want: Level,
        /// The best level this CPU runs ([`Cpu::best`]).
        best: Level,
    },
}

/// What the CPU offers, as far as our clones care.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cpu {
    /// x86-64-v3: AVX2, BMI1/2, LZCNT, POPCNT, FMA, PCLMULQDQ.
    pub avx2: bool,
    /// AVX-512 F, BW, CD, DQ, VL.
    pub avx512: bool,
    /// AVX-512 VBMI, VBMI2, VPOPCNTDQ, BITALG and GFNI (Ice Lake, Zen 4 and later).
    pub avx512_vbmi2: bool,
    /// `pdep`/`pext` run in hardware (not microcoded as on AMD before Zen 3).
    pub fast_pdep: bool,
}

impl Cpu {
    /// Detect the running CPU (cached).
    pub fn get() -> Cpu {
        static CPU: OnceLock<Cpu> = OnceLock::new();
        *CPU.get_or_init(Cpu::detect)
    }

    #[cfg(target_arch = "x86_64")]
    fn detect() -> Cpu {
        use std::arch::is_x86_feature_detected as has;
        let avx2 = has!("avx2")
            && has!("bmi1")
            && has!("bmi2")
            && has!("lzcnt")
            && has!("popcnt")
            && has!("fma")
            && has!("pclmulqdq");
        let avx512 = avx2
            && has!("avx512f")
            && has!("avx512bw")
            && has!("avx512cd")
            && has!("avx512dq")
            && has!("avx512vl");
        let avx512_vbmi2 = avx512
            && has!("avx512vbmi")
            && has!("avx512vbmi2")
            && has!("avx512vpopcntdq")
            && has!("avx512bitalg")
            && has!("gfni");
        Cpu {
            avx2,
            avx512,
            avx512_vbmi2,
            fast_pdep: has!("bmi2") && !microcoded_pdep(),
        }
    }

    #[cfg(not(target_arch = "x86_64"))]
    fn detect() -> Cpu {
        Cpu {
            avx2: false,
            avx512: false,
            avx512_vbmi2: false,
            fast_pdep: false,
        }
    }

    /// The best level this CPU runs.
    pub fn best(self) -> Level {
        if self.avx512 {
            Level::Avx512
        } else if self.avx2 {
            Level::Avx2
        } else if cfg!(target_arch = "x86_64") {
            Level::Sse2
        } else {
            Level::Scalar
        }
    }

    /// The clone that runs `level` on this CPU, if it can.
    pub fn path(self, level: Level) -> Option<Path> {
        Some(match level {
            Level::Scalar => Path::Scalar,
            Level::Sse2 if cfg!(target_arch = "x86_64") => Path::Sse2,
            Level::Avx2 if self.avx2 && self.fast_pdep => Path::Avx2,
            Level::Avx2 if self.avx2 => Path::Avx2SlowPdep,
            Level::Avx512 if self.avx512_vbmi2 => Path::Avx512Vbmi2,
            Level::Avx512 if self.avx512 => Path::Avx512,
            _ => return None,
        })
    }

    /// The CPU's relevant features as a list for reports, e.g.
    /// `"avx2 bmi2 avx512f avx512bw avx512vl avx512vbmi2 avx512vpopcntdq gfni"`.
    pub fn features(self) -> String {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::is_x86_feature_detected as has;
            let mut v: Vec<&str> = Vec::new();
            macro_rules! probe {
                ($($f:tt),*) => { $(if has!($f) { v.push($f); })* };
            }
            probe!(
                "sse4.2",
                "popcnt",
                "pclmulqdq",
                "avx2",
                "bmi1",
                "bmi2",
                "lzcnt",
                "fma",
                "avx512f",
                "avx512bw",
                "avx512cd",
                "avx512dq",
                "avx512vl",
                "avx512vbmi",
                "avx512vbmi2",
                "avx512ifma",
                "avx512vpopcntdq",
                "avx512bitalg",
                "gfni"
            );
            if has!("bmi2") && !self.fast_pdep {
                v.push("(pdep microcoded)");
            }
            v.join(" ")
        }
        #[cfg(not(target_arch = "x86_64"))]
        String::from("(not x86-64)")
    }
}

/// AMD (and Hygon) CPUs before family 19h (Zen 3) run `pdep`/`pext` in microcode.
#[cfg(target_arch = "x86_64")]
fn microcoded_pdep() -> bool {
    use std::arch::x86_64::__cpuid;
    let (v, f) = (__cpuid(0), __cpuid(1));
    let mut vendor = [0u8; 12];
    vendor[0..4].copy_from_slice(&v.ebx.to_le_bytes());
    vendor[4..8].copy_from_slice(&v.edx.to_le_bytes());
    vendor[8..12].copy_from_slice(&v.ecx.to_le_bytes());
    let base = (f.eax >> 8) & 0xf;
    let family = if base == 0xf {
        base + ((f.eax >> 20) & 0xff)
    } else {
        base
    };
    (&vendor == b"AuthenticAMD" || &vendor == b"HygonGenuine") && family < 0x19
}

/// The SIMD path a computation runs on. `Copy`; pass it down to whatever runs hot loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Simd {
    path: Path,
}

impl Simd {
    /// The scalar path: runs anywhere.
    pub const SCALAR: Simd = Simd { path: Path::Scalar };

    /// The best path for this CPU.
    pub fn detect() -> Simd {
        let cpu = Cpu::get();
        Simd {
            path: cpu.path(cpu.best()).expect("the best level is supported"),
        }
    }

    /// `level` on this CPU, or an error naming the best level it has.
    pub fn for_level(level: Level) -> Result<Simd, SimdError> {
        let cpu = Cpu::get();
        cpu.path(level)
            .map(|path| Simd { path })
            .ok_or(SimdError::Unsupported {
                want: level,
                best: cpu.best(),
            })
    }

    /// `CAVESWEEP_SIMD` if set (an error if it names an unknown level or one the CPU lacks),
    /// else the best path.
    pub fn from_env() -> Result<Simd, SimdError> {
        match std::env::var("CAVESWEEP_SIMD") {
            Ok(v) if !v.trim().is_empty() => Simd::for_level(v.parse()?),
            _ => Ok(Simd::detect()),
        }
    }

    /// The process-wide choice: [`Simd::from_env`], decided once. A bad `CAVESWEEP_SIMD` falls
    /// back to the best path here; the command line checks [`Simd::from_env`] first and refuses
    /// to run with a bad one.
    pub fn active() -> Simd {
        static ACTIVE: OnceLock<Simd> = OnceLock::new();
        *ACTIVE.get_or_init(|| Simd::from_env().unwrap_or_else(|_| Simd::detect()))
    }

    /// Every path this CPU can run, lowest first (each level once, plus the slow-pdep variant
    /// of AVX2 and the plain AVX-512 variant where the CPU runs a better one): what the tests
    /// run against the oracle.
    pub fn available() -> Vec<Simd> {
        let cpu = Cpu::get();
        let mut v: Vec<Simd> = Level::ALL
            .iter()
            .filter_map(|&l| cpu.path(l))
            .map(|path| Simd { path })
            .collect();
        if cpu.avx2 && cpu.fast_pdep {
            v.push(Simd {
                path: Path::Avx2SlowPdep,
            });
        }
        if cpu.avx512_vbmi2 {
            v.push(Simd { path: Path::Avx512 });
        }
        v.sort_by_key(|s| s.path);
        v
    }

    /// The level of this path (what `CAVESWEEP_SIMD` names).
    pub fn level(self) -> Level {
        self.path.level()
    }

    /// The compiled clone this `Simd` runs.
    pub fn path(self) -> Path {
        self.path
    }

    /// Caves per batch on this path (the lanes of its widest vector).
    pub fn lanes(self) -> usize {
        match self.path.level() {
            Level::Scalar => 1,
            Level::Sse2 => 2,
            Level::Avx2 => 4,
            Level::Avx512 => 8,
        }
    }

    /// Run `task` in this path's clone.
    #[inline]
    pub fn run<T: Task>(self, task: T) -> T::Output {
        // SAFETY (every arm): a `Simd` only holds a path that `Cpu::path` granted for this CPU,
        // so the clone's features are present.
        match self.path {
            Path::Scalar => baseline::<T, Scalar>(task),
            Path::Sse2 => baseline::<T, Sse2>(task),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Cpu::path` granted this path for this CPU, so the clone's features are present.
            Path::Avx2SlowPdep => unsafe { clones::avx2_slow_pdep(task) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Cpu::path` granted this path for this CPU, so the clone's features are present.
            Path::Avx2 => unsafe { clones::avx2(task) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Cpu::path` granted this path for this CPU, so the clone's features are present.
            Path::Avx512 => unsafe { clones::avx512(task) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Cpu::path` granted this path for this CPU, so the clone's features are present.
            Path::Avx512Vbmi2 => unsafe { clones::avx512_vbmi2(task) },
            #[cfg(not(target_arch = "x86_64"))]
            _ => baseline::<T, Scalar>(task),
        }
    }
}

impl fmt::Display for Simd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.path.name())
    }
}

/// The baseline clones (no extra features): kept out of line like the others.
#[inline(never)]
fn baseline<T: Task, I: Isa>(task: T) -> T::Output {
    task.run::<I>()
}

/// Run a block in a [`Simd`]'s clone: the [`Task`] struct and impl every dispatch needs,
/// written once instead of at each call (#36). `$I` names the clone's [`Isa`] inside the block;
/// each captured value is given as `name: Type = value` (references with the lifetime `'a`) and
/// the block sees it by `name`. The generated `run` is `#[inline(always)]`, so the block is
/// compiled into each clone with that clone's instructions, as a hand-written [`Task`] is.
///
/// ```
/// use cavesweep_core::simd::{Lane, Simd};
/// let words = [1u64, 3, 7];
/// let ones = cavesweep_core::simd_run!(Simd::detect(), <I> (w: &'a [u64] = &words) -> u32 {
///     w.iter().map(|x| x.count_ones()).sum()
/// });
/// assert_eq!(ones, 6);
/// ```
///
/// A block that needs a type parameter of the caller's (an `R: Rng` it was given, say) names
/// it after the clone's: `<I> [R: Rng + ?Sized] (rng: &'a mut R = rng, ...)`; inner items
/// cannot see the caller's generics, so the macro declares it again on the generated struct.
/// A second lifetime is named the same way: `<I> ['b] (s: &'a mut Stream<'b> = self)`.
#[macro_export]
macro_rules! simd_run {
    ($simd:expr, <$I:ident> [$l:lifetime] ($($name:ident : $ty:ty = $val:expr),* $(,)?) -> $out:ty $body:block) => {{
        struct T<'a, $l> {
            $($name: $ty,)*
            _life: ::core::marker::PhantomData<(&'a (), &$l ())>,
        }
        impl<$l> $crate::simd::Task for T<'_, $l> {
            type Output = $out;
            #[inline(always)]
            fn run<$I: $crate::simd::Isa>(self) -> $out {
                let T { $($name,)* _life: _ } = self;
                $body
            }
        }
        $simd.run(T {
            $($name: $val,)*
            _life: ::core::marker::PhantomData,
        })
    }};
    ($simd:expr, <$I:ident> [$G:ident : $($bound:tt)+] ($($name:ident : $ty:ty = $val:expr),* $(,)?) -> $out:ty $body:block) => {{
        struct T<'a, $G: $($bound)+> {
            $($name: $ty,)*
            _life: ::core::marker::PhantomData<&'a ()>,
        }
        impl<$G: $($bound)+> $crate::simd::Task for T<'_, $G> {
            type Output = $out;
            #[inline(always)]
            fn run<$I: $crate::simd::Isa>(self) -> $out {
                let T { $($name,)* _life: _ } = self;
                $body
            }
        }
        $simd.run(T::<'_, $G> {
            $($name: $val,)*
            _life: ::core::marker::PhantomData,
        })
    }};
    ($simd:expr, <$I:ident> ($($name:ident : $ty:ty = $val:expr),* $(,)?) -> $out:ty $body:block) => {{
        struct T<'a> {
            $($name: $ty,)*
            _life: ::core::marker::PhantomData<&'a ()>,
        }
        impl $crate::simd::Task for T<'_> {
            type Output = $out;
            #[inline(always)]
            fn run<$I: $crate::simd::Isa>(self) -> $out {
                let T { $($name,)* _life: _ } = self;
                $body
            }
        }
        $simd.run(T {
            $($name: $val,)*
            _life: ::core::marker::PhantomData,
        })
    }};
}

/// A computation written once for every [`Isa`]. Implementations must mark `run`
/// `#[inline(always)]` (and keep everything hot below it inlined) so that it is compiled into
/// each clone with that clone's instructions.
pub trait Task {
    /// What the computation returns.
    type Output;
    /// Run the computation with `I`'s vector types and instructions; called by [`Simd::run`]
    /// inside the clone for `I::PATH`. Must be `#[inline(always)]`.
    fn run<I: Isa>(self) -> Self::Output;
}

/// What a clone offers the generic code: vector widths and the optional instructions.
pub trait Isa: 'static {
    /// The clone this ISA is compiled into.
    const PATH: Path;
    /// One word of each cave of a batch (lanes across caves).
    type Lanes: Lane;
    /// Consecutive words of one row (lanes across words): 4 from AVX2 on (AVX-512 runs them in
    /// `ymm` registers with its three-input logic), so the grid layout need not change.
    type Row: Lane;
    /// `pdep`/`pext` are available and fast.
    const FAST_PDEP: bool;
    /// `pclmulqdq` is available.
    const CLMUL: bool;
}

macro_rules! isa {
    ($(#[$m:meta])* $name:ident, $path:ident, $lanes:ty, $row:ty, $pdep:expr, $clmul:expr) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, Default)]
        pub struct $name;
        impl Isa for $name {
            const PATH: Path = Path::$path;
            type Lanes = $lanes;
            type Row = $row;
            const FAST_PDEP: bool = $pdep;
            const CLMUL: bool = $clmul;
        }
    };
}

isa!(
    /// One word per vector, baseline instructions.
    Scalar, Scalar, W1, W1, false, false
);
isa!(
    /// Two words per vector, baseline instructions (SSE2).
    Sse2, Sse2, W2, W2, false, false
);
isa!(
    /// x86-64-v3, `pdep` avoided.
    Avx2SlowPdep, Avx2SlowPdep, W4, W4, false, true
);
isa!(
    /// x86-64-v3.
    Avx2, Avx2, W4, W4, true, true
);
isa!(
    /// AVX-512 F/BW/CD/DQ/VL on top of x86-64-v3.
    Avx512, Avx512, W8, W4, true, true
);
isa!(
    /// AVX-512 with VBMI2, VPOPCNTDQ, BITALG and GFNI.
    Avx512Vbmi2, Avx512Vbmi2, W8, W4, true, true
);

/// The clones' entry points: the only functions with `#[target_feature]`.
#[cfg(target_arch = "x86_64")]
mod clones {
    use super::{Avx2, Avx2SlowPdep, Avx512, Avx512Vbmi2, Isa, Task};

    #[inline(always)]
    fn go<T: Task, I: Isa>(task: T) -> T::Output {
        task.run::<I>()
    }

    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt,fma,pclmulqdq")]
    pub unsafe fn avx2_slow_pdep<T: Task>(task: T) -> T::Output {
        go::<T, Avx2SlowPdep>(task)
    }

    #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt,fma,pclmulqdq")]
    pub unsafe fn avx2<T: Task>(task: T) -> T::Output {
        go::<T, Avx2>(task)
    }

    #[target_feature(
        enable = "avx2,bmi1,bmi2,lzcnt,popcnt,fma,pclmulqdq,avx512f,avx512bw,avx512cd,avx512dq,avx512vl"
    )]
    pub unsafe fn avx512<T: Task>(task: T) -> T::Output {
        go::<T, Avx512>(task)
    }

    #[target_feature(
        enable = "avx2,bmi1,bmi2,lzcnt,popcnt,fma,pclmulqdq,avx512f,avx512bw,avx512cd,avx512dq,avx512vl,avx512vbmi,avx512vbmi2,avx512vpopcntdq,avx512bitalg,gfni"
    )]
    pub unsafe fn avx512_vbmi2<T: Task>(task: T) -> T::Output {
        go::<T, Avx512Vbmi2>(task)
    }
}

/// Prefix XOR of a word: bit `j` of the result is the XOR of bits `0..=j` of `x`. One
/// carry-less multiply where the clone has `pclmulqdq`, six shift-XOR rounds otherwise.
#[inline(always)]
pub fn prefix_xor<I: Isa>(x: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if I::CLMUL {
        use std::arch::x86_64::{_mm_clmulepi64_si128, _mm_cvtsi64_si128, _mm_cvtsi128_si64};
        // SAFETY: `I::CLMUL` is only true for clones whose CPUs were checked for PCLMULQDQ;
        // the intrinsics only touch registers.
        return unsafe {
            let r = _mm_clmulepi64_si128::<0>(_mm_cvtsi64_si128(x as i64), _mm_cvtsi64_si128(-1));
            _mm_cvtsi128_si64(r) as u64
        };
    }
    let mut x = x;
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// `pdep(src, mask)` where the clone has fast BMI2; callers check [`Isa::FAST_PDEP`] first and
/// use a portable formulation otherwise (this fallback is a plain loop, for completeness).
#[inline(always)]
pub fn pdep<I: Isa>(src: u64, mask: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if I::FAST_PDEP {
        // SAFETY: `I::FAST_PDEP` is only true for clones whose CPUs were checked for BMI2.
        return unsafe { std::arch::x86_64::_pdep_u64(src, mask) };
    }
    let (mut m, mut r, mut k) = (mask, 0u64, 0);
    while m != 0 {
        let low = m & m.wrapping_neg();
        if (src >> k) & 1 == 1 {
            r |= low;
        }
        m ^= low;
        k += 1;
    }
    r
}

/// `pext(src, mask)`; see [`pdep`].
#[inline(always)]
pub fn pext<I: Isa>(src: u64, mask: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if I::FAST_PDEP {
        // SAFETY: as for `pdep`.
        return unsafe { std::arch::x86_64::_pext_u64(src, mask) };
    }
    let (mut m, mut r, mut k) = (mask, 0u64, 0);
    while m != 0 {
        let low = m & m.wrapping_neg();
        if src & low != 0 {
            r |= 1 << k;
        }
        m ^= low;
        k += 1;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Probe(u64);
    impl Task for Probe {
        type Output = (Path, usize, u64, u64, u64);
        #[inline(always)]
        fn run<I: Isa>(self) -> Self::Output {
            let x = self.0;
            (
                I::PATH,
                <I::Lanes as Lane>::N,
                prefix_xor::<I>(x),
                pdep::<I>(x, 0xf0f0_0ff0_1234_8001),
                pext::<I>(x, 0xf0f0_0ff0_1234_8001),
            )
        }
    }

    #[test]
    fn every_available_path_runs_its_clone() {
        let x = 0x9e37_79b9_7f4a_7c15u64;
        let want_prefix = (0..64).fold(0u64, |acc, j| {
            acc | (((x & (!0u64 >> (63 - j))).count_ones() as u64 & 1) << j)
        });
        let all = Simd::available();
        assert!(all.iter().any(|s| s.path() == Path::Scalar));
        let base = Scalar.run_probe(x);
        for s in all {
            let (path, lanes, px, dep, ext) = s.run(Probe(x));
            assert_eq!(path, s.path());
            assert_eq!(lanes, s.lanes());
            assert_eq!(px, want_prefix, "{s}");
            assert_eq!((dep, ext), (base.3, base.4), "{s}");
        }
    }

    impl Scalar {
        fn run_probe(self, x: u64) -> (Path, usize, u64, u64, u64) {
            Probe(x).run::<Scalar>()
        }
    }

    #[test]
    fn pdep_pext_fallbacks_match_definition() {
        let (src, mask) = (0b1011u64, 0b1100_1010u64);
        // pdep: the low bits of src go to the set bits of mask, lowest first.
        assert_eq!(pdep::<Scalar>(src, mask), 0b1000_1010);
        assert_eq!(pext::<Scalar>(0b1000_1010, mask), 0b1011 & 0b1011);
        assert_eq!(pext::<Scalar>(0b0100_0010, mask), 0b0101);
    }

    #[test]
    fn levels_parse_and_order() {
        for l in Level::ALL {
            assert_eq!(l.name().parse::<Level>().unwrap(), l);
        }
        assert!(matches!(
            "avx3".parse::<Level>(),
            Err(SimdError::Unknown(_))
        ));
        assert!(Level::Scalar < Level::Avx512);
        assert!(Simd::for_level(Level::Scalar).is_ok());
        let best = Cpu::get().best();
        assert_eq!(Simd::detect().level(), best);
        for l in Level::ALL {
            assert_eq!(Simd::for_level(l).is_ok(), l <= best, "{l}");
        }
        let e = SimdError::Unsupported {
            want: Level::Avx512,
            best: Level::Sse2,
        };
        assert!(e.to_string().contains("avx512") && e.to_string().contains("sse2"));
    }
}
