//! Counting the components of a *sparse* floor plane, and the largest, by union-find over the
//! floor runs of its non-empty rows: what [`super::lanes`] uses for the floor its lane flood
//! left (the pockets beside a cave's big component).
//!
//! Why not the flood of [`super::components`], which labels everything else: that flood costs
//! a fixed setup per plane (zeroed planes, a pending-row set, a row-major scan of every word)
//! and a call per component, about 0.2 us per pocket. A classic-4-5 cave leaves ~5 pockets of
//! ~30 cells in a few rows each, so that setup was two thirds of its whole measure stage. Here
//! the work is proportional to the runs: rows without floor are skipped by one test, a run costs
//! a few bit operations to find and one union per run it touches in the row above, and nothing
//! allocates once the vectors have grown. (A union-find over *all* runs of a cave, the giant
//! component included, was measured at 3.8-4.5 us: it is the sparse plane that makes it cheap.)

use super::Connectivity;

/// A floor run `lo..=hi` (columns) of one row and its union-find node.
#[derive(Debug, Clone, Copy)]
struct Run {
    lo: u32,
    hi: u32,
    id: u32,
}

/// Scratch of [`RunLabel::label`], reused from plane to plane (no allocation once grown).
#[derive(Debug, Clone)]
pub(crate) struct RunLabel {
    prev: Vec<Run>,
    cur: Vec<Run>,
    parent: Vec<u32>,
    size: Vec<u32>,
    lo_at: [u32; 64],
    /// [`RunLabel::count4`]'s row above and current row, for rows wider than 4 words.
    prev4: Vec<Chunk>,
    cur4: Vec<Chunk>,
}

/// Four words of a row in [`RunLabel::count4`]: the words, their run starts, and per word the
/// node of the row's first run minus the runs starting before that word.
#[derive(Debug, Clone, Copy, Default)]
struct Chunk {
    r: [u64; 4],
    st: [u64; 4],
    pc: [u32; 4],
}

impl Default for RunLabel {
    fn default() -> RunLabel {
        RunLabel {
            prev: Vec::new(),
            cur: Vec::new(),
            parent: Vec::new(),
            size: Vec::new(),
            lo_at: [0; 64],
            prev4: Vec::new(),
            cur4: Vec::new(),
        }
    }
}

