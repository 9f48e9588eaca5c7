//! Connected components of FLOOR on bit planes, by bit-parallel flood fill.
//!
//! Why not union-find over runs: a measured run-based union-find took 3.8-4.5 us on a 90x140
//! cave, and almost all of its work is bookkeeping for the one giant component that a smoothed
//! cave has. A flood fill that moves whole floor runs per word operation does that component in a
//! few sweeps over the rows; only the (usually few, small) leftovers need more floods.
//!
//! The flood works on *planes*: one bit per cell, FLOOR = 1 here (the inverse of [`Grid`]), laid
//! out like [`Grid`] with a zero guard word on each side of a row and a zero guard row above and
//! below, so neighbour reads need no edge cases. One step of a flood:
//!
//! 1. *vertical*: candidates of row `y` = floor cells of `y` next to claimed cells of rows
//!    `y - 1` / `y + 1` (dilated by one column first for 8-connectivity) that are not yet claimed;
//! 2. *horizontal*: every floor run of row `y` holding a candidate is claimed whole by
//!    [`fill_row`] (an add-with-carry fills each run upward from its lowest seed, a
//!    `pext`/`pdep` subtraction fills it downward, both chained across the words of the row).
//!
//! Only rows next to a row that changed are re-examined (a pending-row bitset), swept alternately
//! downward and upward until nothing is pending. The claimed plane only ever holds whole components, so one plane serves all
//! floods of a labelling: a finished component never has unclaimed floor next to it.

use crate::grid::Grid;
use crate::simd::{Isa, Lane, Simd, pdep, pext};

use super::Connectivity;
use super::flood;
use super::runs::RunLabel;
#[cfg(target_arch = "x86_64")]
use super::wide;

/// Shape of a bit plane, mirroring [`Grid`]'s layout (guard words and guard rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Layout {
    pub rows: usize,
    pub cols: usize,
    /// Words holding the cells of one row.
    pub wpr: usize,
    /// `wpr` rounded up to whole `[u64; 4]` chunks (the extra words are zero).
    pub w4: usize,
    /// Words between row starts: `w4` plus a guard word on each side.
    pub stride: usize,
}

impl Layout {
    pub fn new(rows: usize, cols: usize) -> Layout {
        let wpr = cols.div_ceil(64);
        let w4 = wpr.next_multiple_of(4);
        Layout {
            rows,
            cols,
            wpr,
            w4,
            stride: w4 + 2,
        }
    }
    /// Words in a plane (guard rows included).
    pub fn len(&self) -> usize {
        (self.rows + 2) * self.stride
    }
    /// Index of word 0 of row `y`; `y = -1` and `y = rows` are the guard rows.
    #[inline(always)]
    pub fn off(&self, y: isize) -> usize {
        (y + 1) as usize * self.stride + 1
    }
    pub fn last_mask(&self) -> u64 {
        match self.cols % 64 {
            0 => !0,
            r => (1u64 << r) - 1,
        }
    }
}

/// Write the FLOOR plane of `g` (FLOOR = 1, every bit outside the grid 0) into `f` and zero
/// `s`, both planes of `lay` (which has `g`'s layout: same stride, same offsets). Returns the
/// number of FLOOR cells. A row is one or a few vectors: `!g`, masked, stored.
#[inline(always)]
fn floor_plane_in<V: Lane>(g: &Grid, lay: &Layout, f: &mut [u64], s: &mut [u64]) -> u64 {
    assert!(g.raw().len() == lay.len() && f.len() == lay.len() && s.len() == lay.len());
    assert_eq!(g.stride(), lay.stride);
    let raw = g.raw();
    s.fill(0);
    let chunks = lay.w4 / V::N;
    // Valid-bit masks of the chunks from the one holding the row's last word on (at most
    // 4 / N of them: rows are padded to 4 words); earlier chunks are all valid.
    let first_partial = (lay.wpr - 1) / V::N;
    let mut tail = [V::ZERO; 4];
    for (t, m) in tail.iter_mut().enumerate().take(chunks - first_partial) {
        *m = V::from_fn(|k| {
            let w = (first_partial + t) * V::N + k;
            match w.cmp(&(lay.wpr - 1)) {
                std::cmp::Ordering::Less => !0,
                std::cmp::Ordering::Equal => lay.last_mask(),
                std::cmp::Ordering::Greater => 0,
            }
        });
    }
    let mut count = V::ZERO;
    for y in 0..lay.rows {
        let o = lay.off(y as isize);
        for c in 0..chunks {
            let valid = if c < first_partial {
                V::ONES
            } else {
                tail[c - first_partial]
            };
            let v = !V::load(raw, o + c * V::N) & valid;
            v.store(f, o + c * V::N);
            count = count.add(v.popcnt());
        }
    }
    count.sum()
}

