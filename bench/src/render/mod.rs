//! The renderings of what the bench measured, apart from what measures it: the SVG plots
//! ([`svg`]) and the Prometheus exposition served while a run goes ([`prometheus`]). The
//! text report is still the report room's (`report::text`).

pub(crate) mod prometheus;
pub(crate) mod svg;
