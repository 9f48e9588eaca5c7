//! Measuring a whole batch of caves where the steps left them: in SIMD lanes, one cave per
//! lane (see [`crate::kernel::batch`]), so the boundary and the spawn's flood fill of 8 caves
//! (AVX-512; 4 with AVX2) cost one instruction stream.
//!
//! Why: the per-cave flood of [`super::components`] visits about one row per step, and each
//! visit is a chain of dependent operations (pending-row bits, loads of the rows just stored,
//! `pext`/`pdep`), so it runs at a few instructions per cycle on one word at a time (~1.9 us on a
//! chapter-strict cave). A smoothed cave's floor is wide open: a synchronous *row sweep* (each
//! row claims the floor runs next to claimed cells of the rows above and below, the rows taken
//! top to bottom or bottom to top, so a claim runs down (up) the whole cave in one sweep) reaches
//! the spawn's whole component in 2-3 sweeps on chapter-strict caves. Swept in lanes, all caves
//! of a batch advance together and every vector operation does 8 caves' work.
//!
//! Lane planes (one vector per word, rows of `wpr` words, a zero guard row above and below, no
//! guard words): `F` = FLOOR (bits outside the grid 0), `RF` = each row of `F` mirrored (bit
//! `x` of the row to bit `64 wpr - 1 - x`: words reversed, bits of each word reversed) and `S`
//! = claimed cells. One row step (`wpr = 3`, AVX-512: about 60 vector operations for 8 caves):
//!
//! ```text
//! cand = spread(S[y-1] | S[y+1]) & F[y] & !S[y]          (none in any lane: skip the row)
//! seed = S[y] | cand
//! up   = runs from the lowest seed upward: F + seed as one wpr-word number (carries by the
//!        majority of the top bits), then ((F + seed) ^ F | seed) & F
//! down = the same upward fill on the mirrored row RF[y] and mirror(seed), mirrored back
//!        (`reverse_bits`: vgf2p8affineqb + a byte shuffle with GFNI)
//! S[y] = up | down          (every floor run of the row holding a seed, whole)
//! gain |= spread(S[y] & !old) & F[y-1] & !S[y-1]         (the row already swept may grow)
//! ```
//!
//! A sweep in which no row gave the row swept before it new candidates leaves `S` closed (every
//! row's runs whole, no floor beside a claim unclaimed), so sweeping stops there without a last
//! sweep that changes nothing. Rows of `S` are kept closed under runs from the start (the seed
//! rows are filled before the first sweep), so a row without candidates may be skipped.
//!
//! The flood starts from the spawn, or in a lane whose spawn is WALL from the first FLOOR cell at
//! or after the spawn's row (row-major, wrapping around), so that the big component is usually
//! found there too; its size is then not `connected_fraction` but still counts for
//! `components` and `largest_fraction`. What the flood left (floor outside the flooded
//! component: on chapter-strict caves nothing in 4 caves of 5, a few small pockets otherwise) is
//! `F & !S`, computed for every lane at once, and labelled per cave by union-find over its runs
//! ([`super::runs`]), which costs in proportion to the few rows it occupies. When that floor is
//! no larger than the flooded component (the usual case), the largest component is the flooded
//! one and the pockets are only counted, 4-connected by the branch-light
//! [`RunLabel::count4`](super::runs::RunLabel::count4). When it is larger (the flood began in a
//! pocket), further lane floods take the big component out of it first ([`more_floods`]).
//!
//! Rows of at most 4 words (grids up to 256 columns) are measured here; wider grids are
//! measured cave by cave (their rows fill the row kernels' vectors anyway).

use super::Connectivity;
use super::flood;
use super::runs::RunLabel;
use crate::kernel::batch::LaneBuf;
use crate::simd::{Isa, Lane, Simd};

/// Widest row (in words) measured in lanes.
pub(crate) const MAX_WORDS: usize = 4;

/// Whether caves with `cols` columns can be measured in lanes.
pub(crate) fn supported(cols: usize) -> bool {
    cols.div_ceil(64) <= MAX_WORDS
}

/// The batch's lane planes and what has been measured on them, per lane. Reused from batch to
/// batch (no allocation once grown).
#[derive(Debug, Clone)]
pub(crate) struct BatchPlanes {
    simd: Simd,
    rows: usize,
    cols: usize,
    /// `F` and `S` planes computed (with boundary and floor counts) / flood done.
    prepared: bool,
    flooded: bool,
    /// The floor the flood left is in `rest` / `rest_rows`.
    rested: bool,
    /// Every lane's cave is expected to ask for its spawn's component (a batch of a search's
    /// survivors, [`BatchPlanes::begin_dense`]): `min_width` takes it from the lane flood.
    dense: bool,
    /// Per lane: boundary, FLOOR cells, cells of the flooded component.
    boundary: [u64; 8],
    floor: [u64; 8],
    size: [u32; 8],
    /// Per lane: the spawn is FLOOR (the flood started there); the exit was claimed.
    spawn_floor: [bool; 8],
    exit_in: [bool; 8],
    f: LaneBuf,
    rf: LaneBuf,
    s: LaneBuf,
    /// `F & !S` after the flood (the floor it left, rows as in `F`), and per row the OR of
    /// its words (a lane's row without any is skipped by one test).
    rest: LaneBuf,
    rest_rows: LaneBuf,
    /// Per lane, the bitset of its rows holding any of that floor (`rows.div_ceil(64)` words).
    rest_set: Vec<u64>,
    /// Per lane, the number of 4-connected components of that floor when its run graph has no
    /// cycle (then it is runs - touching pairs), else `None` ([`rest_trees_in`]).
    rest_trees: [Option<u32>; 8],
    /// Per lane, where the run graph may hold a cycle: its runs - touching pairs, and the rows
    /// `lo..=hi` holding every cycle ([`Trees::band`]).
    rest_band: [Option<(u32, usize, usize)>; 8],
    /// Scratch: a lane's rest rows within its band (`rest_set`'s shape).
    band_set: Vec<u64>,
    /// Components flooded after the spawn's ([`more_floods`]), all lanes in one plane, and per
    /// lane how many and the size of the largest.
    s2: LaneBuf,
    more: [u32; 8],
    more_largest: [u32; 8],
    /// Per lane, the cells of every flooded component (the spawn's and the later ones).
    claimed: [u64; 8],
    /// The labelling of that floor, lane by lane.
    runs: RunLabel,
}