/// Fill one word downward (toward bit 0) from the seeds `s` through the floor bits `f`:
/// every bit from each seed down to the nearest non-floor bit below it.
///
/// With fast BMI2: the seeds and the holes together form a set `V`; the fill below a seed ends
/// just above its predecessor in `V`. `pext`/`pdep` find the predecessors of all seeds at once,
/// and since the ranges `[pred + 1, seed)` are disjoint, one subtraction fills them all.
/// Without (or where `pdep` is microcoded): a Kogge-Stone occluded fill, 6 doubling rounds.
#[inline(always)]
pub(crate) fn fill_down_word<I: Isa>(f: u64, s: u64) -> u64 {
    if I::FAST_PDEP {
        let v = s | !f;
        let k = pext::<I>(s, v);
        let p = pdep::<I>(k >> 1, v);
        let start = (p << 1) | (k & 1);
        s.wrapping_sub(start) | s
    } else {
        fill_down_word_portable(f, s)
    }
}

/// [`fill_down_word`] without BMI2: a Kogge-Stone occluded fill (6 doubling rounds).
#[inline(always)]
pub(crate) fn fill_down_word_portable(f: u64, s: u64) -> u64 {
    let (mut x, mut m) = (s, f);
    x |= (x >> 1) & m;
    m &= m >> 1;
    x |= (x >> 2) & m;
    m &= m >> 2;
    x |= (x >> 4) & m;
    m &= m >> 4;
    x |= (x >> 8) & m;
    m &= m >> 8;
    x |= (x >> 16) & m;
    m &= m >> 16;
    x |= (x >> 32) & m;
    x
}

/// Every floor run of one row (words `f`) that holds a seed (`seed` must be a subset of `f`),
/// written to `out`. Runs may cross word boundaries.
///
/// Upward: `f + seed` carries from the lowest seed of each run to the bit above the run, so
/// `(f + seed) ^ f` (plus the seeds the carry passed over) is each run from its lowest seed up;
/// the carry out of a word continues the run in the next word. Downward: [`fill_down_word`] on
/// each word independently (so the words' fills overlap instead of waiting on each other), then
/// a cheap fix-up: the run reaching bit 63 of a word is filled whole when the word above has
/// bit 0 filled from above. This matters because a flood sweep is a serial chain of row fills.
#[inline(always)]
pub(crate) fn fill_row<I: Isa>(f: &[u64], seed: &[u64], out: &mut [u64]) {
    let n = f.len();
    let (seed, out) = (&seed[..n], &mut out[..n]);
    let mut carry = 0u64;
    for i in 0..n {
        (out[i], carry) = flood::fill_up_word(f[i], seed[i], carry);
        // Downward within the word; `out` keeps the seeds, so bit 0 of `down` below is only
        // set by a seed at or above it in this word.
        out[i] |= fill_down_word::<I>(f[i], seed[i]);
    }
    // `from_above`: bit 0 of word i + 1 is filled by a seed at or above it.
    let mut from_above = false;
    for i in (0..n).rev() {
        let fi = f[i];
        // Bit 0 is filled from this word's own seeds iff the floor run at bit 0 holds one
        // (the same as bit 0 of `fill_down_word`, without a second pext/pdep per word: those
        // share one port, and with them the row cost 4 of them per word).
        let t = fi.trailing_ones();
        let low = if t == 64 { !0 } else { (1u64 << t) - 1 };
        let own = seed[i] & low != 0;
        if from_above && fi >> 63 == 1 {
            out[i] |= !0u64 << (64 - fi.leading_ones());
        }
        from_above = own || (from_above && fi == !0);
    }
}

/// [`fill_row`] for a row of exactly `N` words, fully unrolled: [`runs`] on the first `N`
/// words of a 4-word row (the others 0).
#[inline(always)]
pub(crate) fn fill_row_n<I: Isa, const N: usize>(f: &[u64; 4], seed: &[u64; 4]) -> [u64; 4] {
    let r = runs::<I, N>(
        std::array::from_fn(|i| f[i]),
        std::array::from_fn(|i| seed[i]),
    );
    std::array::from_fn(|i| if i < N { r[i] } else { 0 })
}

/// Four words starting at `o`.
#[inline(always)]
fn ld4(v: &[u64], o: usize) -> [u64; 4] {
    v[o..o + 4].try_into().expect("4 words")
}

/// Reusable flood-fill state: the floor plane `f`, the claimed plane `s` and row scratch.
#[derive(Debug, Clone)]
pub(crate) struct Flood {
    /// The SIMD path the floods run on.
    pub simd: Simd,
    /// FLOOR cells of the loaded grid, and cells claimed since the claims were last cleared:
    /// when they are equal nothing is left to label, and the scan for unclaimed floor is
    /// skipped (one component, the usual case).
    floor: u64,
    claimed: u64,
    pub lay: Layout,
    pub f: Vec<u64>,
    pub s: Vec<u64>,
    cand: Vec<u64>,
    new: Vec<u64>,
    seed: Vec<u64>,
    pend: Vec<u64>,
}

