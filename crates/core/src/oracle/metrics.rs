//! Byte-grid oracles for every measurement and post-step: plain BFS and brute-force loops over
//! [`ByteGrid`] cells, written for obviousness, not speed. The bit-plane code is tested against
//! them and the benchmarks compare with them; the production pipeline never calls them.

use std::collections::VecDeque;

use super::ByteGrid;
use crate::measure::{Connectivity, EMPTY_VALUES, MeasureConfig, Metric, PostStep, Values};

/// Equal metric values, as the oracle comparisons need them: the same doubles, or both empty
/// (NaN).
pub fn same_values(a: &Values, b: &Values) -> bool {
    a.iter()
        .zip(b)
        .all(|(x, y)| x == y || (x.is_nan() && y.is_nan()))
}

/// `name=value` for every metric, for a failing comparison's message.
pub fn show_values(v: &Values) -> String {
    Metric::ALL
        .iter()
        .map(|m| format!("{}={}", m.name(), v[m.index()]))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Neighbour offsets for a connectivity.
pub fn offsets(conn: Connectivity) -> &'static [(isize, isize)] {
    match conn {
        Connectivity::Four => &[(-1, 0), (1, 0), (0, -1), (0, 1)],
        // Golly's hexagonal neighbourhood: NE and SW are not neighbours.
        Connectivity::Six => &[(-1, -1), (-1, 0), (0, -1), (0, 1), (1, 0), (1, 1)],
        Connectivity::Eight => &[
            (-1, -1),
            (-1, 0),
            (-1, 1),
            (0, -1),
            (0, 1),
            (1, -1),
            (1, 0),
            (1, 1),
        ],
    }
}

fn floor(g: &ByteGrid, y: isize, x: isize) -> bool {
    y >= 0
        && x >= 0
        && (y as usize) < g.rows
        && (x as usize) < g.cols
        && g.get(y as usize, x as usize) == 0
}

/// BFS distances from `start` over FLOOR (`u32::MAX` = unreached; all unreached for a WALL start).
pub fn distances(g: &ByteGrid, start: (usize, usize), conn: Connectivity) -> Vec<u32> {
    let mut dist = vec![u32::MAX; g.rows * g.cols];
    if !floor(g, start.0 as isize, start.1 as isize) {
        return dist;
    }
    let mut q = VecDeque::new();
    dist[start.0 * g.cols + start.1] = 0;
    q.push_back(start);
    while let Some((y, x)) = q.pop_front() {
        let d = dist[y * g.cols + x];
        for &(dy, dx) in offsets(conn) {
            let (ny, nx) = (y as isize + dy, x as isize + dx);
            if floor(g, ny, nx) {
                let i = ny as usize * g.cols + nx as usize;
                if dist[i] == u32::MAX {
                    dist[i] = d + 1;
                    q.push_back((ny as usize, nx as usize));
                }
            }
        }
    }
    dist
}

/// Component label per cell (`u32::MAX` for WALL), labels in row-major order of first cells,
/// and the size of each component.
pub fn components(g: &ByteGrid, conn: Connectivity) -> (Vec<u32>, Vec<u32>) {
    let mut label = vec![u32::MAX; g.rows * g.cols];
    let mut sizes = Vec::new();
    for y in 0..g.rows {
        for x in 0..g.cols {
            if g.get(y, x) != 0 || label[y * g.cols + x] != u32::MAX {
                continue;
            }
            let l = sizes.len() as u32;
            let mut n = 0;
            let mut q = VecDeque::from([(y, x)]);
            label[y * g.cols + x] = l;
            while let Some((cy, cx)) = q.pop_front() {
                n += 1;
                for &(dy, dx) in offsets(conn) {
                    let (ny, nx) = (cy as isize + dy, cx as isize + dx);
                    if floor(g, ny, nx) {
                        let i = ny as usize * g.cols + nx as usize;
                        if label[i] == u32::MAX {
                            label[i] = l;
                            q.push_back((ny as usize, nx as usize));
                        }
                    }
                }
            }
            sizes.push(n);
        }
    }
    (label, sizes)
}

