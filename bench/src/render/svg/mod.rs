//! The SVG plots: [`chart`], how every chart looks alike (palette, strokes, SI axes, the
//! legend beside the data); [`reports`], `doppio plot`'s run reports over time and findmax
//! reports against the target rate; [`sweep`], `doppio sweep`'s figures against
//! concurrency; [`curve`], the load curve of `doppio curve`.

pub(crate) mod chart;
pub(crate) mod curve;
pub(crate) mod reports;
pub(crate) mod sweep;
