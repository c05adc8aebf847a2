//! `doppio profile convert`: a cassandra-stress user profile printed as the doppio TOML
//! workload it runs as, what could not be carried over listed on stderr.

use crate::cli::ProfileCommand;
use crate::failure::Failure;
use crate::workload::profile::{to_toml_all, Profile};
use crate::workload::WorkloadError;

/// Runs `doppio profile ...`.
pub fn profile(command: &ProfileCommand) -> Result<(), Failure> {
    match command {
        ProfileCommand::Convert { profile } => {
            let p = Profile::read_all(profile).map_err(WorkloadError::from)?;
            let (toml, notes) = to_toml_all(&p).map_err(WorkloadError::from)?;
            for n in &notes {
                eprintln!("note: {n}");
            }
            print!("{toml}");
            Ok(())
        }
    }
}