impl RunLabel {
    /// The number of `conn`-connected components of set bits of a plane of `rows` rows of `n`
    /// words, and the size of the largest (`(0, 0)` for an empty plane). `rows_set` is a
    /// bitset of the rows that may hold bits (bit `y % 64` of word `y / 64`; rows outside it
    /// are not read); `word(y, i)` is word `i` of row `y` (bit `b` = column `64 i + b`).
    #[inline(always)]
    pub fn label(
        &mut self,
        n: usize,
        conn: Connectivity,
        rows_set: &[u64],
        word: impl Fn(usize, usize) -> u64,
    ) -> (u32, u32) {
        // Run `a` of the row above touches run `b` iff `a.lo <= b.hi + dl && b.lo <= a.hi + dr`:
        // 4-connected the columns overlap; 8-connected they may also meet at a corner; hex
        // (N, S, W, E, NW, SE) a cell above touches its own column and the one to its right.
        let (dl, dr) = match conn {
            Connectivity::Four => (0, 0),
            Connectivity::Eight => (1, 1),
            Connectivity::Six => (0, 1),
        };
        self.parent.clear();
        self.size.clear();
        self.prev.clear();
        let mut count = 0u32;
        let mut last = usize::MAX;
        for (j, &bits) in rows_set.iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                let y = 64 * j + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                self.cur.clear();
                self.runs_of(n, |i| word(y, i));
                if self.cur.is_empty() {
                    continue;
                }
                count += self.cur.len() as u32;
                if last.wrapping_add(1) == y {
                    count -= self.join(dl, dr);
                }
                std::mem::swap(&mut self.prev, &mut self.cur);
                last = y;
            }
        }
        let mut largest = 0;
        for (i, &p) in self.parent.iter().enumerate() {
            if p as usize == i {
                largest = largest.max(self.size[i]);
            }
        }
        (count, largest)
    }

    /// The number of 4-connected components of set bits of a plane of `rows` rows of `n`
    /// words (arguments as [`RunLabel::label`]'s), without their sizes: what a caller needs
    /// when it knows the largest component is elsewhere (the flood's, when the floor it left is
    /// no larger than what it claimed).
    ///
    /// Why a second labeller: [`RunLabel::label`] finds runs and touching pairs by loops whose
    /// trip counts and branches depend on the data (a start loop, an end loop, a merge-walk
    /// over two run lists), and on classic-4-5 pockets (~22 rows, ~30 runs per cave) it spent
    /// ~100 cycles per row, mostly in mispredicted branches. Here everything but the unions is
    /// straight-line word arithmetic on chunks of 4 words:
    ///
    /// - the runs of a row are its *starts* (`r & !(r << 1)`, the carry taken across words),
    ///   numbered in column order from a running base: run `j` of the row is node `base + j`;
    /// - two runs of adjacent rows touch (4-connected) iff their columns overlap, a touching
    ///   pair overlaps in one interval, and two pairs in two intervals with a cell of wall
    ///   between them (the runs of a row are separated by wall). So the touching pairs are
    ///   exactly the runs of `above & below`, one union per overlap run;
    /// - the run of a row holding column `x` is the number of the row's starts at or before
    ///   `x`, minus one: a prefix popcount (per-word prefix sums, then one masked popcount).
    ///
    /// Components = runs - unions that merged two sets.
    #[inline(always)]
    pub fn count4(
        &mut self,
        n: usize,
        rows_set: &[u64],
        word: impl Fn(usize, usize) -> u64,
    ) -> u32 {
        self.count4_cycles(n, rows_set, word).0
    }

    /// [`RunLabel::count4`], and the number of independent cycles of the run graph (touching
    /// pairs whose union found the two runs already joined): `(components, cycles)`.
    ///
    /// Why the cycles: a caller that knows `runs - pairs` of a larger plane, and that every
    /// cycle of its run graph lies in the rows given here, gets that plane's components as
    /// `runs - pairs + cycles` (a graph's independent cycles are those of any induced
    /// subgraph holding all its cycles).
    #[inline(always)]
    pub fn count4_cycles(
        &mut self,
        n: usize,
        rows_set: &[u64],
        word: impl Fn(usize, usize) -> u64,
    ) -> (u32, u32) {
        if n <= 4 {
            // One chunk on the stack: the lanes' pockets, where this is a tenth of the cost.
            let (mut prev, mut cur) = ([Chunk::default()], [Chunk::default()]);
            self.count4_in(n, rows_set, word, &mut prev, &mut cur)
        } else {
            let chunks = n.div_ceil(4);
            let (mut prev, mut cur) = (
                std::mem::take(&mut self.prev4),
                std::mem::take(&mut self.cur4),
            );
            prev.clear();
            prev.resize(chunks, Chunk::default());
            cur.clear();
            cur.resize(chunks, Chunk::default());
            let got = self.count4_in(n, rows_set, word, &mut prev, &mut cur);
            (self.prev4, self.cur4) = (prev, cur);
            got
        }
    }

    /// [`RunLabel::count4_cycles`] with the chunks of the row above and of the current row in
    /// `prev` and `cur` (`n.div_ceil(4)` each).
    #[inline(always)]
    fn count4_in(
        &mut self,
        n: usize,
        rows_set: &[u64],
        word: impl Fn(usize, usize) -> u64,
        prev: &mut [Chunk],
        cur: &mut [Chunk],
    ) -> (u32, u32) {
        self.parent.clear();
        let (mut runs, mut merged, mut pairs) = (0u32, 0u32, 0u32);
        let mut last = usize::MAX;
        for (j, &bits) in rows_set.iter().enumerate() {
            let mut bits = bits;
            while bits != 0 {
                let y = 64 * j + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let (mut carry, mut acc) = (0u64, runs);
                for (c, ch) in cur.iter_mut().enumerate() {
                    for i in 0..4 {
                        let w = 4 * c + i;
                        let r = if w < n { word(y, w) } else { 0 };
                        ch.r[i] = r;
                        ch.st[i] = r & !((r << 1) | carry);
                        carry = r >> 63;
                        ch.pc[i] = acc;
                        acc += ch.st[i].count_ones();
                    }
                }
                if acc == runs {
                    continue;
                }
                self.parent.extend(runs..acc);
                if last.wrapping_add(1) == y {
                    let mut carry = 0u64;
                    for (cu, pv) in cur.iter().zip(prev.iter()) {
                        for i in 0..4 {
                            let o = cu.r[i] & pv.r[i];
                            let mut os = o & !((o << 1) | carry);
                            carry = o >> 63;
                            while os != 0 {
                                // Bits 0..=x of the word, x the overlap run's first column.
                                let upto = os ^ (os - 1);
                                os &= os - 1;
                                let a = pv.pc[i] + (pv.st[i] & upto).count_ones() - 1;
                                let b = cu.pc[i] + (cu.st[i] & upto).count_ones() - 1;
                                merged += self.link(a, b).is_some() as u32;
                                pairs += 1;
                            }
                        }
                    }
                }
                prev.copy_from_slice(cur);
                runs = acc;
                last = y;
            }
        }
        (runs - merged, pairs - merged)
    }

    /// Append the runs of one row (`word(i)` = word `i` of `n`) to `cur`, each a new node. A
    /// run crossing a word boundary is one run: the starts (a set bit whose lower neighbour,
    /// across words too, is clear) and the ends (upper neighbour clear) are taken in order,
    /// the `j`-th start with the `j`-th end, in loops whose trip counts are popcounts.
    #[inline(always)]
    fn runs_of(&mut self, n: usize, word: impl Fn(usize) -> u64) {
        // Starts not yet paired with their end (at most 33 at a time: a word holds 32 runs,
        // plus one open from the word before); kept in the scratch, not zeroed per row.
        let lo_at = &mut self.lo_at;
        let (mut nlo, mut nhi) = (0usize, 0usize);
        let mut below = 0u64;
        let mut w = word(0);
        for i in 0..n {
            let above = if i + 1 < n { word(i + 1) } else { 0 };
            let base = 64 * i as u32;
            let mut starts = w & !((w << 1) | (below >> 63));
            let mut ends = w & !((w >> 1) | (above << 63));
            for _ in 0..starts.count_ones() {
                lo_at[nlo % 64] = base + starts.trailing_zeros();
                starts &= starts - 1;
                nlo += 1;
            }
            for _ in 0..ends.count_ones() {
                let hi = base + ends.trailing_zeros();
                ends &= ends - 1;
                let lo = lo_at[nhi % 64];
                let id = self.parent.len() as u32;
                self.parent.push(id);
                self.size.push(hi - lo + 1);
                self.cur.push(Run { lo, hi, id });
                nhi += 1;
            }
            below = w;
            w = above;
        }
        debug_assert_eq!(nlo, nhi);
    }

    /// Union every run of `cur` with the runs of `prev` (the row above) it touches; returns the
    /// number of unions that merged two components. Both lists are in column order, so one
    /// merge-walk finds every touching pair.
    #[inline(always)]
    fn join(&mut self, dl: u32, dr: u32) -> u32 {
        let (mut i, mut j, mut merged) = (0, 0, 0);
        while i < self.prev.len() && j < self.cur.len() {
            let (a, b) = (self.prev[i], self.cur[j]);
            if a.lo <= b.hi + dl && b.lo <= a.hi + dr {
                merged += self.union(a.id, b.id) as u32;
            }
            // The run whose reach ends first cannot touch anything further along the other row.
            if a.hi + dr <= b.hi {
                i += 1;
            } else {
                j += 1;
            }
        }
        merged
    }

    #[inline(always)]
    fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let g = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = g;
            x = g;
        }
        x
    }

    /// Merge the components of `a` and `b`; `(root, child)` of the merge, or `None` if they
    /// were one already. Sizes are [`RunLabel::union`]'s to keep ([`RunLabel::count4`] has none).
    #[inline(always)]
    fn link(&mut self, a: u32, b: u32) -> Option<(u32, u32)> {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return None;
        }
        // The older node (smaller id) stays root: ids grow down the plane, so trees stay flat.
        let (r, c) = if ra < rb { (ra, rb) } else { (rb, ra) };
        self.parent[c as usize] = r;
        Some((r, c))
    }

    /// [`RunLabel::link`], adding the child's size to the root's; false if `a` and `b` were
    /// one component already.
    #[inline(always)]
    fn union(&mut self, a: u32, b: u32) -> bool {
        let Some((r, c)) = self.link(a, b) else {
            return false;
        };
        self.size[r as usize] += self.size[c as usize];
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oracle::{ByteGrid, metrics};
    use proptest::prelude::*;

    proptest! {
        /// Count and largest equal the scalar oracle's labelling on random sparse and dense
        /// grids, widths across word boundaries (runs that cross words, whole-word runs), all
        /// three connectivities, and with the empty-row hint both used and not.
        #[test]
        fn matches_the_oracle(seed: u64, rows in 1usize..150, cols in 1usize..400,
                              wall in 0u64..=64, conn in 0usize..3, hint: bool) {
            let conn = [Connectivity::Four, Connectivity::Eight, Connectivity::Six][conn];
            let mut g = ByteGrid::new(rows, cols);
            let mut x = seed | 1;
            for c in &mut g.cells {
                // xorshift: WALL with probability wall / 64.
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *c = ((x >> 58) < wall) as u8;
            }
            let n = cols.div_ceil(64);
            let mut pl = vec![0u64; rows * n];
            for y in 0..rows {
                for x in 0..cols {
                    if g.get(y, x) == 0 {
                        pl[y * n + x / 64] |= 1 << (x % 64);
                    }
                }
            }
            let (_, sizes) = metrics::components(&g, conn);
            let want = (sizes.len() as u32, sizes.iter().copied().max().unwrap_or(0));
            let mut set = vec![0u64; rows.div_ceil(64)];
            for y in 0..rows {
                if !hint || pl[y * n..(y + 1) * n].iter().any(|&w| w != 0) {
                    set[y / 64] |= 1 << (y % 64);
                }
            }
            let mut rl = RunLabel::default();
            let got = rl.label(n, conn, &set, |y, i| pl[y * n + i]);
            prop_assert_eq!(got, want);
            if conn == Connectivity::Four {
                // The same scratch, used by the other labeller in between.
                prop_assert_eq!(rl.count4(n, &set, |y, i| pl[y * n + i]), want.0);
                // Independent cycles = touching pairs - runs + components, the runs and pairs
                // counted cell by cell.
                let floor = |y: usize, x: usize| g.get(y, x) == 0;
                let (mut runs, mut pairs) = (0i64, 0i64);
                for y in 0..rows {
                    for x in 0..cols {
                        runs += (floor(y, x) && (x == 0 || !floor(y, x - 1))) as i64;
                        let both = |x: usize| y > 0 && floor(y, x) && floor(y - 1, x);
                        pairs += (both(x) && (x == 0 || !both(x - 1))) as i64;
                    }
                }
                let (c, cycles) = rl.count4_cycles(n, &set, |y, i| pl[y * n + i]);
                prop_assert_eq!(c, want.0);
                prop_assert_eq!(cycles as i64, pairs - runs + want.0 as i64);
            }
        }
    }
}
