//! The renderings of what the bench measured, apart from what measures it: the text report
//! ([`text`], one report or two side by side, one file a section), the SVG plots ([`svg`]),
//! the Prometheus exposition served while a run goes ([`prometheus`]) and `doppio cost`'s
//! table and `--check` verdict ([`cost_table`]). Each figure's own text rows are the
//! figure's (`report::figure`); the text rendering lays them out.

pub(crate) mod cost_table;
pub(crate) mod prometheus;
pub(crate) mod svg;
pub(crate) mod text;
