//! The event loop a doppio backend runs on (glommio, or doppio's io_uring runtime with or
//! without SQPOLL) with its io_uring configuration, and how an idle shard waits, as CONFIG
//! shows it.

use std::time::Duration;

use doppio_driver::rt::Runtime;

use crate::backend::driver::Driver;
use crate::backend::options::ConnectOptions;

/// The event loop and io_uring configuration of a doppio backend.
pub(super) fn runtime_of(
    driver: Driver,
    o: &ConnectOptions,
) -> (Runtime, doppio_driver::rt::uring::Config) {
    let config = o
        .uring_wait
        .applied_to(doppio_driver::rt::uring::Config::default());
    match driver {
        // Not doppio (the caller connects only doppio's drivers here).
        Driver::Doppio | Driver::Scylla | Driver::Null => (Runtime::Glommio, config),
        Driver::DoppioUring => (Runtime::Uring, config),
        Driver::DoppioUringSqpoll => (
            Runtime::Uring,
            doppio_driver::rt::uring::Config {
                sqpoll: Some(doppio_driver::rt::uring::SqPoll {
                    idle: o.sqpoll.idle,
                    cpu: o.sqpoll.cpu,
                }),
                ..config
            },
        ),
    }
}

/// How an idle shard of `config` waits (on a kernel that has a minimum wait or not), as
/// CONFIG shows it beside the ring's flags.
pub(super) fn wait_text(
    config: &doppio_driver::rt::uring::Config,
    kernel_has_min_wait: bool,
) -> String {
    let us = |d: Duration| format!("{}us", d.as_micros());
    let batch = if config.batch_wait.is_zero() {
        "no batched wait".to_owned()
    } else {
        let by = match (config.kernel_min_wait, kernel_has_min_wait) {
            (false, _) => "in user space",
            (true, false) => "in user space (the kernel has no minimum wait)",
            (true, true) => "by the kernel's minimum wait",
        };
        format!("batched wait {} {by}", us(config.batch_wait))
    };
    format!("timer slack {}, {batch}", us(config.timer_slack))
}
