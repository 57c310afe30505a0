//! The fast Walsh-Hadamard transform, shared by the families built on Hadamard matrices.
//!
//! The Sylvester Hadamard matrix of size `K = 2^m` has entries
//! `H[i][j] = (-1)^popcount(i & j)`; it is symmetric and `H H = K I`.

/// `H[i][j]`'s sign as a bit: 0 for +1, 1 for -1 (the parity of `i & j`).
#[inline]
pub fn hadamard_bit(i: u32, j: u32) -> u32 {
    (i & j).count_ones() & 1
}

/// `v <- H v` in place, unnormalized, for `v.len()` a power of two: `K log2 K` additions.
///
/// ```
/// use ldp_core::transform::walsh_hadamard;
/// let mut v = vec![1.0, 0.0, 0.0, 0.0];
/// walsh_hadamard(&mut v);
/// assert_eq!(v, vec![1.0, 1.0, 1.0, 1.0]); // the first column of H
/// walsh_hadamard(&mut v);
/// assert_eq!(v, vec![4.0, 0.0, 0.0, 0.0]); // H H = 4 I
/// ```
pub fn walsh_hadamard(v: &mut [f64]) {
    let n = v.len();
    assert!(
        n.is_power_of_two(),
        "the transform needs a power-of-two length"
    );
    let mut h = 1;
    while h < n {
        for block in v.chunks_exact_mut(2 * h) {
            let (left, right) = block.split_at_mut(h);
            for (a, b) in left.iter_mut().zip(right.iter_mut()) {
                let (x, y) = (*a, *b);
                *a = x + y;
                *b = x - y;
            }
        }
        h *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_transform_is_the_matrix_product() {
        let k = 16u32;
        let v: Vec<f64> = (0..k).map(|i| f64::from(i * i % 7) - 2.5).collect();
        let mut fast = v.clone();
        walsh_hadamard(&mut fast);
        for i in 0..k {
            let direct: f64 = (0..k)
                .map(|j| {
                    if hadamard_bit(i, j) == 0 {
                        v[j as usize]
                    } else {
                        -v[j as usize]
                    }
                })
                .sum();
            assert!((fast[i as usize] - direct).abs() < 1e-12);
        }
    }
}