impl Default for BatchPlanes {
    fn default() -> BatchPlanes {
        BatchPlanes {
            simd: Simd::active(),
            rows: 0,
            cols: 0,
            prepared: false,
            flooded: false,
            rested: false,
            dense: false,
            boundary: [0; 8],
            floor: [0; 8],
            size: [0; 8],
            spawn_floor: [false; 8],
            exit_in: [false; 8],
            f: LaneBuf::default(),
            rf: LaneBuf::default(),
            s: LaneBuf::default(),
            rest: LaneBuf::default(),
            rest_rows: LaneBuf::default(),
            rest_set: Vec::new(),
            rest_trees: [None; 8],
            rest_band: [None; 8],
            band_set: Vec::new(),
            s2: LaneBuf::default(),
            more: [0; 8],
            more_largest: [0; 8],
            claimed: [0; 8],
            runs: RunLabel::default(),
        }
    }
}

/// A spawn's flood result for one lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SpawnLane {
    /// The spawn is inside the grid and FLOOR.
    pub floor: bool,
    /// Cells of the spawn's component (0 if `!floor`).
    pub size: u32,
    /// The exit is inside the grid and in the spawn's component.
    pub exit_in: bool,
}

impl BatchPlanes {
    /// Start a new batch: `rows x cols` caves in the lanes of `simd`'s widest vector (as the
    /// generator's batch buffer holds them); forget what was measured before.
    pub fn begin(&mut self, simd: Simd, rows: usize, cols: usize) {
        debug_assert!(supported(cols));
        self.simd = simd;
        self.rows = rows;
        self.cols = cols;
        self.prepared = false;
        self.flooded = false;
        self.rested = false;
        self.dense = false;
    }

    /// [`BatchPlanes::begin`] for a batch whose caves all (or nearly all) need their spawn's component
    /// (a search's survivors gathered into one batch): then flooding every lane at once is the
    /// cheap way to get it, `min_width` included ([`BatchPlanes::width_planes`]).
    pub fn begin_dense(&mut self, simd: Simd, rows: usize, cols: usize) {
        self.begin(simd, rows, cols);
        self.dense = true;
    }

    /// Caves per batch (the lanes of the batch's clone).
    pub fn lanes(&self) -> usize {
        self.simd.lanes()
    }

    /// Whether this batch was begun with [`BatchPlanes::begin_dense`].
    pub fn dense(&self) -> bool {
        self.dense
    }

    /// Lane `k`'s FLOOR plane and its flooded component (the spawn's, when the spawn is FLOOR),
    /// as compact planes of `rows * wpr` words (no guards) in `f` and `c`, for `min_width`.
    /// Floods the lanes first if needed.
    #[allow(clippy::too_many_arguments)]
    pub fn width_planes(
        &mut self,
        walls: &mut LaneBuf,
        k: usize,
        spawn: (usize, usize),
        exit: Option<(usize, usize)>,
        conn: Connectivity,
        f: &mut Vec<u64>,
        c: &mut Vec<u64>,
    ) {
        self.spawn(walls, k, spawn, exit, conn);
        crate::simd_run!(self.simd, <I> (
            b: &'a mut BatchPlanes = self,
            k: usize = k,
            f: &'a mut Vec<u64> = f,
            c: &'a mut Vec<u64> = c,
        ) -> () {
            extract_in::<I>(b, k, f, c)
        });
    }

    /// Lanes `walls` holds (the generator's batch buffer, WALL = 1, bits outside 0).
    fn prepare(&mut self, walls: &mut LaneBuf) {
        if self.prepared {
            return;
        }
        let out = crate::simd_run!(self.simd, <I> (
            b: &'a mut BatchPlanes = &mut *self,
            walls: &'a mut LaneBuf = walls,
        ) -> ([u64; 8], [u64; 8]) {
            prepare_lanes::<I>(b, walls)
        });
        (self.boundary, self.floor) = out;
        self.prepared = true;
    }

    /// `boundary` of lane `k`.
    pub fn boundary(&mut self, walls: &mut LaneBuf, k: usize) -> u64 {
        self.prepare(walls);
        self.boundary[k]
    }

    /// The spawn's component in lane `k` (every lane is flooded on the first call of a batch).
    pub fn spawn(
        &mut self,
        walls: &mut LaneBuf,
        k: usize,
        spawn: (usize, usize),
        exit: Option<(usize, usize)>,
        conn: Connectivity,
    ) -> SpawnLane {
        self.prepare(walls);
        if !self.flooded {
            crate::simd_run!(self.simd, <I> (
                b: &'a mut BatchPlanes = &mut *self,
                spawn: (usize, usize) = spawn,
                exit: Option<(usize, usize)> = exit,
                conn: Connectivity = conn,
            ) -> () {
                flood_lanes::<I>(b, spawn, exit, conn)
            });
            self.flooded = true;
        }
        SpawnLane {
            floor: self.spawn_floor[k],
            size: if self.spawn_floor[k] { self.size[k] } else { 0 },
            exit_in: self.exit_in[k],
        }
    }

    /// Number of FLOOR components of lane `k` and the size of the largest.
    pub fn label(
        &mut self,
        walls: &mut LaneBuf,
        k: usize,
        spawn: (usize, usize),
        exit: Option<(usize, usize)>,
        conn: Connectivity,
    ) -> (u32, u32) {
        self.spawn(walls, k, spawn, exit, conn);
        let size = self.size[k];
        let mut count = (size > 0) as u32;
        let mut largest = size;
        if self.floor[k] > size as u64 {
            // Floor the lane flood did not reach (a few pockets): label it by its runs.
            if !self.rested {
                crate::simd_run!(self.simd, <I> (
                    b: &'a mut BatchPlanes = &mut *self,
                    conn: Connectivity = conn,
                ) -> () {
                    rest_lanes::<I>(b, conn)
                });
                self.rested = true;
            }
            let (c, l) = match self.rest_count(k, conn) {
                // Counted in the lanes already (the usual case): no call into the clone.
                Some(c) => (c, 0),
                // In the batch's clone: the labellers' popcounts and trailing zeros are
                // single instructions there, a dozen-instruction bit trick in the baseline
                // build (where this function is compiled).
                None => crate::simd_run!(self.simd, <I> (
                    b: &'a mut BatchPlanes = &mut *self,
                    k: usize = k,
                    conn: Connectivity = conn,
                ) -> (u32, u32) {
                    rest_label::<I>(b, k, conn)
                }),
            };
            count += c + self.more[k];
            largest = largest.max(l).max(self.more_largest[k]);
        }
        (count, largest)
    }
}

