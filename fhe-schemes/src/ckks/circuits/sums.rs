//! Sums over slots: `log2(count)` rotations and additions, doubling the span each time.

use fhe_api::ckks::Ciphertext;
use fhe_api::error::{Error, Result};

use crate::ckks::evaluator::Evaluator;

/// The rotation steps [`Evaluator::rotate_and_sum`] needs for `stride` and `count`.
pub fn sum_rotations(stride: i64, count: usize) -> Vec<i64> {
    (0..count.trailing_zeros()).map(|t| stride << t).collect()
}

impl Evaluator {
    /// `sum_(k < count) rotate(x, k * stride)` (`count` a power of two): in every slot
    /// `j`, the sum of slots `j, j + stride, ..`. Keys: [`sum_rotations`].
    pub fn rotate_and_sum(&self, x: &Ciphertext, stride: i64, count: usize) -> Result<Ciphertext> {
        if !count.is_power_of_two() {
            return Err(Error::InvalidInput(format!("a sum over {count} rotations: a power of two")));
        }
        let mut acc = x.clone();
        for step in sum_rotations(stride, count) {
            let r = self.rotate(&acc, step)?;
            self.add_assign(&mut acc, &r)?;
        }
        Ok(acc)
    }

    /// Every slot holds the sum of the first `slots` slots (`slots` a power of two;
    /// `N/2` for full packing, or a sparse packing's count). Keys: `sum_rotations(1, slots)`.
    pub fn sum_slots(&self, x: &Ciphertext, slots: usize) -> Result<Ciphertext> {
        self.rotate_and_sum(x, 1, slots)
    }

    /// `sum_j a_j b_j` over `slots` slots, in every slot: one product (rescaled in either
    /// mode), then [`Evaluator::sum_slots`]. Complex slots are not conjugated.
    pub fn inner_product(&self, a: &Ciphertext, b: &Ciphertext, slots: usize) -> Result<Ciphertext> {
        self.sum_slots(&self.mul_rescale(a, b)?, slots)
    }
}
