//! `doppio schema`: the workload's schema statements, run once.

use super::setup::{connect_options, first_driver, workload_of};
use crate::backend;
use crate::cli::Connect;
use crate::failure::Failure;

/// `doppio schema`: runs the workload's schema statements.
pub fn schema(c: &Connect) -> Result<(), Failure> {
    let workload = workload_of(c)?;
    let driver = first_driver(c)?;
    let b = backend::connect(driver, &connect_options(c, &[driver])?).map_err(Failure::Start)?;
    let result = b.execute_all(&workload.schema);
    b.shutdown();
    result.map_err(Failure::Schema)?;
    if !c.quiet {
        eprintln!(
            "schema of {}: {} statement(s) applied",
            workload.name,
            workload.schema.len()
        );
    }
    Ok(())
}