/// Lane `k`'s floor the flood left (`rest`, already computed): its number of components and,
/// where one of them may outgrow the flooded component, the size of the largest (else 0).
#[inline(always)]
fn rest_label<I: Isa>(b: &mut BatchPlanes, k: usize, conn: Connectivity) -> (u32, u32) {
    let lanes = <I::Lanes as Lane>::N;
    let (n, len) = shape(b.rows, b.cols);
    let counts_only = b.counts_only(k, conn);
    let rest = &*b.rest.vectors::<u64>(len * lanes);
    let sw = b.rows.div_ceil(64);
    let set = &b.rest_set[k * sw..(k + 1) * sw];
    let word = |y: usize, i: usize| rest[((y + 1) * n + i) * lanes + k];
    if counts_only {
        // No pocket can outgrow a flooded component: count them, sizes unneeded (the lanes
        // counted them already when their run graph is a forest).
        let c = match (b.rest_trees[k], b.rest_band[k]) {
            (Some(c), _) => c,
            (None, Some((euler, lo, hi))) => {
                // Components = runs - pairs + cycles, every cycle in rows lo..=hi: only those
                // rows are labelled.
                let band = &mut b.band_set;
                band.clear();
                band.resize(sw, 0);
                for (j, (w, &s)) in band.iter_mut().zip(set).enumerate() {
                    let (from, to) = (lo.max(64 * j), hi.min(64 * j + 63));
                    if from <= to {
                        let (from, to) = (from - 64 * j, to - 64 * j);
                        *w = s & (u64::MAX >> (63 - to)) & (u64::MAX << from);
                    }
                }
                euler + b.runs.count4_cycles(n, band, word).1
            }
            (None, None) => b.runs.count4(n, set, word),
        };
        (c, 0)
    } else {
        b.runs.label(n, conn, set, word)
    }
}

impl BatchPlanes {
    /// Lane `k`'s floor left after the floods needs only counting: 4-connected, and no
    /// larger than a flooded component.
    fn counts_only(&self, k: usize, conn: Connectivity) -> bool {
        let largest = self.size[k].max(self.more_largest[k]) as u64;
        conn == Connectivity::Four && self.floor[k] - self.claimed[k] <= largest
    }

    /// The components of lane `k`'s floor left after the floods, if the lanes counted them
    /// ([`rest_trees_in`]) and their sizes are not needed.
    fn rest_count(&self, k: usize, conn: Connectivity) -> Option<u32> {
        self.rest_trees[k].filter(|_| self.counts_only(k, conn))
    }
}

/// `(words per row, plane length in vectors)` of the lane planes.
fn shape(rows: usize, cols: usize) -> (usize, usize) {
    let wpr = cols.div_ceil(64);
    (wpr, (rows + 2) * wpr)
}

/// Compute `F`, `RF`, zero `S`; per lane boundary and floor cells.
#[inline(always)]
fn prepare_lanes<I: Isa>(b: &mut BatchPlanes, walls: &mut LaneBuf) -> ([u64; 8], [u64; 8]) {
    let (rows, cols) = (b.rows, b.cols);
    let mut w = walls.view::<I::Lanes>(rows, cols);
    let (mut f, mut rf) = (b.f.view(rows, cols), b.rf.view(rows, cols));
    let mut s = b.s.view(rows, cols);
    let (w, f, rf, s) = (w.raw_mut(), f.raw_mut(), rf.raw_mut(), s.raw_mut());
    let (bd, fl) = match cols.div_ceil(64) {
        1 => prepare_in::<I::Lanes, 1>(w, f, rf, s, rows, cols),
        2 => prepare_in::<I::Lanes, 2>(w, f, rf, s, rows, cols),
        3 => prepare_in::<I::Lanes, 3>(w, f, rf, s, rows, cols),
        4 => prepare_in::<I::Lanes, 4>(w, f, rf, s, rows, cols),
        _ => unreachable!("rows wider than {MAX_WORDS} words are measured per cave"),
    };
    let mut out = ([0; 8], [0; 8]);
    for k in 0..<I::Lanes as Lane>::N {
        out.0[k] = bd.get(k);
        out.1[k] = fl.get(k);
    }
    out
}

/// The planes of [`prepare_lanes`] (`F`, `RF`, a zeroed `S`) from the walls (laid out as
/// [`crate::kernel::batch::LaneGrid`]: a guard vector each side of a row), rows of `N` words.
/// Returns per lane the boundary (popcounts of `row ^ (row >> 1)`, masked to pairs inside the
/// grid, and of `row ^ row above`) and the FLOOR cells. About 13 vector operations and 2 stores
/// per word.
#[inline(always)]
fn prepare_in<V: Lane, const N: usize>(
    walls: &[V],
    f: &mut [V],
    rf: &mut [V],
    s: &mut [V],
    rows: usize,
    cols: usize,
) -> (V, V) {
    let len = (rows + 2) * N;
    let gs = N + 2;
    assert!(N == cols.div_ceil(64) && walls.len() >= (rows + 2) * gs);
    assert!(f.len() >= len && rf.len() >= len && s.len() >= len);
    let last = match cols % 64 {
        0 => !0u64,
        r => (1u64 << r) - 1,
    };
    s[..len].fill(V::ZERO);
    f[..N].fill(V::ZERO);
    f[len - N..len].fill(V::ZERO);
    let (mut bd, mut fl) = (V::ZERO, V::ZERO);
    let mut above = [V::ZERO; N];
    for y in 0..rows {
        let (o, p) = ((y + 1) * gs + 1, (y + 1) * N);
        let mut x = [V::ZERO; N];
        for i in 0..N {
            let mask = if i + 1 == N { last } else { !0 };
            x[i] = !walls[o + i] & V::splat(mask);
            rf[p + N - 1 - i] = x[i].reverse_bits();
            fl = fl.add(x[i].popcnt());
        }
        f[p..p + N].copy_from_slice(&x);
        for i in 0..N {
            // Pairs (x, x + 1) need x + 1 < cols; bits past the grid are zero in `x` anyway.
            let (next, valid) = if i + 1 < N {
                (x[i + 1], !0u64)
            } else {
                (V::ZERO, last >> 1)
            };
            let h = (x[i] ^ (x[i].shr(1) | next.shl(63))) & V::splat(valid);
            bd = bd.add(h.popcnt());
            if y > 0 {
                bd = bd.add((x[i] ^ above[i]).popcnt());
            }
        }
        above = x;
    }
    (bd, fl)
}