/// Lowest set bit at index `>= from` of a bitset.
#[inline(always)]
fn next_set(v: &[u64], from: usize) -> Option<usize> {
    let mut w = from / 64;
    if w >= v.len() {
        return None;
    }
    let mut m = v[w] & (!0u64 << (from % 64));
    loop {
        if m != 0 {
            return Some(w * 64 + m.trailing_zeros() as usize);
        }
        w += 1;
        if w == v.len() {
            return None;
        }
        m = v[w];
    }
}

/// Highest set bit at index `<= from` of a bitset.
#[inline(always)]
fn prev_set(v: &[u64], from: usize) -> Option<usize> {
    let mut w = (from / 64).min(v.len() - 1);
    let mut m = if w == from / 64 {
        v[w] & (!0u64 >> (63 - from % 64))
    } else {
        v[w]
    };
    loop {
        if m != 0 {
            return Some(w * 64 + 63 - m.leading_zeros() as usize);
        }
        if w == 0 {
            return None;
        }
        w -= 1;
        m = v[w];
    }
}

/// Rows `lo..=hi` touched by a flood and the number of cells it claimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Filled {
    pub size: u32,
    pub lo: usize,
    pub hi: usize,
}

impl Default for Flood {
    fn default() -> Flood {
        Flood {
            simd: Simd::active(),
            floor: 0,
            claimed: 0,
            lay: Layout::default(),
            f: Vec::new(),
            s: Vec::new(),
            cand: Vec::new(),
            new: Vec::new(),
            seed: Vec::new(),
            pend: Vec::new(),
        }
    }
}

/// [`Flood::flood_from`] in a SIMD clone.
#[inline(always)]
fn flood_task<I: Isa>(flood: &mut Flood, y: usize, x: usize, conn: Connectivity) -> Filled {
    let lay = flood.lay;
    let (f, s, p) = (&flood.f[..], &mut flood.s[..], &mut flood.pend);
    match (lay.wpr, conn) {
        (1, Connectivity::Four) => flood_narrow::<I, 1, 4>(&lay, f, s, p, y, x),
        (2, Connectivity::Four) => flood_narrow::<I, 2, 4>(&lay, f, s, p, y, x),
        (3, Connectivity::Four) => flood_narrow::<I, 3, 4>(&lay, f, s, p, y, x),
        (4, Connectivity::Four) => flood_narrow::<I, 4, 4>(&lay, f, s, p, y, x),
        (1, Connectivity::Eight) => flood_narrow::<I, 1, 8>(&lay, f, s, p, y, x),
        (2, Connectivity::Eight) => flood_narrow::<I, 2, 8>(&lay, f, s, p, y, x),
        (3, Connectivity::Eight) => flood_narrow::<I, 3, 8>(&lay, f, s, p, y, x),
        (4, Connectivity::Eight) => flood_narrow::<I, 4, 8>(&lay, f, s, p, y, x),
        (1, Connectivity::Six) => flood_narrow::<I, 1, 6>(&lay, f, s, p, y, x),
        (2, Connectivity::Six) => flood_narrow::<I, 2, 6>(&lay, f, s, p, y, x),
        (3, Connectivity::Six) => flood_narrow::<I, 3, 6>(&lay, f, s, p, y, x),
        (4, Connectivity::Six) => flood_narrow::<I, 4, 6>(&lay, f, s, p, y, x),
        _ => flood.flood_from_in::<I>(y, x, conn),
    }
}

/// `N` words at `p + o`.
///
/// # Safety
/// `p + o .. p + o + N` must be readable.
#[inline(always)]
unsafe fn row_at<const N: usize>(p: *const u64, o: usize) -> [u64; N] {
    // SAFETY: the caller's guarantee.
    unsafe { std::ptr::read_unaligned(p.add(o) as *const [u64; N]) }
}

/// Every floor run of a row of `N` words (`f`) holding a seed (`c`, a subset of `f`), as
/// [`fill_row`] but branch-free and in registers: the upward fill is one add-with-carry chain
/// over the row, the downward fill [`fill_down_word`] per word, and a run that crosses a word
/// boundary downward is completed by a select per word.
#[inline(always)]
fn runs<I: Isa, const N: usize>(f: [u64; N], c: [u64; N]) -> [u64; N] {
    let mut out = flood::fill_up::<u64, N>(f, c);
    // A plain loop, not `array::from_fn`: its closure was compiled out of line, outside the
    // SIMD clone, so `pext`/`pdep` became calls (seen in the release disassembly, 347 call
    // sites across the clones).
    let mut down = [0u64; N];
    for i in 0..N {
        down[i] = fill_down_word::<I>(f[i], c[i]);
        out[i] |= down[i];
    }
    // A run reaching bit 0 of word i + 1 from a seed at or above continues at the top of word
    // i (and further down through all-floor words).
    let mut from_above = 0u64;
    for i in (0..N).rev() {
        let top = !(u64::MAX.checked_shr((!f[i]).leading_zeros()).unwrap_or(0));
        out[i] |= top & from_above;
        from_above =
            0u64.wrapping_sub(down[i] & 1) | (from_above & 0u64.wrapping_sub((f[i] == !0) as u64));
    }
    out
}

