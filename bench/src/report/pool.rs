//! The arithmetic every figure shares: a total over the requests ([`per_req`]), and one
//! figure pooled over the loader machines of `doppio merge` ([`pooled`], [`pooled_opt`],
//! [`pooled_ratio`], [`missing_reason`]), over any part of a backend's entry (the whole
//! entry, or one figure's struct in [`super::figure`]).

/// One machine's share of a pooled figure: its report's file, its requests, and its figure.
pub type Part<'a, T> = (&'a str, u64, &'a T);

/// `x` over `requests` (0 without requests).
pub fn per_req(x: f64, requests: u64) -> f64 {
    if requests > 0 {
        x / requests as f64
    } else {
        0.0
    }
}

/// Sum of `f` over the machines, weighted by their requests, over all requests: the
/// figure of the pooled totals (each figure is a total divided by the machine's requests).
pub fn pooled<T>(parts: &[Part<'_, T>], f: impl Fn(&T) -> f64) -> f64 {
    let requests: u64 = parts.iter().map(|(_, n, _)| n).sum();
    if requests == 0 {
        return 0.0;
    }
    parts.iter().map(|(_, n, b)| f(b) * *n as f64).sum::<f64>() / requests as f64
}

/// [`pooled`] of a figure that may be missing: `None` when any machine lacks it.
pub fn pooled_opt<T>(parts: &[Part<'_, T>], f: impl Fn(&T) -> Option<f64>) -> Option<f64> {
    if parts.iter().any(|(_, _, b)| f(b).is_none()) {
        return None;
    }
    Some(pooled(parts, |b| f(b).unwrap_or(0.0)))
}

/// Requests per event (flush, read) of the pooled totals: total requests over the sum of
/// each machine's events (its requests over its ratio); `None` when any machine lacks it.
pub fn pooled_ratio<T>(parts: &[Part<'_, T>], f: impl Fn(&T) -> Option<f64>) -> Option<f64> {
    let mut events = 0.0;
    let mut requests = 0.0;
    for (_, n, b) in parts {
        let r = f(b).filter(|r| *r > 0.0)?;
        events += *n as f64 / r;
        requests += *n as f64;
    }
    (events > 0.0).then(|| requests / events)
}

/// Why a pooled figure is missing: the first machine's reason.
pub fn missing_reason<T>(
    parts: &[Part<'_, T>],
    counted: impl Fn(&T) -> bool,
    why: impl Fn(&T) -> Option<&String>,
) -> Option<String> {
    parts.iter().find(|(_, _, b)| !counted(b)).map(|(f, _, b)| {
        format!(
            "not counted on all machines ({f}: {})",
            why(b).map_or("not counted", String::as_str)
        )
    })
}