/// 4-adjacent (FLOOR, WALL) pairs inside the grid.
pub fn boundary(g: &ByteGrid) -> u64 {
    let mut n = 0;
    for y in 0..g.rows {
        for x in 0..g.cols {
            if x + 1 < g.cols && g.get(y, x) != g.get(y, x + 1) {
                n += 1;
            }
            if y + 1 < g.rows && g.get(y, x) != g.get(y + 1, x) {
                n += 1;
            }
        }
    }
    n
}

/// Largest k such that every cell with `in_comp` lies in an all-FLOOR k x k square (1 when no
/// cell does; the caller only asks for a non-empty FLOOR component).
///
/// Plainly, level by level: `ok[y][x]` says whether the k x k square with top-left `(y, x)`
/// lies inside the grid and is all FLOOR. For k = 1 that is the cell; a (k + 1)-square is the
/// union of the four k-squares at `(y, x)`, `(y + 1, x)`, `(y, x + 1)` and `(y + 1, x + 1)`. A
/// cell is covered when some square's top-left lies in the k x k window ending at the cell,
/// counted with a 2D prefix sum of `ok`. O(cells) per k. A search of every square per cell
/// (kept in measure/tests.rs as this oracle's own oracle) costs ~cells x k^3 on open grids, which
/// made the random measurement tests take from a fraction of a second to minutes.
pub fn min_width(g: &ByteGrid, in_comp: &[bool]) -> u32 {
    let (rows, cols) = (g.rows, g.cols);
    let mut ok: Vec<bool> = (0..rows * cols).map(|i| g.cells[i] == 0).collect();
    let covered = |ok: &[bool], k: usize| {
        // sum[(y) * (cols + 1) + x] = squares with top-left in rows < y, columns < x.
        let w = cols + 1;
        let mut sum = vec![0u32; (rows + 1) * w];
        for y in 0..rows {
            for x in 0..cols {
                sum[(y + 1) * w + x + 1] =
                    ok[y * cols + x] as u32 + sum[y * w + x + 1] + sum[(y + 1) * w + x]
                        - sum[y * w + x];
            }
        }
        (0..rows).all(|y| {
            (0..cols).all(|x| {
                let (y0, x0) = ((y + 1).saturating_sub(k), (x + 1).saturating_sub(k));
                let n = sum[(y + 1) * w + x + 1] + sum[y0 * w + x0]
                    - sum[y0 * w + x + 1]
                    - sum[(y + 1) * w + x0];
                !in_comp[y * cols + x] || n > 0
            })
        })
    };
    let mut k = 1;
    // Past the grid's smaller side no square fits (and an empty `in_comp` stops here too).
    while k < rows.min(cols) {
        // ok for k + 1 from ok for k (squares that would leave the grid are false).
        let next: Vec<bool> = (0..rows * cols)
            .map(|i| {
                let (y, x) = (i / cols, i % cols);
                y + 1 < rows
                    && x + 1 < cols
                    && ok[i]
                    && ok[i + 1]
                    && ok[i + cols]
                    && ok[i + cols + 1]
            })
            .collect();
        if !covered(&next, k + 1) {
            return k as u32;
        }
        ok = next;
        k += 1;
    }
    k as u32
}

