//! One run of a `doppio cost` scenario on one driver, in the process Valgrind watches: the
//! only place that picks a driver for it ([`doppio::cost`](super::doppio::cost) on the
//! simulated runtime, [`scylla_rust_driver::cost`](super::scylla_rust_driver::cost) on a current-thread tokio).

use std::net::SocketAddr;

use super::cost_scenario::Scenario;
use super::driver::Driver;

/// Runs `requests` requests of `scenario` on `driver` and returns the rows read. The scylla
/// backend needs the address of a stub in another process (`stub`); doppio serves one in
/// memory itself.
pub(crate) fn run(
    driver: Driver,
    scenario: Scenario,
    requests: u64,
    stub: Option<SocketAddr>,
) -> Result<u64, String> {
    match driver {
        Driver::Doppio => super::doppio::cost::run(scenario, requests),
        Driver::Scylla => {
            let stub = stub.ok_or("the scylla run needs --stub ADDR")?;
            super::scylla_rust_driver::cost::run(scenario, requests, stub)
        }
        other => Err(format!(
            "`doppio cost` measures doppio (on the simulated runtime) and scylla, not {}",
            other.name()
        )),
    }
}
