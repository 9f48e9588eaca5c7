//! A set of `u64` as sorted, disjoint, non-adjacent half-open ranges: which chunks of a grid
//! point (or of a search) are done.
//!
//! Work is handed out in order, so the done set of a point is a few ranges with holes only where
//! chunks are in flight: its size stays small even for 2^50 chunks, where a `Vec<bool>` would not
//! fit in memory.

use std::ops::Range;

/// A set of `u64` kept as sorted, disjoint, non-adjacent half-open ranges (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RangeSet {
    /// Sorted, disjoint and non-adjacent (`a.end < b.start`), none empty.
    ranges: Vec<(u64, u64)>,
}

impl RangeSet {
    /// The empty set.
    pub fn new() -> RangeSet {
        RangeSet::default()
    }

    /// Rebuild from stored ranges, checking they are well formed and inside `0..bound`.
    pub fn from_ranges(ranges: Vec<(u64, u64)>, bound: u64) -> Result<RangeSet, String> {
        for (i, &(a, b)) in ranges.iter().enumerate() {
            if a >= b {
                return Err(format!("empty or reversed range {a}..{b}"));
            }
            if b > bound {
                return Err(format!("range {a}..{b} beyond {bound}"));
            }
            if i > 0 && ranges[i - 1].1 >= a {
                return Err(format!(
                    "ranges {}..{} and {a}..{b} overlap or are out of order",
                    ranges[i - 1].0,
                    ranges[i - 1].1
                ));
            }
        }
        Ok(RangeSet { ranges })
    }

    /// The ranges as `(start, end)` pairs, `end` exclusive: sorted, disjoint, non-adjacent.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    /// Whether the set has no element.
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Number of elements.
    pub fn len(&self) -> u64 {
        self.ranges.iter().map(|&(a, b)| b - a).sum()
    }

    /// Whether `x` is in the set.
    pub fn contains(&self, x: u64) -> bool {
        let i = self.ranges.partition_point(|&(_, b)| b <= x);
        self.ranges.get(i).is_some_and(|&(a, _)| a <= x)
    }

    /// Add `x`; returns false if it was already there.
    pub fn insert(&mut self, x: u64) -> bool {
        let i = self.ranges.partition_point(|&(_, b)| b < x);
        // ranges[i] is the first range that ends at or after x.
        if let Some(&(a, b)) = self.ranges.get(i) {
            if a <= x && x < b {
                return false;
            }
            if b == x {
                // Extends ranges[i] at its end; maybe joins ranges[i + 1].
                self.ranges[i].1 = x + 1;
                if let Some(&(na, nb)) = self.ranges.get(i + 1)
                    && na == x + 1
                {
                    self.ranges[i].1 = nb;
                    self.ranges.remove(i + 1);
                }
                return true;
            }
            if a == x + 1 {
                self.ranges[i].0 = x;
                return true;
            }
        }
        self.ranges.insert(i, (x, x + 1));
        true
    }

    /// The elements of `range` not in the set, in order (lazily).
    pub fn gaps(&self, range: Range<u64>) -> impl Iterator<Item = Range<u64>> + '_ {
        let mut at = range.start;
        let end = range.end;
        let mut i = self.ranges.partition_point(|&(_, b)| b <= at);
        std::iter::from_fn(move || {
            while at < end {
                match self.ranges.get(i) {
                    Some(&(a, b)) if a <= at => {
                        at = b;
                        i += 1;
                    }
                    Some(&(a, _)) => {
                        let gap = at..a.min(end);
                        at = a;
                        return Some(gap);
                    }
                    None => {
                        let gap = at..end;
                        at = end;
                        return Some(gap);
                    }
                }
            }
            None
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn behaves_like_a_bool_vector(xs in prop::collection::vec(0u64..200, 0..300)) {
            let mut set = RangeSet::new();
            let mut naive = [false; 200];
            for &x in &xs {
                prop_assert_eq!(set.insert(x), !naive[x as usize]);
                naive[x as usize] = true;
            }
            for x in 0..200u64 {
                prop_assert_eq!(set.contains(x), naive[x as usize]);
            }
            prop_assert_eq!(set.len(), naive.iter().filter(|&&d| d).count() as u64);
            let missing: Vec<u64> = set.gaps(0..200).flatten().collect();
            let expect: Vec<u64> = (0..200).filter(|&x| !naive[x as usize]).collect();
            prop_assert_eq!(missing, expect);
            let inner: Vec<u64> = set.gaps(50..120).flatten().collect();
            let expect: Vec<u64> = (50..120).filter(|&x| !naive[x as usize]).collect();
            prop_assert_eq!(inner, expect);
            // Canonical form round-trips through storage.
            let back = RangeSet::from_ranges(set.ranges().to_vec(), 200).unwrap();
            prop_assert_eq!(back, set.clone());
            for w in set.ranges().windows(2) {
                prop_assert!(w[0].1 < w[1].0);
            }
        }
    }

    #[test]
    fn bad_stored_ranges_are_refused() {
        assert!(RangeSet::from_ranges(vec![(3, 3)], 10).is_err());
        assert!(RangeSet::from_ranges(vec![(0, 4), (3, 6)], 10).is_err());
        assert!(RangeSet::from_ranges(vec![(5, 6), (0, 2)], 10).is_err());
        assert!(RangeSet::from_ranges(vec![(0, 11)], 10).is_err());
        assert!(RangeSet::from_ranges(vec![(0, 2), (4, 10)], 10).is_ok());
        let huge = RangeSet::from_ranges(vec![(0, 1 << 50)], u64::MAX).unwrap();
        assert_eq!(huge.len(), 1 << 50);
        assert_eq!(
            huge.gaps(0..(1 << 50) + 3).collect::<Vec<_>>(),
            vec![(1 << 50)..(1 << 50) + 3]
        );
    }
}