/// Whether row `o` has unclaimed floor next to the cells `x` newly claimed in a row beside it.
///
/// # Safety
/// Row `o`'s `N` words must be readable in both planes.
#[inline(always)]
unsafe fn gains<const N: usize>(f: *const u64, s: *const u64, o: usize, x: [u64; N]) -> bool {
    // SAFETY: the caller's guarantee.
    let (fw, cur) = unsafe { (row_at::<N>(f, o), row_at::<N>(s, o)) };
    (0..N).fold(0, |a, i| a | (x[i] & fw[i] & !cur[i])) != 0
}

/// The narrow flood's state: the two planes (raw, see [`flood_narrow`]), the shape, the
/// pending-row bits and the running size.
struct Narrow<'a> {
    f: *const u64,
    s: *mut u64,
    rows: usize,
    stride: usize,
    pend: &'a mut [u64],
    size: u32,
}

impl Narrow<'_> {
    /// First word of row `b - 1` (bit `b` of `pend`; bits 0 and `rows + 1` are guard rows).
    #[inline(always)]
    fn at(&self, b: usize) -> usize {
        b * self.stride + 1
    }

    /// Candidates of row `b - 1`: its unclaimed floor next to claimed cells above or below.
    #[inline(always)]
    fn cand<const N: usize, const C: u8>(&self, b: usize) -> [u64; N] {
        let o = self.at(b);
        // SAFETY: rows b - 2 ..= b are inside the planes (see `flood_narrow`).
        let (fw, cur, up, dn) = unsafe {
            (
                row_at::<N>(self.f, o),
                row_at::<N>(self.s, o),
                row_at::<N>(self.s, o - self.stride),
                row_at::<N>(self.s, o + self.stride),
            )
        };
        let (a, b) = (
            flood::touch_above::<u64, N, C>(up),
            flood::touch_below::<u64, N, C>(dn),
        );
        std::array::from_fn(|i| (a[i] | b[i]) & fw[i] & !cur[i])
    }

    /// Claim the runs of row `b - 1` holding `c`, count the new cells and mark the rows beside
    /// it that now have candidates.
    #[inline(always)]
    fn claim<I: Isa, const N: usize, const C: u8>(&mut self, b: usize, c: [u64; N]) {
        let o = self.at(b);
        // SAFETY: row b - 1 is inside the planes (see `flood_narrow`).
        let (fw, cur) = unsafe { (row_at::<N>(self.f, o), row_at::<N>(self.s, o)) };
        let got = runs::<I, N>(fw, c);
        let new: [u64; N] = std::array::from_fn(|i| got[i] & !cur[i]);
        let row: [u64; N] = std::array::from_fn(|i| cur[i] | got[i]);
        // SAFETY: as above.
        unsafe { std::ptr::write_unaligned(self.s.add(o) as *mut [u64; N], row) };
        self.size += new.iter().map(|w| w.count_ones()).sum::<u32>();
        // The row above sees `new` from below, the row below from above.
        let (up, dn) = (
            flood::touch_below::<u64, N, C>(new),
            flood::touch_above::<u64, N, C>(new),
        );
        for (q, x) in [(b - 1, up), (b + 1, dn)] {
            // SAFETY: row q - 1 is a grid row (guard rows are skipped).
            if q != 0 && q != self.rows + 1 && unsafe { gains::<N>(self.f, self.s, self.at(q), x) }
            {
                self.pend[q / 64] |= 1u64 << (q % 64);
            }
        }
    }
}

