//! The numbers random functions draw: the hash every draw comes from ([`mix`]), a uniform
//! float from it, and Zipf's rejection-inversion sampler with its constants.

pub(crate) use crate::workload::hash::mix;

/// A uniform float in [0, 1) from 53 bits of `h`.
pub(super) fn unit(h: u64) -> f64 {
    (h >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Zipf sampler constants, computed once at compile time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct ZipfConsts {
    n: f64,
    s: f64,
    h_integral_x1: f64,
    h_integral_n: f64,
    sc: f64,
}

impl ZipfConsts {
    pub(super) fn new(n: f64, s: f64) -> Self {
        let mut z = Self {
            n,
            s,
            h_integral_x1: 0.0,
            h_integral_n: 0.0,
            sc: 0.0,
        };
        z.h_integral_x1 = z.h_integral(1.5) - 1.0;
        z.h_integral_n = z.h_integral(n + 0.5);
        z.sc = 2.0 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2.0));
        z
    }

    /// The density's unnormalised value x^-s.
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }

    /// An antiderivative of `h`: (x^(1-s) - 1) / (1 - s), and ln x when s = 1.
    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        expm1_over_x((1.0 - self.s) * lx) * lx
    }

    fn h_integral_inverse(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (log1p_over_x(t) * x).exp()
    }
}

/// (e^x - 1) / x, continuous at 0.
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x / 2.0 * (1.0 + x / 3.0)
    }
}

/// ln(1 + x) / x, continuous at 0.
fn log1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x / 3.0)
    }
}

/// Rejection-inversion sampling of Zipf(n, s) over 1..=n (Hörmann and Derflinger, 1996):
/// exact, O(1) expected draws, no table. `u(k)` is the k-th uniform draw.
pub(super) fn zipf_sample(z: &ZipfConsts, u: impl Fn(u64) -> f64) -> i64 {
    for k in 0..64 {
        let v = z.h_integral_n + u(k) * (z.h_integral_x1 - z.h_integral_n);
        let x = z.h_integral_inverse(v);
        let kk = (x + 0.5).floor().clamp(1.0, z.n);
        if kk - x <= z.sc || v >= z.h_integral(kk + 0.5) - z.h(kk) {
            return kk as i64;
        }
    }
    // Acceptance is above 50 % per round: 64 rejections in a row do not happen in practice.
    1
}
