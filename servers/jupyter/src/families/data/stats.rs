//! The statistics the data families compute their answers with, written out so each answer is
//! derived in Rust independently of the Python that solves it.

/// The sum of `values`.
pub(super) fn sum(values: &[f64]) -> f64 {
    values.iter().sum()
}

/// The mean of `values` (NaN when empty).
pub(super) fn mean(values: &[f64]) -> f64 {
    sum(values) / values.len() as f64
}

/// The median of `values` (NaN when empty).
pub(super) fn median(values: &[f64]) -> f64 {
    let sorted = sorted(values);
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// `values` in ascending order.
pub(super) fn sorted(values: &[f64]) -> Vec<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// The `q` quantile by linear interpolation between the closest ranks (numpy's and pandas'
/// default): position `q × (n − 1)` in the sorted values.
pub(super) fn quantile(values: &[f64], q: f64) -> f64 {
    let sorted = sorted(values);
    if sorted.is_empty() {
        return f64::NAN;
    }
    let position = q * (sorted.len() - 1) as f64;
    let low = position.floor() as usize;
    let high = (low + 1).min(sorted.len() - 1);
    sorted[low] + (sorted[high] - sorted[low]) * (position - low as f64)
}

/// The standard deviation with `ddof` degrees of freedom removed (0: population, 1: sample).
pub(super) fn sd(values: &[f64], ddof: usize) -> f64 {
    let m = mean(values);
    let squares: f64 = values.iter().map(|v| (v - m) * (v - m)).sum();
    (squares / (values.len() - ddof) as f64).sqrt()
}

/// Pearson's correlation of two equally long columns.
pub(super) fn pearson(x: &[f64], y: &[f64]) -> f64 {
    let (mx, my) = (mean(x), mean(y));
    let mut sxy = 0.0;
    let mut sxx = 0.0;
    let mut syy = 0.0;
    for (a, b) in x.iter().zip(y) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx) * (a - mx);
        syy += (b - my) * (b - my);
    }
    sxy / (sxx * syy).sqrt()
}

/// Ordinary least squares of `y` on the feature columns `xs`, with an intercept: the
/// intercept, then one coefficient per column. Solved from the centred normal equations by
/// Gaussian elimination with partial pivoting (the data are small and well conditioned).
pub(super) fn ols(xs: &[Vec<f64>], y: &[f64]) -> Vec<f64> {
    let k = xs.len();
    let means: Vec<f64> = xs.iter().map(|x| mean(x)).collect();
    let my = mean(y);
    // The augmented system [XᵀX | Xᵀy] of the centred data.
    let mut a = vec![vec![0.0; k + 1]; k];
    for i in 0..k {
        for j in 0..k {
            a[i][j] = xs[i]
                .iter()
                .zip(&xs[j])
                .map(|(p, q)| (p - means[i]) * (q - means[j]))
                .sum();
        }
        a[i][k] = xs[i]
            .iter()
            .zip(y)
            .map(|(p, q)| (p - means[i]) * (q - my))
            .sum();
    }
    for col in 0..k {
        let pivot = (col..k)
            .max_by(|&p, &q| a[p][col].abs().total_cmp(&a[q][col].abs()))
            .unwrap_or(col);
        a.swap(col, pivot);
        let pivot_row = a[col].clone();
        for (row, line) in a.iter_mut().enumerate() {
            if row != col {
                let factor = line[col] / pivot_row[col];
                for (x, p) in line.iter_mut().zip(&pivot_row).skip(col) {
                    *x -= factor * p;
                }
            }
        }
    }
    let coefficients: Vec<f64> = (0..k).map(|i| a[i][k] / a[i][i]).collect();
    let intercept = my
        - coefficients
            .iter()
            .zip(&means)
            .map(|(b, m)| b * m)
            .sum::<f64>();
    std::iter::once(intercept).chain(coefficients).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate_like_numpy() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.25), 1.75);
        assert_eq!(quantile(&v, 0.75), 3.25);
        assert_eq!(median(&v), 2.5);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
    }

    #[test]
    fn spreads_and_fits() {
        let v = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        assert!((sd(&v, 0) - 2.0).abs() < 1e-12);
        let x = vec![vec![0.0, 1.0, 2.0, 3.0], vec![1.0, 0.0, 1.0, 5.0]];
        let y: Vec<f64> = (0..4)
            .map(|i| 1.5 + 2.0 * x[0][i] - 0.5 * x[1][i])
            .collect();
        let fit = ols(&x, &y);
        for (got, want) in fit.iter().zip([1.5, 2.0, -0.5]) {
            assert!((got - want).abs() < 1e-9, "{fit:?}");
        }
        assert!((pearson(&x[0], &[0.0, 2.0, 4.0, 6.0]) - 1.0).abs() < 1e-12);
    }
}