/// [`Flood::flood_from`] for rows of exactly `N <= 4` words (grids up to 256 wide), rows kept
/// in registers. Pending rows are swept alternately downward and upward until none is left,
/// as in the general flood, but a row is only marked pending when a change beside it gives it
/// new candidates (checked on the spot, a few operations), so every visit claims something:
/// on chapter-strict caves this halved the visits (185 -> ~95 per cave). The row step is
/// branch-free apart from the pending-bit loop. `pend` is scratch (one bit per row plus the
/// two guard rows).
#[inline(always)]
fn flood_narrow<I: Isa, const N: usize, const C: u8>(
    lay: &Layout,
    f: &[u64],
    s: &mut [u64],
    pend: &mut Vec<u64>,
    y0: usize,
    x0: usize,
) -> Filled {
    let (rows, stride) = (lay.rows, lay.stride);
    assert!(f.len() == lay.len() && s.len() == lay.len() && N == lay.wpr && N + 2 <= stride);
    assert_eq!(lay.off(0), stride + 1);
    let nw = (rows + 2).div_ceil(64);
    pend.clear();
    pend.resize(nw, 0);
    // Every raw access of `Narrow` is to rows -1 ..= rows (guard rows included) of planes of
    // `lay.len()` words, as asserted; `N` words from a row's first word stay in its slot.
    let mut st = Narrow {
        f: f.as_ptr(),
        s: s.as_mut_ptr(),
        rows,
        stride,
        pend,
        size: 0,
    };
    let mut seed = [0u64; N];
    seed[x0 / 64] = 1u64 << (x0 % 64);
    st.claim::<I, N, C>(y0 + 1, seed);
    let (mut lo, mut hi) = (y0, y0);
    loop {
        let mut any = false;
        // Down: pending rows at or below the cursor, lowest first; rows marked below it are
        // met in this sweep, rows marked above it wait for the next.
        let mut pos = 0;
        while pos < 64 * nw {
            let i = pos / 64;
            let w = st.pend[i] & (!0u64 << (pos % 64));
            if w == 0 {
                pos = 64 * (i + 1);
                continue;
            }
            let b = 64 * i + w.trailing_zeros() as usize;
            st.pend[i] &= !(1u64 << (b % 64));
            any = true;
            let c = st.cand::<N, C>(b);
            st.claim::<I, N, C>(b, c);
            (lo, hi) = (lo.min(b - 1), hi.max(b - 1));
            pos = b + 1;
        }
        // Up: pending rows at or above the cursor, highest first.
        let mut pos = 64 * nw;
        while pos > 0 {
            let i = (pos - 1) / 64;
            let w = st.pend[i] & (!0u64 >> (63 - (pos - 1) % 64));
            if w == 0 {
                pos = 64 * i;
                continue;
            }
            let b = 64 * i + 63 - w.leading_zeros() as usize;
            st.pend[i] &= !(1u64 << (b % 64));
            any = true;
            let c = st.cand::<N, C>(b);
            st.claim::<I, N, C>(b, c);
            (lo, hi) = (lo.min(b - 1), hi.max(b - 1));
            pos = b;
        }
        if !any {
            return Filled {
                size: st.size,
                lo,
                hi,
            };
        }
    }
}

impl Flood {
    /// Load `g` (its FLOOR plane) and clear the claimed plane.
    pub fn load(&mut self, g: &Grid) {
        let simd = self.simd;
        crate::simd_run!(simd, <I> (flood: &'a mut Flood = self, g: &'a Grid = g) -> () {
            flood.load_on::<I>(g)
        });
    }

    /// [`Flood::load`] inside a SIMD clone (for callers that already run in one).
    #[inline(always)]
    pub(crate) fn load_on<I: Isa>(&mut self, g: &Grid) {
        let lay = Layout::new(g.rows(), g.cols());
        // The planes are reused as they are only for the same layout: the floor plane's writer
        // rewrites every row's words but not the guard rows and words, which must stay zero. A
        // layout of the same length but another shape has its guards where the last grid had
        // cells, so it starts from zeroed planes.
        let same = self.lay == lay && self.f.len() == lay.len() && self.s.len() == lay.len();
        self.lay = lay;
        if !same {
            for v in [&mut self.f, &mut self.s] {
                v.clear();
                v.resize(lay.len(), 0);
            }
        }
        // Whole chunks of 8 words: the AVX-512 wide row step keeps its scratch rows there.
        for v in [&mut self.cand, &mut self.new, &mut self.seed] {
            v.clear();
            v.resize(lay.wpr.next_multiple_of(8), 0);
        }
        self.floor = floor_plane_in::<I::Row>(g, &lay, &mut self.f, &mut self.s);
        self.claimed = 0;
    }

    /// FLOOR cells no flood has claimed.
    pub fn unclaimed(&self) -> u64 {
        self.floor - self.claimed
    }

    /// The components of the floor no flood has claimed (`F & !S`), labelled by their runs
    /// ([`RunLabel`]): their number and, unless `count_only` (4-connected only), the size of
    /// the largest (else 0). Claims nothing.
    ///
    /// Why: once the big component is flooded, what is left is pockets, hundreds of them on
    /// a large map; a flood per pocket costs its setup (the pending-row set, the seed row, a
    /// call into the SIMD clone) and a scan for the next, ~290 ns each on 1024x1024
    /// classic-4-5 caves, where the runs of every pocket cost a few word operations.
    pub fn label_rest(
        &mut self,
        runs: &mut RunLabel,
        conn: Connectivity,
        count_only: bool,
    ) -> (u32, u32) {
        assert!(!count_only || conn == Connectivity::Four);
        let simd = self.simd;
        crate::simd_run!(simd, <I> (
            flood: &'a mut Flood = self,
            runs: &'a mut RunLabel = runs,
            conn: Connectivity = conn,
            count_only: bool = count_only,
        ) -> (u32, u32) {
            label_rest_in(flood, runs, conn, count_only)
        })
    }

    /// Forget all claims.
    pub fn clear_claims(&mut self) {
        self.s.fill(0);
        self.claimed = 0;
    }

