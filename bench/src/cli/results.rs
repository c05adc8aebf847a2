//! How results are fetched and consumed ([`ResultArgs`]), options `run`, `curve` and
//! `findmax` share.

use clap::Args as ClapArgs;

/// How results are fetched and consumed, the same for every backend (`run` and `findmax`).
#[derive(Debug, Clone, ClapArgs)]
pub(crate) struct ResultArgs {
    /// Rows per result page, the same for every backend; a result longer than a page is
    /// paged through to the end (one request in the report: all its pages).
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u32).range(1..=i32::MAX as i64))]
    pub(crate) page_size: u32,
    /// Neither iterate nor decode result rows (protocol-overhead studies): pages are still
    /// fetched to the end and their rows counted from the page headers.
    #[arg(long)]
    pub(crate) discard_results: bool,
}