/// `f::<V, N, C>(args)` for rows of `N = $wpr` words (1 to 4) and connectivity `C`: the
/// kernels are compiled per row width and connectivity, so their loops unroll and their
/// neighbour masks are constants.
macro_rules! by_shape {
    ($wpr:expr, $conn:expr, $f:ident::<$V:ty>($($arg:expr),*)) => {
        match ($wpr, $conn) {
            (1, Connectivity::Four) => $f::<$V, 1, 4>($($arg),*),
            (2, Connectivity::Four) => $f::<$V, 2, 4>($($arg),*),
            (3, Connectivity::Four) => $f::<$V, 3, 4>($($arg),*),
            (4, Connectivity::Four) => $f::<$V, 4, 4>($($arg),*),
            (1, Connectivity::Eight) => $f::<$V, 1, 8>($($arg),*),
            (2, Connectivity::Eight) => $f::<$V, 2, 8>($($arg),*),
            (3, Connectivity::Eight) => $f::<$V, 3, 8>($($arg),*),
            (4, Connectivity::Eight) => $f::<$V, 4, 8>($($arg),*),
            (1, Connectivity::Six) => $f::<$V, 1, 6>($($arg),*),
            (2, Connectivity::Six) => $f::<$V, 2, 6>($($arg),*),
            (3, Connectivity::Six) => $f::<$V, 3, 6>($($arg),*),
            (4, Connectivity::Six) => $f::<$V, 4, 6>($($arg),*),
            _ => unreachable!("rows wider than {MAX_WORDS} words are measured per cave"),
        }
    };
}

/// The lane flood of the module docs.
#[inline(always)]
fn flood_lanes<I: Isa>(
    b: &mut BatchPlanes,
    spawn: (usize, usize),
    exit: Option<(usize, usize)>,
    conn: Connectivity,
) {
    by_shape!(
        b.cols.div_ceil(64),
        conn,
        flood_go::<I::Lanes>(b, spawn, exit)
    )
}

/// [`flood_lanes`] for rows of `N` words.
#[inline(always)]
fn flood_go<V: Lane, const N: usize, const C: u8>(
    b: &mut BatchPlanes,
    spawn: (usize, usize),
    exit: Option<(usize, usize)>,
) {
    let (rows, cols) = (b.rows, b.cols);
    let (_, len) = shape(rows, cols);
    let (mut fg, mut rfg) = (b.f.view::<V>(rows, cols), b.rf.view::<V>(rows, cols));
    let mut sg = b.s.view::<V>(rows, cols);
    let (f, rf, s) = (
        &fg.raw_mut()[..len],
        &rfg.raw_mut()[..len],
        &mut sg.raw_mut()[..len],
    );
    // Seeds: the spawn, or for a WALL spawn the first floor cell from the spawn's row on.
    let (sy, sx) = spawn;
    let inside = sy < rows && sx < cols;
    let mut seed_rows = [usize::MAX; 8];
    for (k, seed_row) in seed_rows.iter_mut().enumerate().take(V::N) {
        b.spawn_floor[k] = inside && (f[(sy + 1) * N + sx / 64].get(k) >> (sx % 64)) & 1 == 1;
        let from = if inside { sy } else { 0 };
        let mut cell = b.spawn_floor[k].then_some((sy, sx));
        for d in 0..rows {
            if cell.is_some() {
                break;
            }
            let y = (from + d) % rows;
            for i in 0..N {
                let w = f[(y + 1) * N + i].get(k);
                if w != 0 {
                    cell = Some((y, i * 64 + w.trailing_zeros() as usize));
                    break;
                }
            }
        }
        if let Some((y, x)) = cell {
            let o = (y + 1) * N + x / 64;
            let mut v = s[o];
            v.set(k, v.get(k) | 1u64 << (x % 64));
            s[o] = v;
            *seed_row = y;
        }
    }
    flood_rows::<V, N, C>(f, rf, s, &seed_rows);
    let mut size = V::ZERO;
    for &v in &s[N..len - N] {
        size = size.add(v.popcnt());
    }
    let ex = exit.filter(|&(y, x)| y < rows && x < cols);
    for k in 0..V::N {
        b.size[k] = size.get(k) as u32;
        b.exit_in[k] = b.spawn_floor[k]
            && ex.is_some_and(|(y, x)| (s[(y + 1) * N + x / 64].get(k) >> (x % 64)) & 1 == 1);
    }
}

/// Flood `s` (planes of rows of `N` words, as [`flood_go`]'s) from the seeds already set in
/// it, the rows holding them listed in `seed_rows` (`usize::MAX`: none).
#[inline(always)]
fn flood_rows<V: Lane, const N: usize, const C: u8>(
    f: &[V],
    rf: &[V],
    s: &mut [V],
    seed_rows: &[usize; 8],
) {
    let rows = f.len() / N - 2;
    let mut start = usize::MAX;
    for (k, &y) in seed_rows.iter().enumerate().take(V::N) {
        if y == usize::MAX || seed_rows[..k].contains(&y) {
            continue;
        }
        start = start.min(y);
        // Close the seed row under runs (every lane: other lanes' claims in it are whole
        // runs or seeds too).
        let p = (y + 1) * N;
        let got = runs::<V, N>(ld(f, p), ld(rf, p), ld(s, p));
        s[p..p + N].copy_from_slice(&got);
    }
    if start != usize::MAX {
        // Down from the first seed row, then up over every row; from then on sweep while
        // the last sweep left candidates behind it.
        sweep::<V, N, C, true>(f, rf, s, start, rows);
        let mut next = sweep::<V, N, C, false>(f, rf, s, rows - 1, rows);
        let mut down = true;
        while let Some(from) = next {
            next = if down {
                sweep::<V, N, C, true>(f, rf, s, from, rows)
            } else {
                sweep::<V, N, C, false>(f, rf, s, from, rows)
            };
            down = !down;
        }
    }
}