    /// Is `(y, x)` FLOOR?
    #[inline]
    pub fn is_floor(&self, y: usize, x: usize) -> bool {
        (self.f[self.lay.off(y as isize) + x / 64] >> (x % 64)) & 1 == 1
    }

    /// Is `(y, x)` claimed?
    #[inline]
    pub fn is_claimed(&self, y: usize, x: usize) -> bool {
        (self.s[self.lay.off(y as isize) + x / 64] >> (x % 64)) & 1 == 1
    }

    /// Grow pending row `b` (bit `b` = row `b - 1`) of a flood; if it gained cells, count them
    /// and mark its two neighbour rows pending.
    #[inline(always)]
    fn grow_pending<I: Isa>(
        &mut self,
        b: usize,
        conn: Connectivity,
        pend: &mut [u64],
        f: &mut Filled,
    ) {
        let n = self.grow_row::<I>(b - 1, conn);
        if n != 0 {
            f.size += n;
            f.lo = f.lo.min(b - 1);
            f.hi = f.hi.max(b - 1);
            pend[(b - 1) / 64] |= 1u64 << ((b - 1) % 64);
            pend[(b + 1) / 64] |= 1u64 << ((b + 1) % 64);
        }
    }

    /// Claim the whole component of FLOOR cell `(y, x)` (which must be unclaimed floor).
    pub fn flood_from(&mut self, y: usize, x: usize, conn: Connectivity) -> Filled {
        let simd = self.simd;
        let filled = crate::simd_run!(simd, <I> (
            flood: &'a mut Flood = self,
            y: usize = y,
            x: usize = x,
            conn: Connectivity = conn,
        ) -> Filled {
            flood_task::<I>(flood, y, x, conn)
        });
        self.claimed += filled.size as u64;
        filled
    }

    /// [`Flood::flood_from`] inside a SIMD clone (for callers that already run in one: the
    /// post-steps and the labelling, which flood once per component).
    #[inline(always)]
    pub(crate) fn flood_from_on<I: Isa>(
        &mut self,
        y: usize,
        x: usize,
        conn: Connectivity,
    ) -> Filled {
        let filled = flood_task::<I>(self, y, x, conn);
        self.claimed += filled.size as u64;
        filled
    }

    #[inline(always)]
    fn flood_from_in<I: Isa>(&mut self, y: usize, x: usize, conn: Connectivity) -> Filled {
        debug_assert!(self.is_floor(y, x) && !self.is_claimed(y, x));
        self.seed.fill(0);
        self.seed[x / 64] = 1u64 << (x % 64);
        let mut filled = Filled {
            size: self.claim::<I>(y, true),
            lo: y,
            hi: y,
        };
        // Pending rows to examine (bit y + 1 = row y; bits 0 and rows + 1 are the guard rows):
        // the neighbours of rows that changed. Swept alternately down and up, so a run of
        // changes down a corridor is followed in one sweep.
        let rows = self.lay.rows;
        let mut pend = std::mem::take(&mut self.pend);
        pend.clear();
        pend.resize((rows + 2).div_ceil(64), 0);
        let mark = |pend: &mut [u64], b: usize| pend[b / 64] |= 1u64 << (b % 64);
        mark(&mut pend, y);
        mark(&mut pend, y + 2);
        let mut pos = y;
        loop {
            let mut any = false;
            while let Some(b) = next_set(&pend, pos) {
                any = true;
                pend[b / 64] &= !(1u64 << (b % 64));
                pos = b + 1;
                if b == 0 || b > rows {
                    continue;
                }
                self.grow_pending::<I>(b, conn, &mut pend, &mut filled);
            }
            pos = pos.min(rows + 1);
            while let Some(b) = prev_set(&pend, pos) {
                any = true;
                pend[b / 64] &= !(1u64 << (b % 64));
                pos = b.saturating_sub(1);
                if b == 0 || b > rows {
                    if b == 0 {
                        break;
                    }
                    continue;
                }
                self.grow_pending::<I>(b, conn, &mut pend, &mut filled);
                if b == 1 {
                    break;
                }
            }
            if !any {
                self.pend = pend;
                return filled;
            }
        }
    }

    /// Claim the runs of row `y` holding a seed (from `self.seed` if `from_seed`, else from
    /// `self.cand`); returns the number of cells claimed.
    #[inline(always)]
    fn claim<I: Isa>(&mut self, y: usize, from_seed: bool) -> u32 {
        let o = self.lay.off(y as isize);
        let w = self.lay.wpr;
        let seed = if from_seed { &self.seed } else { &self.cand };
        fill_row::<I>(&self.f[o..o + w], seed, &mut self.new);
        let mut n = 0;
        for (s, &v) in self.s[o..o + w].iter_mut().zip(&self.new) {
            n += v.count_ones();
            *s |= v;
        }
        n
    }

