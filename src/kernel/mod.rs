//! Step kernels: bit-parallel implementations of the passes, exact against `oracle`.

pub mod inplace;
pub mod tworadius;