/// `N` vectors from `v[p..]` (plain loops, no closures: a closure may be compiled out of line,
/// without the clone's features, and every vector operation in it would become a call).
#[inline(always)]
fn ld<V: Lane, const N: usize>(v: &[V], p: usize) -> [V; N] {
    let mut a = [V::ZERO; N];
    a.copy_from_slice(&v[p..p + N]);
    a
}

/// Every floor run of a row (`f`, mirrored `rf`) holding a bit of `seed` (a subset of `f`),
/// whole: the upward fill of `f` from the seeds, OR the upward fill of the mirrored row from
/// the mirrored seeds, mirrored back. About 12 operations per word per direction.
#[inline(always)]
fn runs<V: Lane, const N: usize>(f: [V; N], rf: [V; N], seed: [V; N]) -> [V; N] {
    let up = flood::fill_up::<V, N>(f, seed);
    let mut rseed = [V::ZERO; N];
    for i in 0..N {
        rseed[i] = seed[N - 1 - i].reverse_bits();
    }
    let rup = flood::fill_up::<V, N>(rf, rseed);
    let mut out = up;
    for i in 0..N {
        out[i] |= rup[N - 1 - i].reverse_bits();
    }
    out
}

/// One sweep over rows `from..rows` downward (`DOWN`), or `0..=from` upward. Returns the row
/// the next sweep (the other way) starts from, or `None` when no row that this sweep had passed
/// got new candidates (the flood is done): the last such row the sweep flagged (`y - 1` for a
/// change of row `y` downward, `y + 1` upward); the rows past it in the sweep's direction stayed
/// closed, so the sweep back need not visit them.
#[inline(always)]
fn sweep<V: Lane, const N: usize, const C: u8, const DOWN: bool>(
    f: &[V],
    rf: &[V],
    s: &mut [V],
    from: usize,
    rows: usize,
) -> Option<usize> {
    assert!(f.len() == (rows + 2) * N && rf.len() == f.len() && s.len() == f.len());
    assert!(from < rows);
    let mut next = None;
    if DOWN {
        for y in from..rows {
            if row_step::<V, N, C, DOWN>(f, rf, s, y).any() {
                next = Some(y - 1);
            }
        }
    } else {
        for y in (0..=from).rev() {
            if row_step::<V, N, C, DOWN>(f, rf, s, y).any() {
                next = Some(y + 1);
            }
        }
    }
    next
}

/// The row step of the module docs on row `y` (planes of `(rows + 2) * N` vectors, `y <
/// rows`). Returns the new candidates of the row swept just before (`y - 1` downward, `y + 1`
/// upward).
#[inline(always)]
fn row_step<V: Lane, const N: usize, const C: u8, const DOWN: bool>(
    f: &[V],
    rf: &[V],
    s: &mut [V],
    y: usize,
) -> V {
    let p = (y + 1) * N;
    // Rows y - 1 ..= y + 1 of the planes (guard rows included).
    let (fw, cur) = (ld::<V, N>(f, p), ld::<V, N>(s, p));
    let (above, below) = (ld::<V, N>(s, p - N), ld::<V, N>(s, p + N));
    let (a, b) = (
        flood::touch_above::<V, N, C>(above),
        flood::touch_below::<V, N, C>(below),
    );
    let mut near = [V::ZERO; N];
    for i in 0..N {
        near[i] = a[i] | b[i];
    }
    let mut seed = cur;
    let mut any = V::ZERO;
    for i in 0..N {
        let c = near[i] & fw[i] & !cur[i];
        any |= c;
        seed[i] |= c;
    }
    if !any.any() {
        return V::ZERO;
    }
    let got = runs::<V, N>(fw, ld::<V, N>(rf, p), seed);
    s[p..p + N].copy_from_slice(&got);
    // The row swept just before this one sees the new cells.
    let q = if DOWN { p - N } else { p + N };
    let mut new = [V::ZERO; N];
    for i in 0..N {
        new[i] = got[i] & !cur[i];
    }
    // Downward the row above sees the new cells from below; upward the row below from above.
    let new = if DOWN {
        flood::touch_below::<V, N, C>(new)
    } else {
        flood::touch_above::<V, N, C>(new)
    };
    let (fq, sq) = (ld::<V, N>(f, q), ld::<V, N>(s, q));
    let mut gain = V::ZERO;
    for i in 0..N {
        gain |= new[i] & fq[i] & !sq[i];
    }
    gain
}

/// `rest = F & !S` (the floor the flood left) and per row the OR of its words, every lane.
#[inline(always)]
fn rest_lanes<I: Isa>(b: &mut BatchPlanes, conn: Connectivity) {
    let (rows, cols) = (b.rows, b.cols);
    let (n, len) = shape(rows, cols);
    let more = more_floods::<I>(b, conn);
    let (mut fg, mut sg) = (
        b.f.view::<I::Lanes>(rows, cols),
        b.s.view::<I::Lanes>(rows, cols),
    );
    let (f, s) = (&fg.raw_mut()[..len], &sg.raw_mut()[..len]);
    let s2 = &*b.s2.vectors::<I::Lanes>(if more { len } else { 0 });
    let rest = b.rest.vectors::<I::Lanes>(len);
    let rest_rows = b.rest_rows.vectors::<I::Lanes>(rows);
    for (y, row_or) in rest_rows.iter_mut().enumerate() {
        let p = (y + 1) * n;
        let mut any = <I::Lanes as Lane>::ZERO;
        for i in p..p + n {
            let mut r = f[i] & !s[i];
            if more {
                r &= !s2[i];
            }
            rest[i] = r;
            any |= r;
        }
        *row_or = any;
    }
    b.rest_trees = [None; 8];
    b.rest_band = [None; 8];
    if conn == Connectivity::Four {
        let t = match n {
            1 => rest_trees_in::<I::Lanes, 1>(rest, rest_rows),
            2 => rest_trees_in::<I::Lanes, 2>(rest, rest_rows),
            3 => rest_trees_in::<I::Lanes, 3>(rest, rest_rows),
            4 => rest_trees_in::<I::Lanes, 4>(rest, rest_rows),
            _ => unreachable!("rows wider than {MAX_WORDS} words are measured per cave"),
        };
        for k in 0..<I::Lanes as Lane>::N {
            let euler = (t.runs.get(k) - t.pairs.get(k)) as u32;
            if t.cycles.get(k) == 0 {
                b.rest_trees[k] = Some(euler);
            } else {
                // A cycle spans three rows or more: its split's row is at least 1.
                let (lo, hi) = (t.band.0.get(k) as usize - 1, t.band.1.get(k) as usize);
                b.rest_band[k] = Some((euler, lo, hi));
            }
        }
    }
    // The row bitsets, lane by lane, without a branch per row.
    let lanes = <I::Lanes as Lane>::N;
    let sw = rows.div_ceil(64);
    b.rest_set.clear();
    b.rest_set.resize(lanes * sw, 0);
    let ors = words(rest_rows);
    for y in 0..rows {
        for k in 0..lanes {
            b.rest_set[k * sw + y / 64] |= ((ors[y * lanes + k] != 0) as u64) << (y % 64);
        }
    }
}

