//! Survivors of a search's cheap clauses, gathered into full lane batches before they are
//! measured further.
//!
//! A search whose first clause is a fraction (a popcount, free from generation) lets a few
//! caves in a batch through, say one in twenty. Measured where generation left them, each
//! survivor's batch would flood all its lanes for one cave (or flood the cave alone, at several
//! times a lane's cost). Gathered `L` at a time into a batch of their own, the survivors share
//! one lane flood, and `min_width` reads the spawn's component from it
//! ([`Measurer::begin_dense_batch`]). A survivor costs a copy of its grid into the lanes.
//!
//! The values are exactly those of any other way of measuring (the lane measurement is checked
//! against the oracle on every SIMD path in `measure`); only when a cave's clauses are decided
//! changes, so the search sorts each chunk's matches by seed.

use cavesweep_core::grid::Grid;
use cavesweep_core::kernel::batch::LaneBuf;
use cavesweep_core::measure::{Lazy, MeasureConfig, Measurer};
use cavesweep_core::simd::{Isa, Lane, Simd};

/// Caves waiting for a batch, and the measurer and lanes that take them.
pub(crate) struct Gather {
    simd: Simd,
    rows: usize,
    cols: usize,
    measurer: Measurer,
    lanes: LaneBuf,
    /// The caves waiting (the first `n` entries; grids reused).
    seeds: Vec<u64>,
    grids: Vec<Grid>,
    n: usize,
}

impl Gather {
    /// Gathering for `rows x cols` caves on `simd`; `None` when caves that wide are not
    /// measured in lanes.
    pub fn new(simd: Simd, rows: usize, cols: usize) -> Option<Gather> {
        if !Measurer::batch_supported(cols) {
            return None;
        }
        let l = simd.lanes();
        Some(Gather {
            simd,
            rows,
            cols,
            measurer: Measurer::with_simd(simd),
            lanes: LaneBuf::default(),
            seeds: vec![0; l],
            grids: Vec::with_capacity(l),
            n: 0,
        })
    }

    /// Queue the cave of `seed`; true when the batch is full ([`Gather::flush`] it).
    pub fn push(&mut self, seed: u64, grid: &Grid) -> bool {
        debug_assert!((grid.rows(), grid.cols()) == (self.rows, self.cols));
        if self.n < self.grids.len() {
            self.grids[self.n].clone_from(grid);
        } else {
            self.grids.push(grid.clone());
        }
        self.seeds[self.n] = seed;
        self.n += 1;
        self.n == self.seeds.len()
    }

    /// Measure the queued caves in one lane batch, handing each (seed order) to `visit` as a
    /// lazy view; empties the queue.
    pub fn flush(&mut self, cfg: &MeasureConfig, mut visit: impl FnMut(u64, &Grid, &mut Lazy)) {
        if self.n == 0 {
            return;
        }
        let n = self.n;
        self.n = 0;
        cavesweep_core::simd_run!(self.simd, <I> (
            lanes: &'a mut LaneBuf = &mut self.lanes,
            grids: &'a [Grid] = &self.grids[..n],
        ) -> () {
            load::<I>(lanes, grids)
        });
        self.measurer
            .begin_dense_batch(self.simd, self.rows, self.cols);
        for k in 0..n {
            let g = &self.grids[k];
            let mut view = self
                .measurer
                .lazy_in(g, cfg, &mut self.lanes, k)
                .with_walls(g.count_walls());
            visit(self.seeds[k], g, &mut view);
        }
    }
}

/// Put grids (at least one, all of one size) into the first lanes (the other lanes keep
/// earlier caves: each lane is measured on its own).
#[inline(always)]
fn load<I: Isa>(lanes: &mut LaneBuf, grids: &[Grid]) {
    let n = <I::Lanes as Lane>::N;
    let (rows, cols) = (grids[0].rows(), grids[0].cols());
    let (wpr, stride) = (cols.div_ceil(64), cols.div_ceil(64) + 2);
    let mut v = lanes.view::<I::Lanes>(rows, cols);
    let raw = v.raw_mut();
    assert!(grids.len() <= n && raw.len() == (rows + 2) * stride);
    // Word by word into lane k: `LaneGrid::grid_to_lane` sets whole vectors through
    // `Lane::set`, compiled out of line (~2 us per 90x140 cave); plain stores are a copy.
    // SAFETY: `Lane` implementors are plain `[u64; N]` layouts (every bit pattern valid;
    // what `LaneBuf::view` relies on too), so the vectors are `len * N` words.
    let words =
        unsafe { std::slice::from_raw_parts_mut(raw.as_mut_ptr() as *mut u64, raw.len() * n) };
    for (k, g) in grids.iter().enumerate() {
        debug_assert!((g.rows(), g.cols()) == (rows, cols));
        for y in 0..rows {
            // The layout of `LaneGrid`: a guard row above, a guard vector left of each row.
            let o = (y + 1) * stride + 1;
            for (w, &src) in g.row(y)[..wpr].iter().enumerate() {
                words[(o + w) * n + k] = src;
            }
        }
    }
}
