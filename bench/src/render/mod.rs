//! The renderings of what the bench measured, apart from what measures it: the text report
//! ([`text`], one report or two side by side, one file a section), the tables of the other
//! results (the load curve's markdown, [`curve_table`]; findmax's text table,
//! [`findmax_table`]; the sweep's markdown, [`sweep_table`]; `doppio cost`'s table and its
//! `--check` verdict, [`cost_table`]), the SVG plots ([`svg`]) and the Prometheus exposition
//! served while a run goes ([`prometheus`]). Each figure's own text rows are the figure's
//! (`report::figure`); the text rendering lays them out.

pub(crate) mod cost_table;
pub(crate) mod curve_table;
pub(crate) mod findmax_table;
pub(crate) mod prometheus;
pub(crate) mod svg;
pub(crate) mod sweep_table;
pub(crate) mod text;