/// Most rounds of [`more_floods`] (each a lane flood over the whole plane); lanes still short
/// of certainty after them are labelled by [`RunLabel::label`], which is exact in any case.
const MORE_ROUNDS: usize = 3;

/// Flood, in the plane `s2`, further components of the lanes whose floor the spawn's flood left
/// may hold a larger component than it (more floor left than it claimed), one component per
/// such lane per round, until in every lane no unflooded floor can outgrow a flooded
/// component (or [`MORE_ROUNDS`]). Sets `claimed`, `more` and `more_largest`; returns whether
/// `s2` was used.
///
/// Why: there the largest component needs every component's size, and [`RunLabel::label`]
/// on the floor left (the big component included) took ~30,000 cycles a cave (~1.5% of
/// classic-4-5 caves: a WALL spawn whose flood began in a pocket, or a spawn in a pocket),
/// a fifth of that preset's measure stage; a lane flood round costs a few thousand for the
/// whole batch. Each round seeds a lane at the first cell of its longest unclaimed floor run in
/// the row holding the most unclaimed floor, which is almost always the big component.
#[inline(always)]
fn more_floods<I: Isa>(b: &mut BatchPlanes, conn: Connectivity) -> bool {
    by_shape!(b.cols.div_ceil(64), conn, more_go::<I::Lanes>(b))
}

/// [`more_floods`] for rows of `N` words.
#[inline(always)]
fn more_go<V: Lane, const N: usize, const C: u8>(b: &mut BatchPlanes) -> bool {
    let (rows, cols) = (b.rows, b.cols);
    let (_, len) = shape(rows, cols);
    for k in 0..V::N {
        b.claimed[k] = b.size[k] as u64;
    }
    b.more = [0; 8];
    b.more_largest = [0; 8];
    let mut used = false;
    for _ in 0..MORE_ROUNDS {
        let mut seeds = [usize::MAX; 8];
        let mut any = false;
        for (k, seed) in seeds.iter_mut().enumerate().take(V::N) {
            let largest = b.size[k].max(b.more_largest[k]) as u64;
            if b.floor[k] - b.claimed[k] > largest {
                *seed = 0;
                any = true;
            }
        }
        if !any {
            break;
        }
        let (mut fg, mut rfg) = (b.f.view::<V>(rows, cols), b.rf.view::<V>(rows, cols));
        let mut sg = b.s.view::<V>(rows, cols);
        let (f, rf, s) = (
            &fg.raw_mut()[..len],
            &rfg.raw_mut()[..len],
            &sg.raw_mut()[..len],
        );
        let s2 = b.s2.vectors::<V>(len);
        if !used {
            s2.fill(V::ZERO);
            used = true;
        }
        for (k, seed) in seeds.iter_mut().enumerate().take(V::N) {
            if *seed == usize::MAX {
                continue;
            }
            let (y, i, bit) = seed_cell::<V, N>(f, s, s2, k);
            let mut v = s2[(y + 1) * N + i];
            v.set(k, v.get(k) | bit);
            s2[(y + 1) * N + i] = v;
            *seed = y;
        }
        flood_rows::<V, N, C>(f, rf, s2, &seeds);
        let mut total = V::ZERO;
        for &v in &s2[N..len - N] {
            total = total.add(v.popcnt());
        }
        for (k, &seed) in seeds.iter().enumerate().take(V::N) {
            if seed == usize::MAX {
                continue;
            }
            let got = b.size[k] as u64 + total.get(k) - b.claimed[k];
            b.claimed[k] += got;
            b.more[k] += 1;
            b.more_largest[k] = b.more_largest[k].max(got as u32);
        }
    }
    used
}

/// A cell of lane `k`'s unclaimed floor (`F & !S & !S2`, which must be non-empty) likely in
/// its largest component: the first cell of the longest run (within a word) of the row
/// holding the most. `(row, word, bit)`.
#[inline(always)]
fn seed_cell<V: Lane, const N: usize>(f: &[V], s: &[V], s2: &[V], k: usize) -> (usize, usize, u64) {
    let (fw, sw, s2w) = (words(f), words(s), words(s2));
    let rows = f.len() / N - 2;
    let free = |y: usize, i: usize| {
        let j = ((y + 1) * N + i) * V::N + k;
        fw[j] & !sw[j] & !s2w[j]
    };
    let (mut best_row, mut best) = (usize::MAX, 0);
    for y in 0..rows {
        let mut c = 0;
        for i in 0..N {
            c += free(y, i).count_ones();
        }
        if c > best {
            (best_row, best) = (y, c);
        }
    }
    assert!(best_row != usize::MAX, "seed_cell needs unclaimed floor");
    let y = best_row;
    let (mut at, mut longest) = ((0, 0), 0);
    for i in 0..N {
        let mut w = free(y, i);
        while w != 0 {
            let lo = w.trailing_zeros();
            let len = (!(w >> lo)).trailing_zeros();
            if len > longest {
                (at, longest) = ((i, lo), len);
            }
            w &= !(((1u128 << (lo + len)) - 1) as u64);
        }
    }
    (y, at.0, 1u64 << at.1)
}