    /// One flood step on row `y`: claim the runs next to claimed cells of the rows above and
    /// below. Returns the number of cells claimed (0 = nothing changed).
    #[inline(always)]
    fn grow_row<I: Isa>(&mut self, y: usize, conn: Connectivity) -> u32 {
        let lay = self.lay;
        let o = lay.off(y as isize);
        let (u, d) = (o - lay.stride, o + lay.stride);
        if lay.w4 == 4 {
            return self.grow_row4::<I>(o, u, d, conn);
        }
        #[cfg(target_arch = "x86_64")]
        if I::PATH == crate::simd::Path::Avx512Vbmi2 {
            let (f, s) = (self.f.as_ptr(), self.s.as_mut_ptr());
            let (st, w) = (lay.stride, lay.wpr);
            let (cand, new) = (&mut self.cand[..], &mut self.new[..]);
            // SAFETY: this is the `avx512-vbmi2` clone (its CPU has every instruction the
            // step uses); row `y` and the rows beside it (guard rows included) lie in both
            // planes of `lay.len()` words, with their guard words at `o - 1` and `o + w4`;
            // the scratch holds `wpr` rounded up to 8 words (`load_on`).
            return unsafe {
                match conn {
                    Connectivity::Four => wide::grow_row::<4>(f, s, o, st, w, cand, new),
                    Connectivity::Eight => wide::grow_row::<8>(f, s, o, st, w, cand, new),
                    Connectivity::Six => wide::grow_row::<6>(f, s, o, st, w, cand, new),
                }
            };
        }
        // Every plane row as a slice of exactly its words (and the guard word either side for
        // the rows above and below), so the loops below carry no bounds checks per word, as
        // indexing `s[u + i]` did. Whole-process 1024x1024 classic-4-5 sweeps, alternated:
        // 1.026x (median of 9 pairs, within their spread), outputs identical.
        let w = lay.wpr;
        let s = &self.s;
        let f = &self.f[o..o + w];
        let cur = &s[o..o + w];
        let (su, sd) = (&s[u - 1..u + w + 1], &s[d - 1..d + w + 1]);
        let cand = &mut self.cand[..w];
        let mut any = 0;
        match conn {
            Connectivity::Four => {
                for i in 0..w {
                    let v = (su[i + 1] | sd[i + 1]) & f[i] & !cur[i];
                    cand[i] = v;
                    any |= v;
                }
            }
            Connectivity::Eight => {
                for i in 0..w {
                    let a = su[i + 1] | sd[i + 1];
                    let l = su[i] | sd[i];
                    let r = su[i + 2] | sd[i + 2];
                    let n = a | (a << 1) | (a >> 1) | (l >> 63) | (r << 63);
                    let v = n & f[i] & !cur[i];
                    cand[i] = v;
                    any |= v;
                }
            }
            Connectivity::Six => {
                // From above: the cell itself and its NW (the column to the left in the row
                // above); from below: itself and its SE.
                for i in 0..w {
                    let (up, dn) = (su[i + 1], sd[i + 1]);
                    let n = up | dn | (up << 1) | (su[i] >> 63) | (dn >> 1) | (sd[i + 2] << 63);
                    let v = n & f[i] & !cur[i];
                    cand[i] = v;
                    any |= v;
                }
            }
        }
        if any == 0 {
            return 0;
        }
        self.claim::<I>(y, false)
    }

    /// [`Flood::grow_row`] for rows of one `[u64; 4]` chunk (cols <= 256): fixed-size arrays,
    /// no bounds checks in the inner loops, so the row work vectorises.
    #[inline(always)]
    fn grow_row4<I: Isa>(&mut self, o: usize, u: usize, d: usize, conn: Connectivity) -> u32 {
        let s = &self.s;
        let (fw, cur) = (ld4(&self.f, o), ld4(s, o));
        let (up, dn) = (ld4(s, u), ld4(s, d));
        let mut v = [0u64; 4];
        match conn {
            Connectivity::Four => {
                for j in 0..4 {
                    v[j] = up[j] | dn[j];
                }
            }
            Connectivity::Eight => {
                let (ul, dl, ur, dr) = (ld4(s, u - 1), ld4(s, d - 1), ld4(s, u + 1), ld4(s, d + 1));
                for j in 0..4 {
                    let a = up[j] | dn[j];
                    v[j] =
                        a | (a << 1) | (a >> 1) | ((ul[j] | dl[j]) >> 63) | ((ur[j] | dr[j]) << 63);
                }
            }
            Connectivity::Six => {
                let (ul, dr) = (ld4(s, u - 1), ld4(s, d + 1));
                for j in 0..4 {
                    v[j] =
                        up[j] | dn[j] | (up[j] << 1) | (ul[j] >> 63) | (dn[j] >> 1) | (dr[j] << 63);
                }
            }
        }
        let mut any = 0;
        for j in 0..4 {
            v[j] &= fw[j] & !cur[j];
            any |= v[j];
        }
        if any == 0 {
            return 0;
        }
        let out = match self.lay.wpr {
            1 => fill_row_n::<I, 1>(&fw, &v),
            2 => fill_row_n::<I, 2>(&fw, &v),
            3 => fill_row_n::<I, 3>(&fw, &v),
            _ => fill_row_n::<I, 4>(&fw, &v),
        };
        let mut n = 0;
        let mut row = cur;
        for j in 0..4 {
            n += out[j].count_ones();
            row[j] |= out[j];
        }
        // One whole-row store: the next row's vector load of this row then forwards from it.
        self.s[o..o + 4].copy_from_slice(&row);
        n
    }

