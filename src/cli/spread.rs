//! Order statistics of frame times (`springsim bench`).

/// Order statistics of the timed frames (ms): min, q1, median, q3, max and the mean; NaN when none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// Fastest.
    pub min: f64,
    /// First quartile.
    pub q1: f64,
    /// Median.
    pub median: f64,
    /// Third quartile.
    pub q3: f64,
    /// Slowest.
    pub max: f64,
    /// Mean.
    pub mean: f64,
}

impl Spread {
    /// The spread of `v`. Quantiles interpolate linearly between order statistics (q at position
    /// q·(n − 1) of the sorted values, as numpy's default).
    pub fn of(v: &[f64]) -> Spread {
        let mut s = v.to_vec();
        s.sort_by(f64::total_cmp);
        let q = |p: f64| {
            if s.is_empty() {
                return f64::NAN;
            }
            let x = p * (s.len() - 1) as f64;
            let (i, f) = (x.floor() as usize, x - x.floor());
            if i + 1 < s.len() {
                s[i] + f * (s[i + 1] - s[i])
            } else {
                s[i]
            }
        };
        let mean = if s.is_empty() { f64::NAN } else { s.iter().sum::<f64>() / s.len() as f64 };
        Spread { min: q(0.0), q1: q(0.25), median: q(0.5), q3: q(0.75), max: q(1.0), mean }
    }
}

#[cfg(test)]
mod tests {
    use super::Spread;

    #[test]
    fn spread_of_frame_times() {
        let s = Spread::of(&[5.0, 1.0, 4.0, 2.0, 3.0]);
        assert_eq!((s.min, s.q1, s.median, s.q3, s.max, s.mean), (1.0, 2.0, 3.0, 4.0, 5.0, 3.0));
        // even count: the median between the middle two, quartiles interpolated
        let s = Spread::of(&[4.0, 1.0, 3.0, 2.0]);
        assert_eq!((s.q1, s.median, s.q3), (1.75, 2.5, 3.25));
        let s = Spread::of(&[7.0]);
        assert_eq!((s.min, s.q1, s.median, s.q3, s.max), (7.0, 7.0, 7.0, 7.0, 7.0));
        assert!(Spread::of(&[]).median.is_nan());
    }
}