/// Per lane, for the 4-connected components of the floor the flood left (`rest`, rows of `N`
/// words with a zero guard row each side; `rest_rows` the OR of each row's words): its runs,
/// the touching pairs of runs in adjacent rows, and whether its run graph may hold a cycle
/// (non-zero: it may; zero: it is a forest).
///
/// Why: components = runs - touching pairs + independent cycles of the run graph, and a cycle
/// needs a *merge* (its lowest run touches two runs of the cycle in the row above: runs of one
/// row never touch) and a *split* (its highest run touches two in the row below). So where a
/// lane has no merge or no split its pockets are counted here, in the lanes, with no per-cave
/// loop at all: about 35 vector operations per word, no branch but one per row (a row without
/// rest floor in any lane is skipped). The other lanes are labelled by [`RunLabel::count4`].
/// (Testing splits as well as merges halved those calls on classic-4-5, from ~28% of caves:
/// 0.987x the whole process, alternated.)
///
/// The split must also come first: a cycle's highest run is in a row above its lowest, and a
/// cycle spans at least three rows (in two rows, runs `A` left of `A'` above and `B` left of
/// `C` below cannot pair crosswise, `A`-`C` and `A'`-`B`, as a cycle would need), so its split
/// (counted at the row below the splitting run) is counted at a row before its merge (counted
/// at the merging run's row). A lane is a forest unless some row counts a merge after a row that
/// counted a split: `late`, per lane, ORs `[merges of the row > 0] & [splits before it > 0]`,
/// each `[c > 0]` the top bit of `!(c - 1)` (counts are far below 2^63), about 10 operations per
/// row. On classic-4-5 caves (seeds 0..160000) this cut the lanes sent to `count4` from 31,437
/// to 16,948, of which 9,420 hold a cycle.
///
/// - runs: the starts `r & !(r << 1)` (carries across words);
/// - touching pairs: 4-connected runs touch iff their columns overlap; one pair overlaps in
///   one interval, and two pairs' intervals are separated by the wall between two runs of a
///   row, so the pairs are the runs of `r & above`;
/// - runs touching anything above: those holding a bit of `r & above`, i.e. whose last cell
///   (an *end*, `r & !(r >> 1)`) is in the upward fill of `r` from `r & above`;
///   merges = pairs - those. Splits the same way, the rows' roles swapped.
#[inline(always)]
fn rest_trees_in<V: Lane, const N: usize>(rest: &[V], rest_rows: &[V]) -> Trees<V> {
    let rows = rest_rows.len();
    assert!(rest.len() >= (rows + 2) * N);
    let (mut runs, mut pairs, mut reach_up) = (V::ZERO, V::ZERO, V::ZERO);
    let (mut reach_down, mut late) = (V::ZERO, V::ZERO);
    let (mut first_split, mut last_merge) = (V::ZERO, V::ZERO);
    let mut above = [V::ZERO; N];
    for (y, &any) in rest_rows.iter().enumerate() {
        if !any.any() {
            // No runs here, and none for the next row to touch.
            above = [V::ZERO; N];
            continue;
        }
        let r = ld::<V, N>(rest, (y + 1) * N);
        let mut over = [V::ZERO; N];
        for i in 0..N {
            over[i] = r[i] & above[i];
        }
        let fill = flood::fill_up::<V, N>(r, over);
        let afill = flood::fill_up::<V, N>(above, over);
        // Splits counted before this row: `pairs - reach_down` so far.
        let (pairs0, up0, down0) = (pairs, reach_up, reach_down);
        for i in 0..N {
            let (below, next) = (
                if i > 0 { r[i - 1].shr(63) } else { V::ZERO },
                if i + 1 < N { r[i + 1].shl(63) } else { V::ZERO },
            );
            let starts = r[i] & !(r[i].shl(1) | below);
            let ends = r[i] & !(r[i].shr(1) | next);
            let obelow = if i > 0 { over[i - 1].shr(63) } else { V::ZERO };
            let ostarts = over[i] & !(over[i].shl(1) | obelow);
            runs = runs.add(starts.popcnt());
            pairs = pairs.add(ostarts.popcnt());
            reach_up = reach_up.add((ends & fill[i]).popcnt());
            let anext = if i + 1 < N {
                above[i + 1].shl(63)
            } else {
                V::ZERO
            };
            let aends = above[i] & !(above[i].shr(1) | anext);
            reach_down = reach_down.add((aends & afill[i]).popcnt());
        }
        above = r;
        // Wrapping, `a + !b = a - b - 1` and `!(a + !b) = b - a`. This row's merges are
        // `m = dp - du` (`dp = pairs - pairs0`, `du = reach_up - up0`), and
        // `(pairs + !pairs0) + !(reach_up + !up0) = (dp - 1) - du = m - 1`, whose complement
        // has its top bit set exactly when `m > 0`; the splits before it likewise.
        let merges_here = !pairs.add(!pairs0).add(!reach_up.add(!up0));
        let splits_before = !pairs0.add(!down0);
        let splits_here = !pairs.add(!pairs0).add(!reach_down.add(!down0));
        let late_here = (merges_here & splits_before).shr(63);
        late |= late_here;
        // The band of rows holding every cycle (see above): from the row above the first
        // split to the last merge after it. `0 - b` turns a bit `b` into a mask.
        let y_v = V::splat(y as u64);
        let lm = (!late_here).add(V::splat(1));
        last_merge = (last_merge & !lm) | (y_v & lm);
        let fs = (!(splits_here & !splits_before).shr(63)).add(V::splat(1));
        first_split |= y_v & fs;
    }
    // `reach_up, reach_down <= pairs` per lane (a run reaching the other row holds an overlap).
    let mut cycles = V::ZERO;
    for k in 0..V::N {
        let (merges, splits) = (
            pairs.get(k) - reach_up.get(k),
            pairs.get(k) - reach_down.get(k),
        );
        cycles.set(
            k,
            if late.get(k) == 0 {
                0
            } else {
                merges.min(splits)
            },
        );
    }
    Trees {
        runs,
        pairs,
        cycles,
        band: (first_split, last_merge),
    }
}

/// What [`rest_trees_in`] found, per lane.
struct Trees<V: Lane> {
    /// Runs of the floor, and touching pairs of runs in adjacent rows.
    runs: V,
    pairs: V,
    /// Non-zero where the run graph may hold a cycle (zero: it is a forest).
    cycles: V,
    /// Where it may: the row counting the first split (its splitting run is in the row above)
    /// and the row counting the last merge after it. Every cycle lies in rows `.0 - 1 ..= .1`.
    band: (V, V),
}

/// The words of the vectors `v`: vector `i`'s lane `k` is word `i * N + k`.
fn words<V: Lane>(v: &[V]) -> &[u64] {
    // SAFETY: `Lane` implementors are plain `[u64; N]` layouts (what `LaneBuf::view` relies
    // on too), so `v` is `v.len() * N` initialised words, aligned for `u64`.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u64, v.len() * V::N) }
}