    /// Next unclaimed FLOOR cell at or after row-major position `(y, word)`, as `(y, x)`;
    /// advances the cursor so a labelling scan is linear overall.
    #[inline(always)]
    pub fn next_unclaimed(&self, cursor: &mut (usize, usize)) -> Option<(usize, usize)> {
        if self.claimed == self.floor {
            return None;
        }
        let lay = self.lay;
        while cursor.0 < lay.rows {
            let o = lay.off(cursor.0 as isize);
            while cursor.1 < lay.wpr {
                let rem = self.f[o + cursor.1] & !self.s[o + cursor.1];
                if rem != 0 {
                    return Some((cursor.0, cursor.1 * 64 + rem.trailing_zeros() as usize));
                }
                cursor.1 += 1;
            }
            cursor.0 += 1;
            cursor.1 = 0;
        }
        None
    }
}

/// [`Flood::label_rest`], inlined into the SIMD clone its caller runs (hardware popcount and
/// trailing zeros).
#[inline(always)]
fn label_rest_in(
    flood: &mut Flood,
    runs: &mut RunLabel,
    conn: Connectivity,
    count_only: bool,
) -> (u32, u32) {
    let lay = flood.lay;
    let (f, s) = (&flood.f[..], &flood.s[..]);
    // The rows holding unclaimed floor.
    let rows = &mut flood.pend;
    rows.clear();
    rows.resize(lay.rows.div_ceil(64), 0);
    for y in 0..lay.rows {
        let o = lay.off(y as isize);
        let mut any = 0;
        for (&fw, &sw) in f[o..o + lay.wpr].iter().zip(&s[o..o + lay.wpr]) {
            any |= fw & !sw;
        }
        rows[y / 64] |= ((any != 0) as u64) << (y % 64);
    }
    let word = |y: usize, i: usize| {
        let o = lay.off(y as isize) + i;
        f[o] & !s[o]
    };
    if count_only {
        (runs.count4(lay.wpr, rows, word), 0)
    } else {
        runs.label(lay.wpr, conn, rows, word)
    }
}

/// FLOOR components of a grid: count, sizes and a label per cell.
///
/// Labels are numbered in row-major order of each component's first cell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Components {
    rows: usize,
    cols: usize,
    sizes: Vec<u32>,
    labels: Vec<u32>,
}

/// Label of a WALL cell in [`Components`]' label array.
const NO_LABEL: u32 = u32::MAX;

impl Components {
    /// Number of FLOOR components.
    pub fn count(&self) -> usize {
        self.sizes.len()
    }
    /// Cells of each component, by label.
    pub fn sizes(&self) -> &[u32] {
        &self.sizes
    }
    /// Component of `(y, x)`, or `None` for WALL or a cell outside the grid.
    pub fn label(&self, y: usize, x: usize) -> Option<u32> {
        if y >= self.rows || x >= self.cols {
            return None;
        }
        match self.labels[y * self.cols + x] {
            NO_LABEL => None,
            l => Some(l),
        }
    }

    /// Label every FLOOR cell of `g` using `flood` as scratch.
    pub(crate) fn compute(
        &mut self,
        flood: &mut Flood,
        prev: &mut Vec<u64>,
        g: &Grid,
        conn: Connectivity,
    ) {
        flood.load(g);
        let lay = flood.lay;
        self.rows = lay.rows;
        self.cols = lay.cols;
        self.sizes.clear();
        self.labels.clear();
        self.labels.resize(lay.rows * lay.cols, NO_LABEL);
        prev.clear();
        prev.resize(lay.len(), 0);
        let mut cursor = (0, 0);
        while let Some((y, x)) = flood.next_unclaimed(&mut cursor) {
            let label = self.sizes.len() as u32;
            let filled = flood.flood_from(y, x, conn);
            self.sizes.push(filled.size);
            for yy in filled.lo..=filled.hi {
                let o = lay.off(yy as isize);
                for i in 0..lay.wpr {
                    let mut new = flood.s[o + i] & !prev[o + i];
                    prev[o + i] |= new;
                    while new != 0 {
                        let x = i * 64 + new.trailing_zeros() as usize;
                        new &= new - 1;
                        self.labels[yy * lay.cols + x] = label;
                    }
                }
            }
        }
    }
}