/// Every metric of `cfg.metrics` by the oracles (same conventions as [`crate::measure::Measurer`]).
pub fn measure(g: &ByteGrid, cfg: &MeasureConfig) -> Values {
    let mut out = EMPTY_VALUES;
    let set = cfg.metrics;
    let conn = cfg.connectivity;
    let cells = (g.rows * g.cols) as f64;
    let walls = g.count_walls();
    let floor_n = (g.rows * g.cols) as u64 - walls;
    let frac = |n: u64| {
        if floor_n == 0 {
            0.0
        } else {
            n as f64 / floor_n as f64
        }
    };
    // Only what the requested metrics need, so benchmarks compare like with like.
    let sizes = if set.contains(Metric::Components) || set.contains(Metric::LargestFraction) {
        components(g, conn).1
    } else {
        Vec::new()
    };
    let (sy, sx) = cfg.spawn;
    let spawn_floor = sy < g.rows && sx < g.cols && g.get(sy, sx) == 0;
    let need_dist = [
        Metric::ConnectedFraction,
        Metric::PathLength,
        Metric::ReachDepth,
        Metric::MinWidth,
    ]
    .iter()
    .any(|&m| set.contains(m));
    let dist = if spawn_floor && need_dist {
        distances(g, (sy, sx), conn)
    } else {
        vec![u32::MAX; g.rows * g.cols]
    };
    let reach: Vec<bool> = dist.iter().map(|&d| d != u32::MAX).collect();
    for m in set.iter() {
        out[m.index()] = match m {
            Metric::WallFraction => walls as f64 / cells,
            Metric::FloorFraction => floor_n as f64 / cells,
            Metric::Components => sizes.len() as f64,
            Metric::LargestFraction => frac(sizes.iter().copied().max().unwrap_or(0) as u64),
            Metric::ConnectedFraction => frac(reach.iter().filter(|&&r| r).count() as u64),
            Metric::Boundary => boundary(g) as f64,
            Metric::PathLength => match cfg.exit {
                Some((ey, ex))
                    if ey < g.rows && ex < g.cols && dist[ey * g.cols + ex] != u32::MAX =>
                {
                    dist[ey * g.cols + ex] as f64
                }
                _ => f64::NAN,
            },
            Metric::ReachDepth => {
                if spawn_floor {
                    dist.iter()
                        .filter(|&&d| d != u32::MAX)
                        .max()
                        .copied()
                        .unwrap_or(0) as f64
                } else {
                    f64::NAN
                }
            }
            Metric::MinWidth => {
                if spawn_floor {
                    min_width(g, &reach) as f64
                } else {
                    0.0
                }
            }
        };
    }
    out
}

/// The post-step `step` on a byte grid, as `docs/variants.md` defines it: the oracle of
/// [`crate::measure::Measurer::apply_post`]. It draws from `rng` exactly what production draws (only
/// `bridge` draws: one `next_u32` per kept region, in component-numbering order), so given the
/// same stream both make the same grid and leave the stream in the same state.
pub fn apply_post<R: rand_core::Rng + ?Sized>(
    g: &mut ByteGrid,
    step: PostStep,
    conn: Connectivity,
    rng: &mut R,
) {
    match step {
        PostStep::KeepLargest => {
            let (label, sizes) = components(g, conn);
            // The first of the largest, in numbering order.
            let mut keep = None;
            for (l, &s) in sizes.iter().enumerate() {
                if keep.is_none_or(|k: usize| s > sizes[k]) {
                    keep = Some(l);
                }
            }
            for (c, &l) in g.cells.iter_mut().zip(&label) {
                if l != u32::MAX && Some(l as usize) != keep {
                    *c = 1;
                }
            }
        }
        PostStep::RemoveSmall(n) => {
            let (label, sizes) = components(g, conn);
            for (c, &l) in g.cells.iter_mut().zip(&label) {
                if l != u32::MAX && sizes[l as usize] < n {
                    *c = 1;
                }
            }
        }
        PostStep::Bridge => bridge(g, rng),
    }
}

/// NetHack's join, step by step as `docs/variants.md` lists it.
fn bridge<R: rand_core::Rng + ?Sized>(g: &mut ByteGrid, rng: &mut R) {
    let (label, sizes) = components(g, Connectivity::Eight);
    // Each component's cells in row-major order.
    let mut cells: Vec<Vec<(usize, usize)>> = vec![Vec::new(); sizes.len()];
    for y in 0..g.rows {
        for x in 0..g.cols {
            let l = label[y * g.cols + x];
            if l != u32::MAX {
                cells[l as usize].push((y, x));
            }
        }
    }
    // (column-major first cell as (x, y), chosen cell) per kept component.
    let mut kept: Vec<((usize, usize), (usize, usize))> = Vec::new();
    for comp in &cells {
        if comp.len() < 4 {
            for &(y, x) in comp {
                g.cells[y * g.cols + x] = 1;
            }
            continue;
        }
        let r = rng.next_u32() as u64;
        let rank = ((r * comp.len() as u64) >> 32) as usize;
        let key = comp.iter().map(|&(y, x)| (x, y)).min().expect("not empty");
        kept.push((key, comp[rank]));
    }
    kept.sort_by_key(|k| k.0);
    for pair in kept.windows(2) {
        let ((ya, xa), (yb, xb)) = (pair[0].1, pair[1].1);
        for x in xa.min(xb)..=xa.max(xb) {
            g.cells[ya * g.cols + x] = 0;
        }
        for y in ya.min(yb)..=ya.max(yb) {
            g.cells[y * g.cols + xb] = 0;
        }
    }
}