/// Copy lane `k`'s `F` and `S` planes out as compact per-cave planes (see
/// [`BatchPlanes::width_planes`]).
#[inline(always)]
fn extract_in<I: Isa>(b: &mut BatchPlanes, k: usize, f: &mut Vec<u64>, c: &mut Vec<u64>) {
    let (rows, cols) = (b.rows, b.cols);
    let (wpr, len) = shape(rows, cols);
    let (mut fg, mut sg) = (
        b.f.view::<I::Lanes>(rows, cols),
        b.s.view::<I::Lanes>(rows, cols),
    );
    // Rows 1..=rows of the lane planes (row 0 and row rows + 1 are the zero guards).
    let (fl, sl) = (&fg.raw_mut()[wpr..len - wpr], &sg.raw_mut()[wpr..len - wpr]);
    f.clear();
    c.clear();
    let n = <I::Lanes as Lane>::N;
    assert!(k < n);
    // Plain loads: `Lane::get` on a vector may be compiled out of line.
    let (fw, sw) = (words(fl), words(sl));
    for i in 0..fl.len() {
        f.push(fw[i * n + k]);
        c.push(sw[i * n + k]);
    }
}

#[cfg(test)]
mod unit {
    use super::rest_trees_in;
    use crate::measure::Connectivity;
    use crate::measure::runs::RunLabel;
    use crate::oracle::{ByteGrid, metrics::components};
    use rand_core::Rng;

    /// `rest_trees_in` on one lane (`u64` vectors) of the floor in `cells` (row-major, true =
    /// floor), rows of `N` words: `(runs - pairs, whether it may hold a cycle)`, and the
    /// oracle's 4-connected component count. Where it may, `runs - pairs` plus the cycles
    /// that `count4_cycles` finds in the band's rows alone must be that count.
    fn trees<const N: usize>(rows: usize, cols: usize, cells: &[bool]) -> (u64, bool, usize) {
        let mut rest = vec![0u64; (rows + 2) * N];
        let mut rest_rows = vec![0u64; rows];
        for y in 0..rows {
            for x in 0..cols {
                if cells[y * cols + x] {
                    rest[(y + 1) * N + x / 64] |= 1 << (x % 64);
                    rest_rows[y] |= 1 << (x % 64);
                }
            }
        }
        let t = rest_trees_in::<u64, N>(&rest, &rest_rows);
        let g = ByteGrid {
            rows,
            cols,
            cells: cells.iter().map(|&f| u8::from(!f)).collect(),
        };
        let (_, sizes) = components(&g, Connectivity::Four);
        let euler = t.runs - t.pairs;
        if t.cycles != 0 {
            let (lo, hi) = (t.band.0 as usize - 1, t.band.1 as usize);
            assert!(lo < hi && hi < rows, "band {lo}..={hi} of {rows} rows");
            let mut band = vec![0u64; rows.div_ceil(64)];
            for y in lo..=hi {
                band[y / 64] |= 1 << (y % 64);
            }
            let word = |y: usize, i: usize| rest[(y + 1) * N + i];
            let cycles = RunLabel::default().count4_cycles(N, &band, word).1;
            assert_eq!(
                euler + cycles as u64,
                sizes.len() as u64,
                "band {lo}..={hi}"
            );
        }
        (euler, t.cycles != 0, sizes.len())
    }

    fn parse(rows: &[&str]) -> (usize, usize, Vec<bool>) {
        let cells = rows
            .iter()
            .flat_map(|r| r.bytes().map(|b| b == b'.'))
            .collect();
        (rows.len(), rows[0].len(), cells)
    }

    /// Whenever the lanes call the floor a forest, `runs - pairs` is its component count, and
    /// otherwise that plus the cycles in the band's rows is (checked in `trees`): on random
    /// floors of every density, 1 to 4 words a row, runs across word boundaries.
    #[test]
    fn a_forest_verdict_counts_exactly() {
        let mut rng = crate::rng::cave_rng(38);
        let mut next = || rng.next_u64();
        let (mut forests, mut cyclic) = (0, 0);
        for case in 0..3000 {
            // Mostly short planes (every verdict often), some over 64 rows (bands across words).
            let rows = 1 + (next() % if case % 8 == 0 { 150 } else { 12 }) as usize;
            let words = 1 + (case % 4);
            let cols = 64 * (words - 1) + 1 + (next() % 64) as usize;
            let density = next() % 100;
            let cells: Vec<bool> = (0..rows * cols).map(|_| next() % 100 < density).collect();
            let (euler, maybe_cycle, want) = match words {
                1 => trees::<1>(rows, cols, &cells),
                2 => trees::<2>(rows, cols, &cells),
                3 => trees::<3>(rows, cols, &cells),
                _ => trees::<4>(rows, cols, &cells),
            };
            if maybe_cycle {
                cyclic += 1;
            } else {
                forests += 1;
                assert_eq!(euler, want as u64, "case {case}: {rows}x{cols}");
            }
        }
        // Both verdicts are reached.
        assert!(forests > 500 && cyclic > 500, "{forests} {cyclic}");
    }

    /// A pocket merging (a U) above a pocket splitting (an n) holds no cycle, and the lanes
    /// say so (the merge comes before the split); the n above the U, or a ring, may hold one.
    #[test]
    fn a_merge_before_any_split_is_a_forest() {
        let u_then_n = [
            "#.#.#####",
            "#...#####",
            "#########",
            "######...",
            "######.#.",
        ];
        let n_then_u = [
            "######...",
            "######.#.",
            "#########",
            "#.#.#####",
            "#...#####",
        ];
        let ring = ["#####", "#...#", "#.#.#", "#...#", "#####"];
        for (rows, forest, comps) in [
            (&u_then_n[..], true, 2),
            (&n_then_u[..], false, 2),
            (&ring[..], false, 1),
        ] {
            let (r, c, cells) = parse(rows);
            let (euler, maybe_cycle, want) = trees::<1>(r, c, &cells);
            assert_eq!(want, comps, "{rows:?}");
            assert_eq!(!maybe_cycle, forest, "{rows:?}");
            if forest {
                assert_eq!(euler, want as u64);
            }
        }
    }
}
